"""What one analysis fit was: the row an estimator leaves in ``analysis_run``.

An estimator's ``record_`` says what was fitted on what — class, parameters, input hash,
snapshot id — so a figure in a report can be traced to the exact fit and snapshot that produced
it. It lives here, with the other row schemas, so the warehouse can store it without knowing the
estimators.
"""

from __future__ import annotations

import hashlib
import json
from typing import Any

from pydantic import BaseModel, Field

from evalhouse.common.jsonable import to_jsonable
from evalhouse.version import __version__


class AnalysisRecord(BaseModel):
    """What one ``fit`` was: enough to find, reproduce and compare it."""

    kind: str
    estimator: str
    evalhouse_version: str = __version__
    params: dict[str, Any]
    snapshot_id: str | None = None
    input_sha256: str
    input_shape: list[int]
    random_state: int | None = None
    started_at: str
    duration_s: float
    diagnostics: dict[str, Any] = Field(default_factory=dict)

    @property
    def run_id(self) -> str:
        """Deterministic id: same estimator, parameters, input and snapshot give the same id."""
        key = json.dumps(
            [self.estimator, to_jsonable(self.params), self.snapshot_id, self.input_sha256],
            sort_keys=True,
            default=str,
        )
        return hashlib.sha256(key.encode()).hexdigest()[:16]
