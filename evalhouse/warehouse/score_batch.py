"""A batch of scores as columns: what varies per score in lists, the rest in three small tables.

A record's 25 results share its evaluation, source, model and attribution; results of one
canonical group share benchmark, metric and units; results of one cell share its setup. Building
a 40-column dict per score and converting it to Arrow cost more than everything else in a load,
so the loader appends only the per-score values here (ids, values, uncertainty, the value's own
canonicalisation step) with three small indexes, and :meth:`ScoreBatch.insert` joins the four in
DuckDB (``sql/insert_scores.sql``), which also derives the locator, the source row key and the
full canonicalisation chain. The rows are the ones :func:`evalhouse.warehouse.load_rows.score_row`
describes, column for column.
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import CanonicalScore
from evalhouse.curation.cells import Cell
from evalhouse.curation.registry import scale
from evalhouse.schema import records as R
from evalhouse.warehouse.arrow_columns import column
from evalhouse.warehouse.load_rows import RecordContext, dump, score_id

#: Per-score columns, in the order :meth:`ScoreBatch.add` appends them.
SCORE_COLUMNS = (
    "rec", "grp", "cell", "score_id", "fingerprint", "result_index", "evaluation_result_id", "source_record_id",
    "raw_value", "value", "stderr", "ci_lower", "ci_upper", "ci_level", "n_samples", "uncertainty",
    "llm_scoring", "value_step",
)  # fmt: skip
RECORD_COLUMNS = (
    "i", "evaluation_id", "source_key", "run_id", "config_id", "source_model_id", "source_model_name",
    "evaluated_by", "original_source", "original_source_url", "observed_at", "locator", "migration",
)  # fmt: skip
GROUP_COLUMNS = (
    "i", "benchmark_raw", "benchmark_id", "subset", "metric_raw", "metric_id", "raw_unit", "unit",
    "lower_is_better", "steps",
)  # fmt: skip
CELL_COLUMNS = ("i", "metric_params", "metric_params_key", "setup_key", "setup", "generation_config")


@cache
def _schemas() -> dict[str, pa.Schema]:
    """The Arrow schemas of the four batch tables (Arrow loads with the first batch, not at import)."""
    import pyarrow as pa  # noqa: PLC0415 - a quiet night (nothing to load) never needs Arrow or numpy

    def typed(columns: tuple[str, ...], types: dict[str, pa.DataType]) -> pa.Schema:
        return pa.schema([(c, types.get(c, pa.string())) for c in columns])

    ints = {c: pa.int64() for c in ("i", "rec", "grp", "cell", "score_id", "result_index", "n_samples")}
    floats = {c: pa.float64() for c in ("raw_value", "value", "stderr", "ci_lower", "ci_upper", "ci_level")}
    return {
        "records": typed(RECORD_COLUMNS, {"i": pa.int64(), "migration": pa.list_(pa.string()),
                                          "observed_at": pa.timestamp("us")}),
        "groups": typed(GROUP_COLUMNS, {"i": pa.int64(), "lower_is_better": pa.bool_(),
                                        "steps": pa.list_(pa.string())}),
        "cells": typed(CELL_COLUMNS, {"i": pa.int64()}),
        "scores": typed(SCORE_COLUMNS, ints | floats),
    }  # fmt: skip


def score_fingerprint(record_fingerprint: str, result_json: bytes) -> str:
    """sha256 of the record's fingerprint and the result's canonical JSON: stable across reparses."""
    return hashlib.sha256(record_fingerprint.encode() + b":" + result_json).hexdigest()


def value_step(c: CanonicalScore) -> str:
    """The value's own canonicalisation step, as the audit prints it."""
    if c.raw_unit == c.unit:
        return f"value {c.raw_value!r} {c.unit} kept as is"
    return f"{c.raw_value!r} {c.raw_unit} -> {c.value!r} {c.unit}"


class ScoreBatch:
    """The scores of one load batch, ready for one joined insert."""

    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []
        self.groups: list[tuple[Any, ...]] = []
        self.cells: list[tuple[Any, ...]] = []
        self.scores: list[tuple[Any, ...]] = []
        self._group_index: dict[tuple[Any, ...], int] = {}
        self._cell_index: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.scores)

    def add_record(self, ctx: RecordContext, locator: str) -> int:
        """Register the record whose results follow; returns its index in the batch."""
        m = ctx.model
        index = len(self.records)
        self.records.append(
            (
                index, ctx.eval_id, ctx.source_key, ctx.run_id, m.config_id, m.source_model_id,
                m.source_model_name or "", ctx.evaluated_by, ctx.details.get(R.ORIGINAL_SOURCE),
                ctx.details.get(R.ORIGINAL_SOURCE_URL), ctx.observed_at, locator, list(ctx.migration_steps),
            )
        )  # fmt: skip
        return index

    def _group(self, c: CanonicalScore) -> int:
        key = (c.benchmark_raw, c.benchmark_id, c.subset, c.metric_raw, c.metric_id, c.raw_unit, c.unit, c.steps)
        index = self._group_index.get(key)
        if index is None:
            index = self._group_index[key] = len(self.groups)
            self.groups.append(
                (index, c.benchmark_raw, c.benchmark_id, c.subset, c.metric_raw, c.metric_id, c.raw_unit, c.unit,
                 c.lower_is_better, list(c.steps))
            )  # fmt: skip
        return index

    def _cell(self, cell: Cell, generation_config: Any, harness: str | None) -> int:
        # cells come from the loader's cache, so one object per distinct cell and generation config
        index = self._cell_index.get(id(cell))
        if index is None:
            index = self._cell_index[id(cell)] = len(self.cells)
            setup = {**cell.setup, **({"harness": harness} if harness and "harness" not in cell.setup else {})}
            self.cells.append(
                (
                    index,
                    dump(cell.metric_params) if cell.metric_params else None,
                    cell.metric_params_key,
                    cell.setup_key,
                    dump(setup, sort_keys=True),
                    dump(generation_config) if generation_config else None,
                )
            )
        return index

    def add(  # noqa: PLR0913, PLR0917 - called once per score with what the row is made of
        self,
        rec: int,
        ctx: RecordContext,
        index: int,
        result: dict[str, Any],
        c: CanonicalScore,
        cell: Cell,
        fingerprint: str,
    ) -> None:
        """Append one canonical result of record ``rec`` (``fingerprint`` from :func:`score_fingerprint`)."""
        details = result["score_details"]
        unc = details.get("uncertainty") or {}
        se = (unc.get("standard_error") or {}).get("value")
        ci = unc.get("confidence_interval") or {}
        lower, upper = ci.get("lower"), ci.get("upper")
        llm = result["metric_config"].get("llm_scoring")
        record_id = (details.get("details") or {}).get(R.SOURCE_RECORD_ID)
        self.scores.append(
            (
                rec, self._group(c), self._cell(cell, result.get("generation_config"), ctx.harness),
                score_id(fingerprint), fingerprint, index, result.get("evaluation_result_id"),
                str(record_id or ""), c.raw_value, c.value,
                None if se is None else scale(se, c.factor),
                None if lower is None else scale(lower, c.factor),
                None if upper is None else scale(upper, c.factor),
                ci.get("confidence_level"), unc.get("num_samples"), dump(unc) if unc else None,
                dump(llm) if llm else None, value_step(c),
            )
        )  # fmt: skip

    def insert(self, con: duckdb.DuckDBPyConnection) -> None:
        """Insert the batch into ``score`` (one joined statement) and empty it."""
        if not self.scores:
            return
        import pyarrow as pa  # noqa: PLC0415 - see _schemas

        tables = {"records": self.records, "groups": self.groups, "cells": self.cells, "scores": self.scores}
        for name, rows in tables.items():
            schema = _schemas()[name]
            arrays = [column(col, schema.field(i).type) for i, col in enumerate(zip(*rows, strict=True))]
            con.register(f"_batch_{name}", pa.Table.from_arrays(arrays, schema=schema))
        try:
            con.execute(read_sql("evalhouse.warehouse", "insert_scores.sql"))
        finally:
            for name in tables:
                con.unregister(f"_batch_{name}")
        self.__init__()
