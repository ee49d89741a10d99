"""What changed between two snapshots: rows per table, and cells with their old and new values.

Tables are compared by primary key (added, removed, and changed rows with the columns that
changed); a table without one is compared as a multiset of whole rows. The verdict is about
*cells* — model configuration × benchmark × metric × setup, one row of ``v_scores_canonical``,
the value an analysis reads — because that is what a downstream result depends on: paper 004
checks that its 586-row snapshot is a strict subset of the 605-row one with "all benchmark cells
observed in both snapshots exactly unchanged". Score rows keyed by ``source_row_key`` would be
the wrong unit: a second source for a cell adds a row without changing the cell, and a conflict
policy change alters cells without touching a row.
"""

from __future__ import annotations

import os
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.config import duckdb_config
from evalhouse.warehouse.snapshot.manifest import SnapshotError
from evalhouse.warehouse.snapshot.reader import relation_sql, scalar
from evalhouse.warehouse.snapshot.verify import require_verified
from evalhouse.warehouse.snapshot.write import quote_ident, quote_literal

CELL_KEY = ("config_id", "benchmark_id", "subset_key", "metric_id", "metric_params_key", "setup_key")
SUBSET = "A ⊂ B, all shared cells unchanged"
EQUAL = "A = B on cells: none added, removed or changed"


@dataclass
class TableDiff:
    name: str
    key: list[str]  # the primary key, or every shared column for a table without one
    added: int = 0
    removed: int = 0
    changed: int = 0
    changed_columns: dict[str, int] = field(default_factory=dict)
    only_in: str | None = None
    columns_added: list[str] = field(default_factory=list)
    columns_removed: list[str] = field(default_factory=list)
    examples: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    @property
    def differs(self) -> bool:
        return bool(
            self.added or self.removed or self.changed or self.only_in or self.columns_added or self.columns_removed
        )


@dataclass
class CellDiff:
    in_a: int
    in_b: int
    shared: int
    n_added: int
    n_removed: int
    n_changed: int
    added: list[dict[str, Any]]
    removed: list[dict[str, Any]]
    changed: list[dict[str, Any]]


@dataclass
class SnapshotDiff:
    a: dict[str, Any]
    b: dict[str, Any]
    tables: list[TableDiff]
    cells: CellDiff
    verdict: str
    subset_holds: bool  # A ⊆ B with every shared cell unchanged

    def as_dict(self) -> dict[str, Any]:
        return {
            "a": self.a,
            "b": self.b,
            "verdict": self.verdict,
            "subset_holds": self.subset_holds,
            "cells": asdict(self.cells),
            "tables": {t.name: {k: v for k, v in asdict(t).items() if k != "name"} for t in self.tables},
        }


def _shared_files(ea: dict[str, Any], eb: dict[str, Any], files_a: dict[str, Any], files_b: dict[str, Any]) -> set[str]:
    """Files at the same path with the same sha256 in both (verified): the same rows on both sides."""
    return {f for f in ea["files"] if f in eb["files"] and files_a[f]["sha256"] == files_b.get(f, {}).get("sha256")}


def _attach(con: duckdb.DuckDBPyConnection, roots: tuple[Path, Path], manifests: list[dict[str, Any]]) -> None:
    """``snap_a``/``snap_b``: every relation over its files *minus the files both hold unchanged*.

    Rows in a file both snapshots hold byte for byte are in both; with unique keys (or counted
    as a multiset) the difference of the rest is the difference of the whole, so only what
    changed is read. Derived views are left out: they are functions of the tables, diffed there.
    """
    (ra, rb), (ma, mb) = roots, manifests
    for schema, root, mine, other in (("snap_a", ra, ma, mb), ("snap_b", rb, mb, ma)):
        con.execute(f"CREATE SCHEMA {schema}")
        for name, entry in mine["tables"].items():
            if entry.get("derived"):
                continue
            theirs = other["tables"].get(name)
            same = _shared_files(entry, theirs, mine["files"], other["files"]) if theirs else set()
            delta = {**entry, "files": [f for f in entry["files"] if f not in same]}
            con.execute(f"CREATE VIEW {schema}.{quote_ident(name)} AS {relation_sql(root, delta)}")


def _rows(con: duckdb.DuckDBPyConnection, sql: str, limit: int | None) -> list[dict[str, Any]]:
    cur = con.execute(sql + (f" LIMIT {int(limit)}" if limit is not None else ""))
    names = [d[0] for d in cur.description]
    return [dict(zip(names, row, strict=True)) for row in cur.fetchall()]


def _count(con: duckdb.DuckDBPyConnection, sql: str) -> int:
    return int(scalar(con, f"SELECT count(*) FROM ({sql})"))


def _row_hash(columns: list[str]) -> str:
    return f"hash({', '.join(quote_ident(c) for c in columns)})" if columns else "0"


def _keyed_diff(con: duckdb.DuckDBPyConnection, td: TableDiff, columns: list[str], limit: int | None) -> None:
    """Rows added and removed by key; shared keys whose other columns differ, and which columns.

    One pass joins the two sides' keys with a hash of the other columns and keeps the keys that
    differ (a temporary table as large as the change, not the table); rows whose hashes differ
    are then compared column by column, so ``changed`` is exact. A changed row whose 64-bit hash
    is unchanged would be missed (about 1 in 10^13 at 10^6 rows).
    """
    t = quote_ident(td.name)
    keys = ", ".join(quote_ident(k) for k in td.key)
    order = f" ORDER BY {keys}"
    others = [c for c in columns if c not in td.key]
    h = _row_hash(others)
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE key_diff AS SELECT {keys}, "
        "CASE WHEN a.h IS NULL THEN 'added' WHEN b.h IS NULL THEN 'removed' ELSE 'changed' END AS status "
        f"FROM (SELECT {keys}, {h} AS h FROM snap_a.{t}) a FULL JOIN (SELECT {keys}, {h} AS h FROM snap_b.{t}) b "
        f"USING ({keys}) WHERE a.h IS DISTINCT FROM b.h"
    )
    counts = dict(con.execute("SELECT status, count(*) FROM key_diff GROUP BY status").fetchall())
    td.added, td.removed = counts.get("added", 0), counts.get("removed", 0)
    td.examples = {
        status: _rows(con, f"SELECT {keys} FROM key_diff WHERE status = '{status}'{order}", limit)
        if counts.get(status)
        else []
        for status in ("added", "removed")
    }
    if not counts.get("changed"):
        td.examples["changed"] = []
        return
    differs = [f"a.{quote_ident(c)} IS DISTINCT FROM b.{quote_ident(c)}" for c in others]
    flags = ", ".join(f"CASE WHEN {d} THEN {quote_literal(c)} END" for d, c in zip(differs, others, strict=True))
    candidates = f"(SELECT {keys} FROM key_diff WHERE status = 'changed')"
    con.execute(
        f"CREATE OR REPLACE TEMP TABLE changed_rows AS SELECT {keys}, "
        f"list_filter([{flags}], lambda x: x IS NOT NULL) AS changed_columns "
        f"FROM (SELECT * FROM snap_a.{t} SEMI JOIN {candidates} c USING ({keys})) a "
        f"JOIN (SELECT * FROM snap_b.{t} SEMI JOIN {candidates} c USING ({keys})) b USING ({keys}) "
        f"WHERE {' OR '.join(differs)}"
    )
    td.changed = _count(con, "SELECT * FROM changed_rows")
    td.changed_columns = dict(
        con.execute(
            "SELECT col, count(*) FROM (SELECT unnest(changed_columns) AS col FROM changed_rows) "
            "GROUP BY col ORDER BY col"
        ).fetchall()
    )
    td.examples["changed"] = _rows(con, f"SELECT * FROM changed_rows{order}", limit)


def _multiset_diff(con: duckdb.DuckDBPyConnection, td: TableDiff, columns: list[str], limit: int | None) -> None:
    """A table without a primary key: whole rows, counted with multiplicity."""
    t = quote_ident(td.name)
    cols = ", ".join(quote_ident(c) for c in columns)
    td.examples = {}
    for status, (one, other) in {"added": ("snap_b", "snap_a"), "removed": ("snap_a", "snap_b")}.items():
        con.execute(
            f"CREATE OR REPLACE TEMP TABLE rows_{status} AS "
            f"SELECT {cols} FROM {one}.{t} EXCEPT ALL SELECT {cols} FROM {other}.{t}"
        )
        td.examples[status] = _rows(con, f"SELECT * FROM rows_{status} ORDER BY ALL", limit)
    td.added = _count(con, "SELECT * FROM rows_added")
    td.removed = _count(con, "SELECT * FROM rows_removed")


def _table_diff(
    con: duckdb.DuckDBPyConnection,
    name: str,
    ea: dict[str, Any] | None,
    eb: dict[str, Any] | None,
    limit: int | None,
) -> TableDiff:
    if ea is None or eb is None:
        present = eb if ea is None else ea
        assert present is not None
        td = TableDiff(name, present["primary_key"], only_in="B" if ea is None else "A")
        if ea is None:
            td.added = present["rows"]
        else:
            td.removed = present["rows"]
        return td
    cols_a = [c for c, _ in ea["columns"]]
    cols_b = [c for c, _ in eb["columns"]]
    shared = [c for c in cols_b if c in cols_a]
    same_key = ea["primary_key"] == eb["primary_key"] and ea["primary_key"]
    td = TableDiff(
        name,
        list(eb["primary_key"]) if same_key else shared,
        columns_added=[c for c in cols_b if c not in cols_a],
        columns_removed=[c for c in cols_a if c not in cols_b],
    )
    if same_key:
        _keyed_diff(con, td, shared, limit)
    else:
        _multiset_diff(con, td, shared, limit)
    return td


def _cell_diff(con: duckdb.DuckDBPyConnection, sizes: tuple[int, int], limit: int | None) -> CellDiff:
    """Cells added, removed and changed (only those are kept), and how many each side holds."""
    con.execute(read_sql("evalhouse.warehouse", "snapshot_cells_diff.sql"))
    counts = dict(con.execute("SELECT status, count(*) FROM cell_diff GROUP BY status").fetchall())
    order = " ORDER BY " + ", ".join(CELL_KEY)
    key = ", ".join(CELL_KEY)

    def listed(status: str, cols: str) -> list[dict[str, Any]]:
        if not counts.get(status):
            return []
        return _rows(con, f"SELECT {key}, {cols} FROM cell_diff WHERE status = '{status}'{order}", limit)

    shared = sizes[0] - counts.get("removed", 0)
    return CellDiff(
        in_a=sizes[0],
        in_b=sizes[1],
        shared=shared,
        n_added=counts.get("added", 0),
        n_removed=counts.get("removed", 0),
        n_changed=counts.get("changed", 0),
        added=listed("added", "new_value AS value, new_unit AS unit"),
        removed=listed("removed", "old_value AS value, old_unit AS unit"),
        changed=listed("changed", "old_value, new_value, old_unit, new_unit"),
    )


def _cells_in(con: duckdb.DuckDBPyConnection, root: Path, manifest: dict[str, Any]) -> int:
    """Rows of the frozen ``v_scores_canonical`` (from the Parquet footers: nothing is scanned)."""
    return int(scalar(con, f"SELECT count(*) FROM ({relation_sql(root, manifest['tables']['v_scores_canonical'])})"))


def verdict(cells: CellDiff) -> tuple[str, bool]:
    """One line: whether A ⊆ B holds with every shared cell unchanged, and if not, what breaks it."""
    if not (cells.n_added or cells.n_removed or cells.n_changed):
        return EQUAL, True
    if not (cells.n_removed or cells.n_changed):
        return SUBSET, True
    breaks = []
    if cells.n_removed:
        breaks.append(f"{cells.n_removed:,} cell(s) of A are missing from B")
    if cells.n_changed:
        breaks.append(f"{cells.n_changed:,} shared cell(s) changed value")
    return "A ⊄ B: " + " and ".join(breaks), False


def _describe(root: Path, manifest: dict[str, Any]) -> dict[str, Any]:
    return {
        "path": str(root),
        "snapshot_id": manifest["snapshot_id"],
        "name": manifest.get("name"),
        "created_at": manifest.get("created_at"),
    }


def diff_snapshots(a: str | os.PathLike[str], b: str | os.PathLike[str], *, limit: int | None = None) -> SnapshotDiff:
    """Verify both snapshots, then compare every table and every cell of A against B.

    ``limit`` caps the example rows and cells listed per category (the counts are always exact).
    """
    roots = (Path(a).resolve(), Path(b).resolve())
    manifests = [require_verified(root).manifest for root in roots]
    for root, manifest in zip(roots, manifests, strict=True):
        if "v_scores_canonical" not in manifest["tables"]:
            raise SnapshotError(f"{root} has no v_scores_canonical, so it has no cells to compare")
    con = duckdb.connect(config=duckdb_config())
    try:
        con.execute("SET enable_progress_bar = false")  # it would print into --json output
        _attach(con, roots, manifests)
        ta = {n: e for n, e in manifests[0]["tables"].items() if e["kind"] == "table"}
        tb = {n: e for n, e in manifests[1]["tables"].items() if e["kind"] == "table"}
        tables = [_table_diff(con, n, ta.get(n), tb.get(n), limit) for n in sorted(set(ta) | set(tb))]
        sizes = (_cells_in(con, roots[0], manifests[0]), _cells_in(con, roots[1], manifests[1]))
        cells = _cell_diff(con, sizes, limit)
    finally:
        con.close()
    line, holds = verdict(cells)
    return SnapshotDiff(
        _describe(roots[0], manifests[0]), _describe(roots[1], manifests[1]), tables, cells, line, holds
    )
