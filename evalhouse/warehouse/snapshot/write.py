"""Writing a snapshot's Parquet in bounded memory: one sorted ``COPY`` per chunk of a key range.

DuckDB sorts a ``COPY ... ORDER BY`` in memory, and its partitioned writer holds every partition's
open row group until the end, so one ``COPY`` of a 10^6-row table costs about 1 GB. A large
relation is therefore written in chunks of about :data:`CHUNK_ROWS` rows: the ranges of its first
key column cut at exact quantiles (``quantile_disc``, so the cuts are a function of the data and
the bytes stay reproducible), each range sorted and written on its own as
``<name>[/<partition>]/data_<j>.parquet``. Reading the files in name order gives the rows in key
order, as one ``COPY`` would.

A view can be computed per chunk too when its rows for a range of one input column depend only
on the input rows in that range (:data:`LOCAL_VIEWS`): the input table is narrowed to each range
in turn and the view's own SQL runs over it, so the window functions and aggregates of
``v_scores_canonical`` hold a quarter of the scores at a time instead of all of them.
"""

from __future__ import annotations

import itertools
import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import duckdb

CHUNK_ROWS = 250_000
#: Key column types whose quantiles are written back into SQL as literals (others: one chunk).
CHUNKABLE_TYPES = frozenset({"BIGINT", "INTEGER", "SMALLINT", "VARCHAR"})


@dataclass(frozen=True)
class LocalView:
    """A view computable per range of ``table.column``.

    It holds when every window partition and group of the view's SQL is within one value of
    ``column``: ``v_scores_canonical`` groups and ranks by cell, and a cell has one model
    configuration; the one window that does not partition by ``config_id``, the supersession in
    ``v_score_current``, partitions by ``score.source_row_key``, so each such key must belong to one
    configuration (``same_within``), which is checked on the data before chunking (else one chunk).
    A test computes the view both ways on the real data and compares.
    """

    table: str
    column: str
    same_within: tuple[str, ...]


LOCAL_VIEWS = {"v_scores_canonical": LocalView("score", "config_id", ("source_row_key",))}


def quote_ident(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


def quote_literal(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def _literal(value: Any) -> str:
    return str(int(value)) if isinstance(value, int) else quote_literal(str(value))


def range_predicates(con: duckdb.DuckDBPyConnection, source: str, column: str, rows: int) -> list[str]:
    """SQL predicates on ``column`` that cut ``source`` into ranges of about CHUNK_ROWS rows each."""
    pieces = -(-rows // CHUNK_ROWS)
    if pieces <= 1:
        return ["true"]
    fractions = ", ".join(f"{i / pieces!r}" for i in range(1, pieces))
    col = quote_ident(column)
    cuts, top = con.execute(f"SELECT quantile_disc({col}, [{fractions}]), max({col}) FROM {source}").fetchall()[0]
    bounds = sorted({c for c in cuts or [] if c is not None and c < top})  # no empty last range
    if not bounds:
        return ["true"]
    edges = [_literal(b) for b in bounds]
    preds = [f"{col} <= {edges[0]}"]
    preds += [f"{col} > {lo} AND {col} <= {hi}" for lo, hi in itertools.pairwise(edges)]
    preds.append(f"{col} > {edges[-1]}")
    return preds


def file_labels(n: int) -> list[str]:
    """``data_0`` ... with a fixed width, so name order is chunk order (one chunk: ``data_0``)."""
    width = len(str(n - 1))
    return [f"data_{j:0{width}d}" for j in range(n)]


def copy_chunks(  # noqa: PLR0913 - one COPY's parts, each its own argument
    con: duckdb.DuckDBPyConnection,
    select_sql: str,
    order_by: str,
    target: Path,
    options: str,
    *,
    predicates: list[str],
    partition_by: str | None = None,
) -> None:
    """``COPY (select_sql WHERE predicate ORDER BY order_by)`` once per predicate under ``target``.

    Unpartitioned: ``target/data_<j>.parquet``. Partitioned: each chunk goes to a scratch folder
    through DuckDB's hive writer and its files move to ``target/<col>=<value>/data_<j>.parquet``.
    """
    target.mkdir(parents=True, exist_ok=True)
    for label, pred in zip(file_labels(len(predicates)), predicates, strict=True):
        query = f"SELECT * FROM ({select_sql}) WHERE {pred} ORDER BY {order_by}"
        if not partition_by:
            con.execute(f"COPY ({query}) TO {quote_literal(str(target / f'{label}.parquet'))} ({options})")
            continue
        scratch = target.parent / f".{target.name}.{label}"
        try:
            con.execute(
                f"COPY ({query}) TO {quote_literal(str(scratch))} "
                f"({options}, PARTITION_BY ({quote_ident(partition_by)}), FILENAME_PATTERN 'part_{{i}}')"
            )
            for written in sorted(scratch.rglob("*.parquet")):
                rel = written.relative_to(scratch)
                if rel.name != "part_0.parquet":  # one file per partition and COPY, as asked
                    raise RuntimeError(f"unexpected file {rel} from a partitioned COPY")
                (target / rel.parent).mkdir(parents=True, exist_ok=True)
                written.rename(target / rel.parent / f"{label}.parquet")
        finally:
            shutil.rmtree(scratch, ignore_errors=True)


def local_predicates(con: duckdb.DuckDBPyConnection, local: LocalView, rows: int) -> list[str]:
    """Ranges of ``local.column`` to compute the view in, or one range when the data does not allow
    it (a ``same_within`` key shared by two values of the column)."""
    table, col = quote_ident(local.table), quote_ident(local.column)
    if rows <= CHUNK_ROWS:
        return ["true"]
    for key in local.same_within:
        spread = con.execute(
            f"SELECT count(*) FROM (SELECT {quote_ident(key)} FROM {table} GROUP BY ALL "
            f"HAVING min({col}) IS DISTINCT FROM max({col}) OR count({col}) < count(*))"
        ).fetchall()[0][0]
        if spread:
            return ["true"]
    return range_predicates(con, table, local.column, rows)


def copy_local_view(  # noqa: PLR0913 - one COPY's parts, each its own argument
    con: duckdb.DuckDBPyConnection,
    view: str,
    order_by: str,
    target: Path,
    options: str,
    *,
    local: LocalView,
    table_sql: str,
    predicates: list[str],
) -> None:
    """The view's rows for each range of ``local.column``, computed with ``local.table`` narrowed
    to that range, as ``target/data_<j>.parquet``; the table's full view is put back after."""
    target.mkdir(parents=True, exist_ok=True)
    table = quote_ident(local.table)
    try:
        for label, pred in zip(file_labels(len(predicates)), predicates, strict=True):
            con.execute(f"CREATE OR REPLACE VIEW {table} AS SELECT * FROM ({table_sql}) WHERE {pred}")
            out = quote_literal(str(target / f"{label}.parquet"))
            con.execute(f"COPY (SELECT * FROM {quote_ident(view)} ORDER BY {order_by}) TO {out} ({options})")
    finally:
        con.execute(f"CREATE OR REPLACE VIEW {table} AS {table_sql}")
