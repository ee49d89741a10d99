"""Snapshot commands: create, verify, diff, open.

Exit codes say what happened so scripts can gate on them: 0 fine; 1 the snapshot failed
verification (``verify``) or A ⊆ B with shared cells unchanged does not hold (``diff``); 2 the
input is not a usable snapshot (no manifest, unreadable, corrupted).
"""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.table import Table

from evalhouse.cli._common import (
    DbOption,
    JsonFlag,
    MemoryLimitOption,
    RawFlag,
    RowLimitOption,
    TempLimitOption,
    TimeoutOption,
    console,
    emit_json,
    escape,
    guard,
    house,
    out,
    print_rows,
    row_limit,
    shown,
    usage_error,
)

if TYPE_CHECKING:
    from evalhouse.app.results import CreatedSnapshot, SnapshotDiff, TableDiff

SnapshotDir = Annotated[Path, typer.Argument(help="A snapshot folder (the one holding manifest.json).")]
ExpectId = Annotated[
    str | None,
    typer.Option(
        "--expect-id",
        metavar="ID",
        help="The snapshot id an analysis recorded (or an unambiguous prefix of it, 6 hex digits or more):"
        " any other id fails, a re-sealed snapshot included (anyone can recompute a manifest's own id and seal).",
    ),
]
Limit = Annotated[
    int, typer.Option("--limit", help="Example rows/cells listed per category (0 = all); counts are exact.")
]


def _mb(n: int) -> str:
    return f"{n / 1e6:,.1f} MB"


def create(
    ctx: typer.Context,
    out_dir: Annotated[Path, typer.Argument(help="A new (or empty) folder to write the snapshot into.")],
    name: Annotated[str | None, typer.Option("--name", help="A label; not part of the id.")] = None,
    eee_tree: Annotated[
        bool,
        typer.Option(
            "--eee-tree",
            help="Write the records as an EEE datastore tree (one file per record) instead of one "
            "JSON Lines file per collection.",
        ),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Freeze the warehouse: Parquet tables + views, the records, and a content-hashed manifest.

    The snapshot id is the sha256 of the manifest's content, so the same warehouse state always
    gets the same id and the same bytes. Views with a row per score (v_score_current,
    v_cell_candidates, v_provenance) and v_scores_by_family are not written again: they are built
    from their SQL over the frozen tables and views when the snapshot is opened. A relation of
    more than 250,000 rows is written in sorted key ranges (data_0, data_1, ...), so memory stays
    bounded. The records go in as eee/<collection>.jsonl,
    each as the warehouse stores it; --eee-tree writes the datastore layout EEE's tools read. The
    snapshot is recorded in the warehouse's snapshot table; analyses record its id.
    """
    with guard():
        created = house(ctx, db).create_snapshot(out_dir, name=name, eee_tree=eee_tree)
    _report_created(created, json_out)


def _report_created(created: "CreatedSnapshot", json_out: bool) -> None:
    m = created.manifest
    skipped = m["eee"]["skipped"]
    if json_out:
        emit_json(
            {
                "snapshot_id": created.snapshot_id,
                "name": m["name"],
                "path": str(created.path),
                "created_at": m["created_at"],
                "files": len(m["files"]) + 1,
                "bytes": created.total_bytes,
                "rows": {t: e["rows"] for t, e in m["tables"].items() if "rows" in e},
                "eee": m["eee"],
                "previously_recorded_at": created.previous_path,
            }
        )
    else:
        kinds = [e["kind"] for e in m["tables"].values()]
        out.print(
            f"snapshot {created.snapshot_id} → {created.path}\n"
            f"  {kinds.count('table')} tables, {kinds.count('view')} views, "
            f"{m['eee']['records']} EEE records, {len(m['files']) + 1} files (the manifest included),"
            f" {_mb(created.total_bytes)}"
        )
        if created.previous_path and created.previous_path != str(created.path):
            out.print(f"  the same state was frozen before at {created.previous_path}")
    for eval_id, reason in skipped:
        console.print(f"[yellow]not in the EEE tree[/] (still in the Parquet) {eval_id}: {reason}")


def verify(ctx: typer.Context, directory: SnapshotDir, expect_id: ExpectId = None, json_out: JsonFlag = False) -> None:
    """Re-hash every file of a snapshot against its manifest (and, with --expect-id, its id).

    Names every changed, missing or extra file, a symbolic link, a hand-edited manifest and an
    id other than the expected one; exits 1 if there is any, 2 if the folder is not a snapshot
    at all or its manifest is malformed (checked before any file is read). The files counted are
    the manifest's and the manifest itself, as 'snapshot create' counts them. --expect-id takes the
    whole id or a prefix of at least 6 hex digits; a prefix that other snapshots the warehouse
    recorded begin with too is refused (exit 2) naming them.
    """
    with guard():
        report = house(ctx).verify_snapshot(directory, expect_id=expect_id)
    for note in report.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    if json_out:
        emit_json(report.as_dict())
    elif report.ok:
        out.print(
            f"ok: snapshot {report.snapshot_id} — {report.checked} files (the manifest included),"
            f" {_mb(report.bytes_checked)} match the manifest"
        )
    if not report.ok:
        for problem in report.problems():
            console.print(f"[bold red]verify:[/] {problem}", highlight=False, soft_wrap=True)
        console.print(f"[bold red]error:[/] {directory} does not match its manifest", highlight=False)
        raise typer.Exit(1)


def _table_lines(tables: list["TableDiff"]) -> Table:
    grid = Table(title="tables (by primary key; whole rows where there is none)")
    for col in ("table", "added", "removed", "changed", "changed columns"):
        grid.add_column(col, justify="left" if col in {"table", "changed columns"} else "right")
    for t in tables:
        if t.differs:
            note = ", ".join(f"{c} ({n:,})" for c, n in t.changed_columns.items())
            if t.only_in:
                note = f"only in {t.only_in}"
            grid.add_row(t.name, f"{t.added:,}", f"{t.removed:,}", f"{t.changed:,}", note)
    return grid


def _cell_line(prefix: str, cell: dict[str, Any]) -> str:
    where = " × ".join(str(cell[k]) for k in ("config_id", "benchmark_id", "metric_id")) + (
        f" [{cell['setup_key']}]" if cell["setup_key"] else ""
    )
    if "old_value" in cell:
        unit = "" if cell["old_unit"] == cell["new_unit"] else f" ({cell['old_unit']} → {cell['new_unit']})"
        return f"  {prefix} {where}: {cell['old_value']!r} → {cell['new_value']!r}{unit}"
    return f"  {prefix} {where} = {cell['value']!r} {cell['unit']}"


def _print_diff(result: "SnapshotDiff") -> None:
    out.print(f"A: {shown(result.a['snapshot_id'])} {result.a['name'] or ''} ({result.a['path']})")
    out.print(f"B: {shown(result.b['snapshot_id'])} {result.b['name'] or ''} ({result.b['path']})")
    changed = [t for t in result.tables if t.differs]
    if changed:
        out.print(_table_lines(result.tables))
    out.print(f"{len(result.tables) - len(changed)} of {len(result.tables)} tables unchanged")
    c = result.cells
    out.print(
        f"cells: {c.in_a:,} in A, {c.in_b:,} in B, {c.shared:,} shared — {c.n_added:,} added, "
        f"{c.n_removed:,} removed, {c.n_changed:,} changed"
    )
    for prefix, cells in (("+", c.added), ("-", c.removed), ("~", c.changed)):
        for cell in cells:
            out.print(_cell_line(prefix, cell), highlight=False)
    out.print(result.verdict)


def diff(a: SnapshotDir, b: SnapshotDir, json_out: JsonFlag = False, limit: Limit = 20) -> None:
    """Compare snapshot A with B: rows per table and cells (config × benchmark × metric × setup).

    Ends with a one-line verdict, "A ⊂ B, all shared cells unchanged" when that holds (paper
    004's check); exits 1 when A ⊆ B with shared cells unchanged does not hold, 2 when either
    folder is not a valid snapshot. Files both snapshots hold byte for byte are skipped; the rest
    is compared in DuckDB and only what differs is kept, so memory follows the change, not the
    size of the snapshots.
    """
    from evalhouse.app import diff_snapshots

    with guard():
        result = diff_snapshots(a, b, limit=limit or None)
    if json_out:
        emit_json(result.as_dict())
    else:
        _print_diff(result)
    if not result.subset_holds:
        raise typer.Exit(1)


def _snippet(directory: Path) -> str:
    return (
        "import evalhouse\n"
        f"con = evalhouse.open_snapshot({str(directory)!r})  # verified, read-only\n"
        'df = evalhouse.snapshot_frame(con, "SELECT * FROM v_matrix_long")\n'
        '# df.attrs["snapshot_id"] is what an analysis records'
    )


def _describe(directory: Path, held: dict[str, Any], json_out: bool) -> None:
    if json_out:
        emit_json({"snapshot_id": held["snapshot_id"], "name": held["name"], "rows": held["rows"]})
        return
    out.print(f"snapshot {held['snapshot_id']} {held['name'] or ''} (created {held['created_at']})")
    grid = Table()
    grid.add_column("table / view")
    grid.add_column("rows", justify="right")
    for name, rows in held["rows"].items():
        grid.add_row(name, "built on open" if rows is None else f"{rows:,}")
    grid.add_row("snapshot_meta", "1")
    out.print(grid)
    out.print('query it: evalhouse snapshot open DIR --sql "SELECT ..."   or in Python:')
    out.print(_snippet(directory), highlight=False, markup=False)


def open_(
    ctx: typer.Context,
    directory: SnapshotDir,
    sql: Annotated[
        str | None,
        typer.Option("--sql", help="Run one read-only query on the snapshot and print its rows (as 'evalhouse sql')."),
    ] = None,
    limit: RowLimitOption = None,
    csv_out: Annotated[bool, typer.Option("--csv", help="With --sql: print CSV.")] = False,
    raw: RawFlag = False,
    timeout: TimeoutOption = None,
    memory_limit: MemoryLimitOption = None,
    temp_limit: TempLimitOption = None,
    expect_id: ExpectId = None,
    json_out: JsonFlag = False,
) -> None:
    """Query a snapshot read-only with the warehouse's views, or list what it holds.

    Without --sql it prints the tables and views with row counts and the Python snippet
    (evalhouse.open_snapshot) for analyses. The snapshot is verified first; a corrupted one is
    refused (exit 2). --sql runs through the same guard and bounds as 'evalhouse sql': one
    read-only statement, no files outside the snapshot folder, a timeout, a memory and a spill
    limit, and at most 10,000 rows unless --limit says otherwise.
    """
    from evalhouse.app import describe_snapshot

    if json_out and csv_out:
        usage_error("choose one of --json and --csv")
    with guard():
        if sql is None:
            _describe(directory, describe_snapshot(directory, expect_id=expect_id), json_out)
            return
        bounds = {"timeout": timeout, "memory_limit": memory_limit, "temp_limit": temp_limit}
        with house(ctx).query(sql, snapshot=directory, expect_id=expect_id, limit=row_limit(limit), **bounds) as result:
            print_rows(result, json_out=json_out, csv_out=csv_out, raw=raw, limit_given=limit is not None)


def register(app: typer.Typer) -> None:
    group = typer.Typer(
        name="snapshot",
        help="Frozen, content-hashed exports of the warehouse: create, verify, diff, open.",
        no_args_is_help=True,
    )
    group.command("create")(create)
    group.command("verify")(verify)
    group.command("diff")(diff)
    group.command("open")(open_)
    app.add_typer(group, name="snapshot")
