"""A batch of scores as columns: what varies per score in lists, the rest in three small tables.

A record's 25 results share its evaluation, source, model and attribution (columns of its
``evaluation`` row); results of one canonical group share benchmark, metric and units
(``score_group``); results of one setup share metric parameters, setup and generation config
(``score_setup``). The loader appends only the per-score values here (ids, values, uncertainty)
with three small indexes, and :meth:`ScoreBatch.insert` writes the batch's new groups and setups
and its ``score_value`` rows in DuckDB (``warehouse/sql/insert_scores.sql``), which also derives
the source row key. The ``score`` view joins them back (``warehouse/views/score.sql``, migration
0080).
"""

from __future__ import annotations

import hashlib
from functools import cache
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import CanonicalGroup
from evalhouse.curation.cells import Cell
from evalhouse.errors import WarehouseError
from evalhouse.schema import records as R
from evalhouse.warehouse.arrow_columns import column
from evalhouse.warehouse.load.rows import RecordContext, dump, score_id

#: Per-score columns, in the order :meth:`ScoreBatch.add` appends them.
SCORE_COLUMNS = (
    "rec", "grp", "cell", "score_id", "fingerprint", "result_index", "evaluation_result_id", "source_record_id",
    "raw_value", "value", "stderr", "ci_lower", "ci_upper", "ci_level", "n_samples", "uncertainty",
    "llm_scoring",
)  # fmt: skip
RECORD_COLUMNS = (
    "i", "evaluation_id", "source_key", "config_id", "source_model_id", "source_model_name", "original_source",
    "original_source_url",
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
        "records": typed(RECORD_COLUMNS, {"i": pa.int64()}),
        "groups": typed(GROUP_COLUMNS, {"i": pa.int64(), "lower_is_better": pa.bool_(),
                                        "steps": pa.list_(pa.string())}),
        "cells": typed(CELL_COLUMNS, {"i": pa.int64()}),
        "scores": typed(SCORE_COLUMNS, ints | floats),
    }  # fmt: skip


def score_fingerprint(record_fingerprint: str, result_json: bytes) -> str:
    """sha256 of the record's fingerprint and the result's canonical JSON: stable across reparses."""
    return hashlib.sha256(record_fingerprint.encode() + b":" + result_json).hexdigest()


class ScoreBatch:
    """The scores of one load batch, ready for one joined insert."""

    def __init__(self) -> None:
        self.records: list[tuple[Any, ...]] = []
        self.groups: list[tuple[Any, ...]] = []
        self.cells: list[tuple[Any, ...]] = []
        self.scores: list[tuple[Any, ...]] = []
        self._group_index: dict[int, int] = {}
        self._kept: list[CanonicalGroup] = []  # the groups indexed by id(), alive while the batch is
        self._cell_index: dict[int, int] = {}

    def __len__(self) -> int:
        return len(self.scores)

    def add_record(self, ctx: RecordContext) -> int:
        """Register the record whose results follow; returns its index in the batch."""
        m = ctx.model
        index = len(self.records)
        self.records.append(
            (
                index, ctx.eval_id, ctx.source_key, m.config_id, m.source_model_id, m.source_model_name or "",
                ctx.details.get(R.ORIGINAL_SOURCE), ctx.details.get(R.ORIGINAL_SOURCE_URL),
            )
        )  # fmt: skip
        return index

    def _group(self, g: CanonicalGroup) -> int:
        # groups come from the canonicaliser's cache: one object per distinct group (and two groups
        # with the same columns are one row once inserted: their id is their content's)
        index = self._group_index.get(id(g))
        if index is None:
            index = self._group_index[id(g)] = len(self.groups)
            self._kept.append(g)
            self.groups.append(
                (index, g.benchmark_raw, g.benchmark_id, g.subset, g.metric_raw, g.metric_id, g.raw_unit, g.unit,
                 g.lower_is_better, list(g.steps))
            )  # fmt: skip
        return index

    def _cell(self, cell: Cell, generation_config: Any) -> int:
        # cells come from the loader's cache, so one object per distinct cell and generation config
        index = self._cell_index.get(id(cell))
        if index is None:
            index = self._cell_index[id(cell)] = len(self.cells)
            self.cells.append(
                (
                    index,
                    dump(cell.metric_params) if cell.metric_params else None,
                    cell.metric_params_key,
                    cell.setup_key,
                    dump(cell.setup, sort_keys=True),
                    dump(generation_config) if generation_config else None,
                )
            )
        return index

    def add(  # noqa: PLR0913, PLR0917 - called once per score with what the row is made of
        self,
        rec: int,
        index: int,
        result: dict[str, Any],
        group: CanonicalGroup,
        raw_value: float,
        value: float,
        cell: Cell,
        fingerprint: str,
    ) -> None:
        """Append result ``index`` of record ``rec``, canonical in ``group`` with ``value``
        (``fingerprint`` from :func:`score_fingerprint`)."""
        details = result["score_details"]
        unc = details.get("uncertainty") or {}
        if unc:
            se = (unc.get("standard_error") or {}).get("value")
            ci = unc.get("confidence_interval") or {}
            lower, upper, level, n = (
                ci.get("lower"),
                ci.get("upper"),
                ci.get("confidence_level"),
                unc.get("num_samples"),
            )
            scaling = group.scaling
            se, lower, upper = (None if v is None else scaling(v) for v in (se, lower, upper))
        else:
            se = lower = upper = level = n = None
        llm = result["metric_config"].get("llm_scoring")
        inner = details.get("details")
        record_id = inner.get(R.SOURCE_RECORD_ID) if inner else None
        self.scores.append(
            (
                rec, self._group(group), self._cell(cell, result.get("generation_config")),
                score_id(fingerprint), fingerprint, index, result.get("evaluation_result_id"),
                str(record_id or ""), raw_value, value, se, lower, upper, level, n, dump(unc) if unc else None,
                dump(llm) if llm else None,
            )
        )  # fmt: skip

    def insert(self, con: duckdb.DuckDBPyConnection) -> None:
        """Insert the batch into ``score`` (one joined statement) and empty it."""
        if not self.scores:
            return
        import pyarrow as pa  # noqa: PLC0415 - see _schemas

        def table(name: str, rows: list[tuple[Any, ...]]) -> pa.Table:
            schema = _schemas()[name]
            arrays = [column(col, schema.field(i).type) for i, col in enumerate(zip(*rows, strict=True))]
            return pa.Table.from_arrays(arrays, schema=schema)

        # The SQL reads these Arrow tables by their variable names (DuckDB's replacement scan). A
        # table registered inside a transaction stays alive until the transaction ends, even after
        # unregister: a collection's batches (its records' JSON among them) were held twice over.
        _batch_records = table("records", self.records)
        _batch_groups = table("groups", self.groups)
        _batch_cells = table("cells", self.cells)
        _batch_scores = table("scores", self.scores)
        con.execute(read_sql("evalhouse.warehouse", "insert_scores.sql"))
        clashes = con.execute(read_sql("evalhouse.warehouse", "score_id_collisions.sql")).fetchall()
        if clashes:
            raise WarehouseError(
                f"content ids name different content in the warehouse ({clashes[:3]}): two different canonical "
                "groups or setups would become one; nothing of this load is kept"
            )
        self.__init__()
