"""Warehouse commands: migrate, stats, import-eee, export-eee."""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evalhouse.cli._common import DbOption, JsonFlag, console, emit_json, escape, guard, house, out

SkipValidation = Annotated[
    bool, typer.Option("--skip-validation", help="Do not run the expectations checkpoint after each load.")
]


def migrate(ctx: typer.Context, db: DbOption = None, json_out: JsonFlag = False) -> None:
    """Create the warehouse file, or bring it to the current schema (idempotent)."""
    with guard():
        done = house(ctx, db).migrate()
    if json_out:
        emit_json(done.as_dict())
    else:
        applied = f" (applied {', '.join(done.applied)})" if done.applied else ""
        out.print(f"{done.db}: schema version {done.schema_version}{applied}")


def stats(ctx: typer.Context, db: DbOption = None, json_out: JsonFlag = False) -> None:
    """Counts of sources, evaluations, scores, models, benchmarks and quarantined rows, and the
    cells where sources meet: cells_with_several_sources (candidates from two sources or more) and,
    per pair of sources, how many cells they share and how many of those disagree."""
    where = house(ctx, db)
    with guard():
        data = where.stats()
    if json_out:
        emit_json(data)
        return
    table = Table(title=f"evalhouse warehouse ({where.path.name}, schema v{data['schema_version']})")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in data.items():
        if key not in {"by_source", "schema_version", "source_pairs"}:
            table.add_row(key, f"{value:,}")
    out.print(table)
    if data["source_pairs"]:
        pairs = Table(title="cells two sources meet in, per pair of sources")
        for col in ("sources", "cells", "disagreeing"):
            pairs.add_column(col, justify="left" if col == "sources" else "right")
        for row in data["source_pairs"]:
            pairs.add_row(" + ".join(row["sources"]), f"{row['cells']:,}", f"{row['cells_disagreeing']:,}")
        out.print(pairs)
    if data["by_source"]:
        per = Table(title="by source")
        for col in ("source", "evaluations", "scores", "last run", "last load (quarantined by it)"):
            per.add_column(col)
        for row in data["by_source"]:
            per.add_row(
                row["source"],
                f"{row['evaluations']:,}",
                f"{row['scores']:,}",
                str(row["last_status"]),
                _last_load(row),
            )
        out.print(per)


def _last_load(row: dict[str, Any]) -> str:
    """The last run that loaded rows: its status and what it quarantined (shown until a load replaces it)."""
    if row["last_load_status"] is None:
        return "none"
    if row["last_load_status"] == row["last_status"]:
        return f"same ({row['last_load_quarantined']:,} quarantined)"
    return f"{row['last_load_status']} ({row['last_load_quarantined']:,} quarantined)"


def import_eee(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(help="An EEE datastore tree: data/<collection>/<developer>/<model>/<uuid>.json")
    ],
    skip_validation: SkipValidation = False,
    batch_size: Annotated[
        int | None,
        typer.Option(
            "--batch-size",
            min=1,
            help="Records per load batch at most (one dedup query and one insert per table each; memory holds "
            "one batch); a batch also ends at 12,500 results. Default 4000.",
        ),
    ] = None,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Load an Every Eval Ever datastore tree (aggregates + samples) into the warehouse.

    Every file's bytes go to the raw store first. Each collection loads as one run in one
    transaction. Files that are not valid EEE records are quarantined with their path, sha256
    and the validation error; the rest still load. Exit 1 if anything was quarantined or a
    collection failed, 2 if DIR is not a datastore tree.
    """
    with guard():
        summary = house(ctx, db).import_eee(directory, batch_size=batch_size, validate=not skip_validation)
    data = summary.as_dict()
    if json_out:
        emit_json(data)
    else:
        _print_import(data, summary.outside_layout)
    if summary.quarantined:
        console.print(f"[yellow]{summary.quarantined} item(s) quarantined[/] — see 'evalhouse quarantine list'")
        raise typer.Exit(1)
    if summary.failed:
        raise typer.Exit(1)


def _print_import(data: dict[str, Any], outside: list[str]) -> None:
    for run in data["runs"]:
        unchanged = f", {run['unchanged']} unchanged file(s) skipped" if run["unchanged"] else ""
        out.print(
            f"{run['source']}: {run['status']} — {run['loaded']} loaded, {run['duplicate']} duplicate, "
            f"{run['quarantined']} quarantined{unchanged} ({run['scores']['loaded']} scores)",
            highlight=False,
        )
        for reason, n in run["quarantine_reasons"].items():
            out.print(f"    {n} × {reason}", highlight=False, markup=False)
    if outside:
        out.print(
            f"ignored {len(outside)} JSON file(s) outside the datastore layout: " + ", ".join(outside[:10]),
            highlight=False,
            markup=False,
        )


def export_eee(
    ctx: typer.Context,
    directory: Annotated[
        Path, typer.Argument(help="Output folder (new, empty, or an earlier export); records go to <DIR>/data/...")
    ],
    strict: Annotated[
        bool,
        typer.Option("--strict", help="Exit 1 when any record was not exported (default: they are warnings)."),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Write the warehouse's records as an EEE datastore tree.

    The tree is written beside DIR and moved into place when complete: an interrupted export or a
    full disk leaves DIR as it was. DIR must be new, empty, or an earlier export (replaced whole).
    Check the result with the EEE project's validator, from inside DIR:
    'python -m every_eval_ever validate "data/**/*.json"'.

    A record EEE's datastore layout cannot hold is not exported and is listed as a warning with
    the reason (it stays in the warehouse): a developer 'unknown' or a name no portable path can
    hold (EEE's own rules), or a record all of whose results were quarantined. A path part longer
    than 255 bytes is shortened with a hash of the whole name and listed.

    Exit codes: 0 every record the layout can hold was written (warnings or not); 1 a record
    could not be written, the disk filled (nothing is kept), or --strict and a record was not
    exported; 2 DIR is not a folder evalhouse may write.
    """
    with guard():
        summary = house(ctx, db).export_eee(directory)
    if json_out:
        emit_json(summary.as_dict())
    else:
        out.print(
            f"wrote {summary.written} records and {summary.samples} samples files under {directory}/data",
            highlight=False,
        )
        if summary.results_omitted:
            out.print(
                f"left out {summary.results_omitted} quarantined results "
                "(each record says how many under 'evalhouse.results_quarantined')"
            )
    for eval_id, name, written in summary.shortened:
        console.print(
            f"[yellow]shortened[/] a path part of {escape(eval_id)} to {len(written.encode())} bytes: "
            f"{escape(name[:40])}… → {escape(written)}",
            highlight=False,
        )
    for eval_id, reason in summary.skipped:
        console.print(f"[yellow]not exported[/] {escape(eval_id)}: {escape(reason)}", highlight=False)
    for eval_id, reason in summary.failed:
        console.print(f"[bold red]failed[/] {escape(eval_id)}: {escape(reason)}", highlight=False)
    if summary.skipped and not json_out:
        console.print(f"{len(summary.skipped)} record(s) not exported (warnings; they stay in the warehouse)")
    if summary.failed or (strict and summary.skipped):
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
    app.command("stats")(stats)
    app.command("import-eee")(import_eee)
    app.command("export-eee")(export_eee)
