"""Ingest commands: sources, refresh, ingest, reparse, mirror export."""

from __future__ import annotations

import sys
from collections.abc import Callable
from pathlib import Path
from typing import Annotated

import duckdb
import typer
from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn
from rich.table import Table

from evalhouse.cli._common import JsonFlag, console, db_path, emit_json, fail, out
from evalhouse.config import raw_store_path
from evalhouse.ingest.catalog import catalog, scheduled
from evalhouse.ingest.mirror_export import export_mirror
from evalhouse.pipeline import refresh as refresh_mod
from evalhouse.pipeline.ledger import AfterLoad, RunResult
from evalhouse.warehouse.db import Warehouse, WarehouseError
from evalhouse.warehouse.raw_store import RawStore

SkipValidation = Annotated[
    bool,
    typer.Option("--skip-validation", help="Do not run the expectations checkpoint after each load."),
]

STATUS_STYLE = {"completed": "green", "partial": "yellow", "unchanged": "cyan", "failed": "bold red"}


def _print_runs(results: list[RunResult]) -> None:
    table = Table(title="refresh")
    for col in ("source", "status", "read", "loaded", "duplicate", "quarantined", "scores", "seconds"):
        text = col in {"source", "status"}
        table.add_column(col, justify="left" if text else "right", no_wrap=text)
    for r in results:
        d = r.as_dict()
        style = STATUS_STYLE.get(r.status, "")
        table.add_row(
            d["source"],
            f"[{style}]{d['status']}[/]",
            str(d["read"]),
            str(d["loaded"]),
            str(d["duplicate"]),
            str(d["quarantined"]),
            str(d["scores"]["loaded"]),
            f"{d['duration_s']:.2f}",
        )
    out.print(table)
    for r in results:
        if r.error:
            console.print(f"[bold]{r.source_key}[/]: {r.error}", highlight=False)
        for reason, n in r.report.reasons.most_common(5):
            console.print(f"  {r.source_key}: {n} quarantined — {reason}", highlight=False)


def sources(json_out: JsonFlag = False) -> None:
    """List the source catalog: key, kind, tier, organisation, URLs, cadence, required env vars."""
    specs = [m.SOURCE for m in catalog().values()]
    if json_out:
        emit_json(
            [
                {
                    "key": s.key,
                    "name": s.name,
                    "kind": s.kind,
                    "tier": s.tier,
                    "organisation": s.organisation,
                    "homepage": s.homepage,
                    "default_urls": list(s.default_urls),
                    "cadence": s.cadence,
                    "required_env": list(s.required_env),
                    "optional_env": list(s.optional_env),
                    "parser_version": s.parser_version,
                    "collection": s.collection,
                    "licence": s.licence,
                    "description": s.description,
                }
                for s in specs
            ]
        )
        return
    table = Table(title="sources")
    for col in ("key", "kind", "tier", "organisation", "cadence", "env", "default URLs"):
        table.add_column(col)
    for s in specs:
        env = ", ".join([*s.required_env, *(f"({v})" for v in s.optional_env)])
        table.add_row(s.key, s.kind, str(s.tier), s.organisation, s.cadence, env, "\n".join(s.default_urls))
    out.print(table)


def refresh(
    ctx: typer.Context,
    source: Annotated[
        list[str] | None, typer.Option("--source", "-s", help="Only this source (repeatable). Default: all.")
    ] = None,
    mirror: Annotated[
        str | None,
        typer.Option(help="Replay pinned payloads from a directory or base URL instead of the live hosts."),
    ] = None,
    skip_validation: SkipValidation = False,
    json_out: JsonFlag = False,
) -> None:
    """The nightly refresh: fetch every source, keep the bytes, parse, validate, load.

    Per source: plan -> fetch -> raw store -> unchanged payload? stop -> parse -> unchanged
    records? stop -> validate (bad rows to quarantine) -> load in one transaction -> one
    ingest_run row. A failing source never touches another's data; the exit code is 1 when any
    source failed.
    """
    path = db_path(ctx)
    store = RawStore(raw_store_path(path))
    known = set(catalog())
    unknown = [k for k in source or [] if k not in known]
    if unknown:
        raise fail(f"unknown source(s) {', '.join(unknown)}; known: {', '.join(sorted(known))}")
    keys = source or scheduled()
    show = not json_out and sys.stderr.isatty()
    after_load = checkpoint(skip_validation)
    try:
        with Warehouse.open(path) as wh, _progress(show) as progress:
            task = progress.add_task("refresh", total=len(keys))
            results = refresh_mod.refresh(
                wh,
                store,
                keys,
                mirror=mirror,
                after_load=after_load,
                on_start=lambda key: progress.update(task, description=f"refreshing {key}"),
                on_done=lambda _r: progress.advance(task),
            )
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json({"db": str(path), "mirror": mirror, "runs": [r.as_dict() for r in results]})
    else:
        _print_runs(results)
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)


def ingest(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Source key (see 'evalhouse sources').")],
    location: Annotated[str, typer.Argument(help="A local file or a URL with a payload for that source.")],
    skip_validation: SkipValidation = False,
    json_out: JsonFlag = False,
) -> None:
    """Run one source's parser over one pinned payload (a local file or URL).

    The bytes are stored in the raw store and the run is recorded like any fetch, e.g.
    'evalhouse ingest artificial-analysis ../shared/datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv'.
    """
    _known(key)
    _run_one(
        ctx,
        skip_validation,
        json_out,
        lambda wh, store, after: refresh_mod.ingest_file(wh, store, key, location, after_load=after),
    )


def reparse(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", "-s", help="The source whose rows to rebuild.")],
    skip_validation: SkipValidation = False,
    json_out: JsonFlag = False,
) -> None:
    """Rebuild a source's rows from the raw store with the current parser (no fetching)."""
    _known(source)
    _run_one(
        ctx,
        skip_validation,
        json_out,
        lambda wh, store, after: refresh_mod.reparse(wh, store, source, after_load=after),
    )


def _known(key: str) -> None:
    if key not in catalog():
        raise fail(f"unknown source {key!r}; known: {', '.join(sorted(catalog()))}")


def _run_one(
    ctx: typer.Context,
    skip_validation: bool,
    json_out: bool,
    run: Callable[[Warehouse, RawStore, AfterLoad | None], RunResult],
) -> None:
    """Open the warehouse for writing, run one source's load, report it; exit 1 if it failed."""
    path = db_path(ctx)
    after_load = checkpoint(skip_validation)
    try:
        with Warehouse.open(path) as wh:
            result = run(wh, RawStore(raw_store_path(path)), after_load)
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json(result.as_dict())
    else:
        _print_runs([result])
    if result.status == "failed":
        raise typer.Exit(1)


def mirror_export(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Where to write the mirror tree.")],
    json_out: JsonFlag = False,
) -> None:
    """Write the latest stored payload of every fetched URL as a mirror tree for --mirror replays."""
    path = db_path(ctx)
    try:
        with Warehouse.open(path, read_only=True) as wh:
            written = export_mirror(wh, RawStore(raw_store_path(path)), directory)
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    _print_mirror(directory, written, json_out)


def checkpoint(skip: bool) -> AfterLoad | None:
    """The expectations checkpoint to run inside each load.

    great-expectations takes seconds to import, so it is imported at the first load that needs
    it: a night on which every source is unchanged never pays for it.
    """
    if skip:
        return None

    def run(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
        from evalhouse.warehouse.expectations import checkpoint_after_load

        checkpoint_after_load(con, run_id)

    return run


DEFAULT_SHARED = Path(__file__).resolve().parents[2].parent / "shared"


def mirror_from_shared(
    directory: Annotated[Path, typer.Argument(help="Where to write the mirror tree.")],
    shared: Annotated[
        Path, typer.Option(help="The pinned datasets folder (the repository's ../shared).")
    ] = DEFAULT_SHARED,
    json_out: JsonFlag = False,
) -> None:
    """Build a replay mirror from the pinned datasets, for machines that have never been online.

    Then 'evalhouse refresh --mirror DIR' (or 'make run MIRROR=DIR') loads them through the real
    fetch, parse and load path.
    """
    from evalhouse.ingest.pinned import PinnedDataMissing
    from evalhouse.ingest.pinned import mirror_from_shared as build

    try:
        written = build(shared, directory)
    except PinnedDataMissing as exc:
        raise fail(str(exc)) from exc
    _print_mirror(directory, written, json_out)


def _print_mirror(directory: Path, written: dict[str, Path], json_out: bool) -> None:
    if json_out:
        emit_json({"directory": str(directory), "files": {k: str(v) for k, v in written.items()}})
    else:
        for url, file in written.items():
            out.print(f"{url} -> {file}")


def _progress(show: bool) -> Progress:
    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not show,
        transient=True,
    )


def register(app: typer.Typer) -> None:
    app.command("sources")(sources)
    app.command("refresh")(refresh)
    app.command("ingest")(ingest)
    app.command("reparse")(reparse)
    mirror = typer.Typer(help="Mirrors: pinned payload trees that 'refresh --mirror' replays.", no_args_is_help=True)
    mirror.command("export")(mirror_export)
    mirror.command("from-shared")(mirror_from_shared)
    app.add_typer(mirror, name="mirror")
