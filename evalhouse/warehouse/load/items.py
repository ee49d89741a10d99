"""Bulk-loading item-level batches: items, checkpoints, harness runs and responses from Arrow.

Every table of an :class:`~evalhouse.schema.items.ItemBatch` is registered with DuckDB and
inserted with one ``INSERT … SELECT`` (never row by row), so a panel of 10⁷ responses loads in
seconds. The caller (``warehouse.load.ledger.run_load``) holds the transaction and writes the
``ingest_run`` row. Each response ends in exactly one place, and the report counts say so:

* loaded into ``item_response``;
* a duplicate: its harness run (``eval_run_id``) was loaded by an earlier run — logged once per
  harness run in ``curation_decision`` (kind ``exact_duplicate``);
* quarantined with its file and line: its item or checkpoint id is already in the warehouse with
  different content (identity is never merged), or its key repeats within the payload.
"""

from __future__ import annotations

import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

import duckdb

if TYPE_CHECKING:
    import pyarrow as pa

from evalhouse.schema import items as S
from evalhouse.schema.items import ItemBatch

RESPONSE_KEY = ("item_id", "checkpoint_id", "eval_run_id", "seed", "epoch")
#: Checkpoint facts that must agree when two payloads name the same checkpoint id.
CHECKPOINT_IDENTITY = ("suite", "checkpoint", "seed", "axis", "effort", "effort_unit")


@dataclass
class ItemLoadReport:
    batches: int = 0
    responses_read: int = 0
    responses_loaded: int = 0
    responses_duplicate: int = 0
    responses_quarantined: int = 0
    items_new: int = 0
    checkpoints_new: int = 0
    eval_runs_new: int = 0
    eval_runs_duplicate: int = 0
    unmapped_fields: set[str] = field(default_factory=set)
    reasons: Counter[str] = field(default_factory=Counter)

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in {"reasons", "unmapped_fields"}}
        d["unmapped_fields"] = sorted(self.unmapped_fields)
        d["quarantine_reasons"] = dict(self.reasons.most_common(20))
        return d


class ItemLoader:
    """Loads item batches of one run of one source into an open connection (inside a transaction)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, *, source_key: str, run_id: str) -> None:
        self.con = con
        self.source_key = source_key
        self.run_id = run_id
        self.report = ItemLoadReport()

    def load(self, batches: Iterable[ItemBatch], *, raw_sha256: str) -> ItemLoadReport:
        for batch in batches:
            self._load_batch(batch, batch.raw_sha256 or raw_sha256)
        return self.report

    # -- one batch --------------------------------------------------------------------------

    def _load_batch(self, batch: ItemBatch, raw_sha256: str) -> None:
        r = self.report
        r.batches += 1
        r.responses_read += batch.n_responses
        r.unmapped_fields.update(k for k, v in batch.field_map.items() if v == "unmapped")
        with _registered(self.con, "_b_item", batch.items), _registered(self.con, "_b_ckpt", batch.checkpoints):
            bad_items = self._conflicts("item", "_b_item", "item_id", ("content_sha256",))
            bad_ckpts = self._conflicts("checkpoint", "_b_ckpt", "checkpoint_id", CHECKPOINT_IDENTITY)
            r.items_new += self._insert_new("item", "_b_item", "item_id", S.ITEM_SCHEMA.names, first=True)
            r.checkpoints_new += self._insert_new(
                "checkpoint", "_b_ckpt", "checkpoint_id", S.CHECKPOINT_SCHEMA.names, first=True
            )
        with _registered(self.con, "_b_run", batch.eval_runs):
            seen_runs = self._column(
                "SELECT eval_run_id FROM eval_run WHERE eval_run_id IN (SELECT eval_run_id FROM _b_run)"
            )
            cols = ", ".join(S.EVAL_RUN_SCHEMA.names)
            inserted = self.con.execute(
                f"INSERT INTO eval_run ({cols}, source_key, run_id, raw_sha256)"
                f" SELECT {cols}, ?, ?, ? FROM (SELECT DISTINCT ON (eval_run_id) * FROM _b_run)"
                " WHERE eval_run_id NOT IN (SELECT eval_run_id FROM eval_run)",
                [self.source_key, self.run_id, raw_sha256],
            ).fetchall()
            r.eval_runs_new += int(inserted[0][0]) if inserted else 0
        self._batch_responses = batch.responses
        with _registered(self.con, "_b_resp", batch.responses):
            self._load_responses(batch, raw_sha256, bad_items, bad_ckpts, seen_runs)

    def _load_responses(
        self, batch: ItemBatch, raw_sha256: str, bad_items: set[str], bad_ckpts: set[str], seen_runs: set[str]
    ) -> None:
        r = self.report
        cols = ", ".join(batch.responses.column_names)
        prov = [self.source_key, self.run_id, raw_sha256]
        if seen_runs:
            n_dup = self._count(
                "SELECT count(*) FROM _b_resp WHERE eval_run_id IN (SELECT unnest(?::VARCHAR[]))", [sorted(seen_runs)]
            )
            r.responses_duplicate += n_dup
            r.eval_runs_duplicate += len(seen_runs)
            self._log_duplicates(batch, sorted(seen_runs), raw_sha256)
        fates = self._fates(bad_items, bad_ckpts, seen_runs)
        if fates is None:  # the common case: every row is new and sound
            self.con.execute(
                f"INSERT INTO item_response ({cols}, source_key, run_id, raw_sha256)"
                f" SELECT {cols}, ?, ?, ? FROM _b_resp",
                prov,
            )
            r.responses_loaded += batch.n_responses
            return
        self.con.execute(fates)
        try:
            self.con.execute(
                f"INSERT INTO item_response ({cols}, source_key, run_id, raw_sha256)"
                f" SELECT {cols}, ?, ?, ? FROM _fates WHERE _fate IS NULL",
                prov,
            )
            counts = dict(self.con.execute("SELECT _fate, count(*) FROM _fates GROUP BY ALL").fetchall())
            r.responses_loaded += int(counts.pop(None, 0))
            counts.pop("duplicate", None)
            for reason, n in counts.items():
                r.responses_quarantined += int(n)
                r.reasons[reason.split(":", maxsplit=1)[0][:80]] += int(n)
            self.con.execute(
                "INSERT INTO quarantine (run_id, source_key, raw_sha256, locator, stage, reason, payload)"
                " SELECT ?, ?, ?, locator || coalesce(':' || line, ''), 'load', _fate,"
                " to_json(struct_pack(item_id, checkpoint_id, eval_run_id, seed, epoch, p_correct))::VARCHAR"
                " FROM _fates WHERE _fate IS NOT NULL AND _fate <> 'duplicate'",
                prov,
            )
        finally:
            self.con.execute("DROP TABLE IF EXISTS _fates")

    def _fates(self, bad_items: set[str], bad_ckpts: set[str], seen_runs: set[str]) -> str | None:
        """SQL creating ``_fates`` (every response with NULL = load, or why not), or None if all load."""
        key = ", ".join(RESPONSE_KEY)
        repeated = _repeated_keys(self._batch_responses)
        if repeated is None:  # key columns not dictionary-encoded: let DuckDB count
            repeated = self._count(f"SELECT count(*) FROM (SELECT 1 FROM _b_resp GROUP BY {key} HAVING count(*) > 1)")
        if not (repeated or bad_items or bad_ckpts or seen_runs):
            return None
        lit = _sql_list
        return (
            "CREATE TEMP TABLE _fates AS SELECT *, CASE"
            f" WHEN eval_run_id IN ({lit(seen_runs)}) THEN 'duplicate'"
            f" WHEN item_id IN ({lit(bad_items)}) THEN 'item id already in the warehouse with different content:"
            " identities are never merged'"
            f" WHEN checkpoint_id IN ({lit(bad_ckpts)}) THEN 'checkpoint id already in the warehouse with different"
            " suite/seed/axis/effort: identities are never merged'"
            f" WHEN row_number() OVER (PARTITION BY {key} ORDER BY line) > 1 THEN"
            " 'repeated response key (item, checkpoint, run, seed, epoch) within the payload; the first is kept'"
            " END AS _fate FROM _b_resp"
        )

    # -- helpers ----------------------------------------------------------------------------

    def _conflicts(self, table: str, batch: str, key: str, facts: tuple[str, ...]) -> set[str]:
        """Ids whose facts differ from the warehouse's row, or between two rows of the batch."""
        differs = " OR ".join(f"b.{f} IS DISTINCT FROM e.{f}" for f in facts)
        within = " OR ".join(f"count(DISTINCT {f}) > 1" for f in facts)
        if table == "item":  # content hashes only conflict when both sides have one
            differs = (
                "(b.content_sha256 IS NOT NULL AND e.content_sha256 IS NOT NULL"
                " AND b.content_sha256 <> e.content_sha256)"
            )
        return self._column(
            f"SELECT b.{key} FROM {batch} b JOIN {table} e ON b.{key} = e.{key} WHERE {differs}"
            f" UNION SELECT {key} FROM {batch} GROUP BY {key} HAVING {within}"
        )

    def _insert_new(self, table: str, batch: str, key: str, names: list[str], *, first: bool) -> int:
        cols = ", ".join(names)
        extra = "first_source_key, first_run_id" if first else "source_key, run_id"
        rows = self.con.execute(
            f"INSERT INTO {table} ({cols}, {extra}) SELECT {cols}, ?, ? FROM"
            f" (SELECT DISTINCT ON ({key}) * FROM {batch}) WHERE {key} NOT IN (SELECT {key} FROM {table})",
            [self.source_key, self.run_id],
        ).fetchall()
        return int(rows[0][0]) if rows else 0

    def _log_duplicates(self, batch: ItemBatch, runs: list[str], raw_sha256: str) -> None:
        rows = [
            (
                "exact_duplicate",
                "eval_run_id: this harness run is already in the warehouse",
                json.dumps({"eval_run_id": run}),
                json.dumps({"locator": batch.locator, "raw_sha256": raw_sha256, "source_key": self.source_key}),
                self.run_id,
            )
            for run in runs
        ]
        self.con.executemany(
            "INSERT INTO curation_decision (kind, rule, subject, detail, run_id) VALUES (?, ?, ?, ?, ?)", rows
        )

    def _column(self, sql: str, params: list[Any] | None = None) -> set[str]:
        return {row[0] for row in self.con.execute(sql, params or []).fetchall()}

    def _count(self, sql: str, params: list[Any] | None = None) -> int:
        rows = self.con.execute(sql, params or []).fetchall()
        return int(rows[0][0]) if rows else 0


class _registered:
    """Register an Arrow table under a name for the duration of a ``with`` block."""

    def __init__(self, con: duckdb.DuckDBPyConnection, name: str, data: pa.Table) -> None:
        self.con, self.name, self.data = con, name, data

    def __enter__(self) -> None:
        self.con.register(self.name, self.data)

    def __exit__(self, exc_type: object, *exc: object) -> None:
        # After a failed statement the transaction is aborted and DuckDB refuses any further call;
        # the caller's rollback discards the registration with the rest, and the original error
        # must reach the run row instead of "transaction is aborted".
        if exc_type is None:
            self.con.unregister(self.name)


def _repeated_keys(responses: pa.Table) -> int | None:
    """How many response keys repeat, counted on integer codes (numpy) when every text key column is
    dictionary-encoded (the panel parsers and the simulator produce such batches); None otherwise.

    A GROUP BY over 10⁷ text keys holds a hash table of them all; one sort of int64 codes does not.
    """
    import numpy as np  # noqa: PLC0415 - loaded with item data, not with every refresh
    import pyarrow as pa  # noqa: PLC0415 - loaded with item data, not with every refresh

    codes = np.zeros(responses.num_rows, dtype=np.int64)
    for name in RESPONSE_KEY:
        col = responses.column(name).combine_chunks()
        if pa.types.is_dictionary(col.type):
            col = col.unify_dictionaries() if hasattr(col, "unify_dictionaries") else col
            values = np.asarray(col.indices.fill_null(-1), dtype=np.int64)
            span = len(col.dictionary) + 1
        elif pa.types.is_integer(col.type):
            values = np.asarray(col.fill_null(-1), dtype=np.int64)
            values = values - values.min() if len(values) else values
            span = int(values.max()) + 1 if len(values) else 1
        else:
            return None
        if span and codes.size and (np.iinfo(np.int64).max // span) < int(codes.max()) + 1:
            return None  # the mixed-radix code would overflow
        codes = codes * span + values + (1 if pa.types.is_dictionary(col.type) else 0)
    return int(codes.size - np.unique(codes).size)


def _sql_list(values: set[str]) -> str:
    if not values:
        return "NULL"
    return ", ".join("'" + v.replace("'", "''") + "'" for v in sorted(values))


#: Tables whose rows a source's parser produced (removed before a reparse rebuilds them).
ITEM_PARSED_TABLES = ("item_response", "eval_run")
