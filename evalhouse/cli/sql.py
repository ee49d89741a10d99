"""``evalhouse sql``: read-only queries on the live warehouse or a snapshot."""

from typing import Annotated

import typer

from evalhouse.cli._common import (
    DbOption,
    JsonFlag,
    MemoryLimitOption,
    RawFlag,
    RowLimitOption,
    SnapshotOption,
    TempLimitOption,
    TimeoutOption,
    guard,
    house,
    print_rows,
    row_limit,
    usage_error,
)

CsvFlag = Annotated[bool, typer.Option("--csv", help="Print CSV (a header line, then one line per row).")]


def sql(
    ctx: typer.Context,
    query: Annotated[str, typer.Argument(help='One read-only statement, e.g. "SELECT * FROM v_scores_canonical".')],
    snapshot: SnapshotOption = None,
    limit: RowLimitOption = None,
    csv_out: CsvFlag = False,
    raw: RawFlag = False,
    timeout: TimeoutOption = None,
    memory_limit: MemoryLimitOption = None,
    temp_limit: TempLimitOption = None,
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
    infinities as null). CSV/TSV cells a spreadsheet would run as a formula get a ' first
    (--raw: as stored). While a refresh loads, the query waits up to --wait seconds.

    A query is bounded: --timeout seconds (then it is stopped and the warehouse released for
    writers), --memory-limit and --temp-limit (spill to disk); a query stopped at a bound exits
    1 and says which. Without --limit at most 10,000 rows are printed; in a pipe or file, more
    rows than that exit 1 after the rows.
    """
    if json_out and csv_out:
        usage_error("choose one of --json and --csv")
    bounds = {"timeout": timeout, "memory_limit": memory_limit, "temp_limit": temp_limit}
    with guard(), house(ctx, db).query(query, snapshot=snapshot, limit=row_limit(limit), **bounds) as result:
        print_rows(result, json_out=json_out, csv_out=csv_out, raw=raw, limit_given=limit is not None)


def register(app: typer.Typer) -> None:
    app.command("sql")(sql)
