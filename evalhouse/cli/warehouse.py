"""Warehouse commands: migrate, stats, import-eee, export-eee."""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evalhouse.cli._common import JsonFlag, console, db_path, emit_json, fail, out
from evalhouse.config import raw_store_path
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse, WarehouseError
from evalhouse.warehouse.eee_export import DatastoreError, export_tree
from evalhouse.warehouse.raw_store import RawStore
from evalhouse.warehouse.stats import stats as warehouse_stats


def migrate(ctx: typer.Context, json_out: JsonFlag = False) -> None:
    """Create the warehouse file, or bring it to the current schema (idempotent)."""
    path = db_path(ctx)
    try:
        with Warehouse.open(path) as wh:
            applied = wh.migrate() or []
            version = wh.schema_version()
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json({"db": str(path), "schema_version": version, "applied": applied})
    else:
        out.print(f"{path}: schema version {version}" + (f" (applied {', '.join(applied)})" if applied else ""))


def stats(ctx: typer.Context, json_out: JsonFlag = False) -> None:
    """Counts of sources, evaluations, scores, models, benchmarks and quarantined rows."""
    try:
        with Warehouse.open(db_path(ctx), read_only=True) as wh:
            data = warehouse_stats(wh)
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json(data)
        return
    table = Table(title=f"evalhouse warehouse ({db_path(ctx).name}, schema v{data['schema_version']})")
    table.add_column("what")
    table.add_column("count", justify="right")
    for key, value in data.items():
        if key not in {"by_source", "schema_version"}:
            table.add_row(key, f"{value:,}")
    out.print(table)
    if data["by_source"]:
        per = Table(title="by source")
        for col in ("source", "evaluations", "scores", "last run"):
            per.add_column(col)
        for row in data["by_source"]:
            per.add_row(
                row["source"],
                f"{row['evaluations']:,}",
                f"{row['scores']:,}",
                str(row["last_status"]),
            )
        out.print(per)


def import_eee(
    ctx: typer.Context,
    directory: Annotated[
        Path,
        typer.Argument(help="An EEE datastore tree: data/<collection>/<developer>/<model>/<uuid>.json"),
    ],
    skip_validation: Annotated[
        bool,
        typer.Option("--skip-validation", help="Do not run the expectations checkpoint after each load."),
    ] = False,
    json_out: JsonFlag = False,
) -> None:
    """Load an Every Eval Ever datastore tree (aggregates + samples) into the warehouse.

    Every file's bytes go to the raw store first. Each collection loads as one run in one
    transaction. Files that are not valid EEE 0.3.0 records are quarantined with their path,
    sha256 and the validation error; the rest still load; the exit code is 1 if any were.
    """
    from evalhouse.cli.ingest import checkpoint

    path = db_path(ctx)
    after_load = checkpoint(skip_validation)
    try:
        with Warehouse.open(path) as wh:
            summary = import_tree(wh, directory, RawStore(raw_store_path(path)), after_load=after_load)
    except (WarehouseError, DatastoreError) as exc:
        raise fail(str(exc)) from exc
    data = summary.as_dict()
    if json_out:
        emit_json(data)
    else:
        for run in data["runs"]:
            out.print(
                f"{run['source']}: {run['status']} — {run['loaded']} loaded, {run['duplicate']} duplicate, "
                f"{run['quarantined']} quarantined ({run['scores']['loaded']} scores)"
            )
            for reason, n in run["quarantine_reasons"].items():
                out.print(f"    {n} × {reason}")
        if summary.outside_layout:
            out.print(
                f"ignored {len(summary.outside_layout)} JSON file(s) outside the datastore layout: "
                + ", ".join(summary.outside_layout[:10])
            )
    if summary.quarantined:
        console.print(f"[yellow]{summary.quarantined} item(s) quarantined[/] — see 'evalhouse quarantine list'")
        raise typer.Exit(1)
    if summary.failed:
        raise typer.Exit(1)


def export_eee(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Output folder; records go to <DIR>/data/<collection>/...")],
    json_out: JsonFlag = False,
) -> None:
    """Write the warehouse's records as an EEE datastore tree.

    Check the result with the EEE project's validator: 'python -m every_eval_ever validate'.
    """
    path = db_path(ctx)
    try:
        with Warehouse.open(path, read_only=True) as wh:
            summary = export_tree(wh, directory, RawStore(raw_store_path(path)))
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json({"written": summary.written, "samples": summary.samples, "skipped": summary.skipped})
    else:
        out.print(f"wrote {summary.written} records and {summary.samples} samples files under {directory}/data")
    if summary.skipped:
        for eval_id, reason in summary.skipped:
            console.print(f"[yellow]skipped[/] {eval_id}: {reason}")
        raise typer.Exit(1)


def register(app: typer.Typer) -> None:
    app.command("migrate")(migrate)
    app.command("stats")(stats)
    app.command("import-eee")(import_eee)
    app.command("export-eee")(export_eee)
