"""``evalhouse sql``: read-only queries on the live warehouse or a snapshot."""

from __future__ import annotations

from typing import Annotated

import typer

from evalhouse.cli._common import DbOption, JsonFlag, SnapshotOption, db_path, guard, print_rows, usage_error

DEFAULT_LIMIT = 10_000

CsvFlag = Annotated[bool, typer.Option("--csv", help="Print CSV (a header line, then one line per row).")]
LimitOption = Annotated[
    int,
    typer.Option(
        "--limit",
        help=f"Stop after this many rows (0 = all; rows are fetched in chunks either way). Default {DEFAULT_LIMIT:,}.",
        min=0,
    ),
]


def sql(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='One read-only statement, e.g. "SELECT * FROM v_scores_canonical".')],
    snapshot: SnapshotOption = None,
    limit: LimitOption = DEFAULT_LIMIT,
    csv_out: CsvFlag = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Run one read-only SQL query on the warehouse (or --snapshot DIR) and print its rows.

    Only queries run: SELECT, WITH, FROM, VALUES, DESCRIBE, SHOW, SUMMARIZE. Writes, COPY, EXPORT,
    ATTACH, INSTALL/LOAD, SET, PRAGMA and reading files outside the warehouse (its file and raw
    store) or the snapshot folder are refused (exit 2), as are empty queries. The warehouse's
    tables and v_* views are there, e.g. 'evalhouse sql "SELECT benchmark_id, count(*) FROM
    v_scores_canonical GROUP BY ALL ORDER BY 2 DESC"'. Output: a table on a terminal,
    tab-separated values in a pipe or log, --csv, or --json (one array of objects; NaN and
    infinities as null). While a refresh loads, the query waits up to --wait seconds.
    """
    from evalhouse.config import raw_store_path
    from evalhouse.warehouse.sql_guard import guarded_query

    if json_out and csv_out:
        usage_error("choose one of --json and --csv")
    path = db_path(ctx, db)
    with (
        guard(),
        guarded_query(query, db=path, raw_store=raw_store_path(path), snapshot=snapshot, limit=limit or None) as result,
    ):
        print_rows(result, json_out=json_out, csv_out=csv_out)


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)
