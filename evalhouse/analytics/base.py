"""The estimator contract every analysis follows, and the one builder of analysis records.

An analysis is an sklearn-style estimator: ``__init__`` only stores its parameters (never
mutated, ``random_state`` always one of them), ``fit`` returns ``self`` and sets fitted
attributes ending in ``_``. Every ``fit`` also sets ``record_``: an :class:`AnalysisRecord`
with the class, the parameters, the pin of the input (a snapshot id, a warehouse state id or a
file's sha256), a sha256 of the input values and index, and key diagnostics, so
``evalhouse.warehouse.analysis.record_analysis`` can store it in ``analysis_run``. A result that
cannot say what it was fitted on is not a result.

:func:`make_record` is the only place an :class:`AnalysisRecord` is assembled: estimators call
it through ``_finish``, and composite analyses (a reproduction, a grid, a task comparison) call it
with every input they read, whose hashes it chains.
"""

from __future__ import annotations

import hashlib
import json
import time
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Any

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from evalhouse.common.jsonable import to_jsonable
from evalhouse.errors import InputError
from evalhouse.schema.analysis import AnalysisRecord

__all__ = ["AnalysisEstimator", "AnalysisRecord", "Timer", "frame_records", "input_sha256", "make_record"]


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


class Timer:
    """Wall-clock start of a run: ``started_at`` (ISO, UTC) and ``elapsed()`` seconds."""

    def __init__(self) -> None:
        self.started_at = datetime.now(UTC).isoformat(timespec="seconds")
        self._t0 = time.perf_counter()

    def elapsed(self) -> float:
        return round(time.perf_counter() - self._t0, 6)


def make_record(  # noqa: PLR0913 - keyword-only settings of one analysis
    *,
    kind: str,
    estimator: str,
    params: Mapping[str, Any],
    inputs: Sequence[Any],
    timer: Timer,
    snapshot_id: str | None = None,
    diagnostics: Mapping[str, Any] | None = None,
) -> AnalysisRecord:
    """An :class:`AnalysisRecord` for a fit on ``inputs`` (one frame, or several whose hashes chain).

    ``snapshot_id`` defaults to ``inputs[0].attrs["snapshot_id"]`` (the pin frames read from a
    warehouse or snapshot carry); ``random_state`` is taken from ``params``.
    """
    if not inputs:
        raise InputError("an analysis record needs at least one input")
    first = inputs[0]
    if snapshot_id is None and isinstance(first, pd.DataFrame | pd.Series):
        snapshot_id = first.attrs.get("snapshot_id")
    digest = input_sha256(first)
    if len(inputs) > 1:
        digest = hashlib.sha256("".join(input_sha256(x) for x in inputs).encode()).hexdigest()
    plain = to_jsonable(dict(params))
    seed = plain.get("random_state")
    return AnalysisRecord(
        kind=kind,
        estimator=estimator,
        params=plain,
        snapshot_id=snapshot_id,
        input_sha256=digest,
        input_shape=list(np.shape(first)),
        random_state=seed if isinstance(seed, int) else None,
        started_at=timer.started_at,
        duration_s=timer.elapsed(),
        diagnostics=to_jsonable(dict(diagnostics or {})),
    )


def frame_records(frame: pd.DataFrame) -> list[dict[str, Any]]:
    """Rows of a result frame as strict-JSON dicts (a named index becomes a column)."""
    flat = frame if isinstance(frame.index, pd.RangeIndex) else frame.reset_index()
    return to_jsonable(flat.to_dict(orient="records"))


class AnalysisEstimator(BaseEstimator):
    """Base class: subclasses call ``self._start()`` first in ``fit`` and ``self._finish(X, ...)`` last.

    ``snapshot_id`` is read from ``X.attrs["snapshot_id"]`` when the input came from a snapshot
    or a warehouse (the frames of :mod:`evalhouse.analytics.data` carry it), or passed explicitly.
    """

    kind: str = "analysis"

    def _start(self) -> None:
        self._timer = Timer()

    def _finish(self, X: Any, *, snapshot_id: str | None = None, **diagnostics: Any) -> None:
        self.record_ = make_record(
            kind=self.kind,
            estimator=f"{type(self).__module__}.{type(self).__qualname__}",
            params=self.get_params(deep=False),
            inputs=[X],
            timer=getattr(self, "_timer", None) or Timer(),
            snapshot_id=snapshot_id,
            diagnostics=diagnostics,
        )
