"""The estimator contract every analysis follows.

An analysis is an sklearn-style estimator: ``__init__`` only stores its parameters (never
mutated, ``random_state`` always one of them), ``fit`` returns ``self`` and sets fitted
attributes ending in ``_``. Every ``fit`` also sets ``record_``: an :class:`AnalysisRecord`
with the class, the parameters, the snapshot id of the input, a sha256 of the input values
and index, and key diagnostics, so ``evalhouse.warehouse.analysis.record_analysis`` can
store it in ``analysis_run``. A result that cannot say what it was fitted on is not a result.
"""

from __future__ import annotations

import hashlib
import json
import time
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from evalhouse.common.jsonable import to_jsonable
from evalhouse.schema.analysis import AnalysisRecord

__all__ = ["AnalysisEstimator", "AnalysisRecord", "input_sha256"]


def input_sha256(X: Any) -> str:
    """sha256 over the values (float64, NaN kept), the index and the columns of ``X``."""
    h = hashlib.sha256()
    if isinstance(X, pd.DataFrame | pd.Series):
        frame = X.to_frame() if isinstance(X, pd.Series) else X
        h.update(json.dumps([str(i) for i in frame.index]).encode())
        h.update(json.dumps([str(c) for c in frame.columns]).encode())
        values = frame.to_numpy(dtype=float, na_value=np.nan)
    else:
        values = np.asarray(X, dtype=float)
    h.update(str(values.shape).encode())
    h.update(np.ascontiguousarray(values).tobytes())
    return h.hexdigest()


class AnalysisEstimator(BaseEstimator):
    """Base class: subclasses call ``self._start()`` first in ``fit`` and ``self._finish(X, ...)`` last.

    ``snapshot_id`` is read from ``X.attrs["snapshot_id"]`` when the input came from a snapshot
    (``evalhouse.open_snapshot`` matrices carry it), or passed to ``fit`` explicitly.
    """

    kind: str = "analysis"

    def _start(self) -> None:
        self._t0 = time.perf_counter()
        self._started_at = datetime.now(UTC).isoformat(timespec="seconds")

    def _finish(self, X: Any, *, snapshot_id: str | None = None, **diagnostics: Any) -> None:
        if snapshot_id is None and isinstance(X, pd.DataFrame | pd.Series):
            snapshot_id = X.attrs.get("snapshot_id")
        shape = list(np.shape(X))
        params = to_jsonable(self.get_params(deep=False))
        self.record_ = AnalysisRecord(
            kind=self.kind,
            estimator=f"{type(self).__module__}.{type(self).__qualname__}",
            params=params,
            snapshot_id=snapshot_id,
            input_sha256=input_sha256(X),
            input_shape=shape,
            random_state=params.get("random_state") if isinstance(params, dict) else None,
            started_at=getattr(self, "_started_at", datetime.now(UTC).isoformat()),
            duration_s=round(time.perf_counter() - getattr(self, "_t0", time.perf_counter()), 6),
            diagnostics=to_jsonable(diagnostics),
        )
