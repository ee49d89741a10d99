"""Ingest commands: sources, refresh, ingest, reparse, mirror export / from-shared."""

from __future__ import annotations

import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from evalhouse.cli._common import DbOption, JsonFlag, SourceOption, console, db_path, emit_json, guard, out

if TYPE_CHECKING:
    from rich.progress import Progress

    from evalhouse.pipeline.ledger import RunResult

SkipValidation = Annotated[
    bool,
    typer.Option("--skip-validation", help="Do not run the expectations checkpoint after each load."),
]

STATUS_STYLE = {
    "completed": "green",
    "partial": "yellow",
    "unchanged": "cyan",
    "recanonicalised": "cyan",
    "failed": "bold red",
    "skipped": "dim",
}


def _print_runs(results: list[RunResult], title: str = "refresh") -> None:
    from rich.table import Table

    table = Table(title=title)
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
            console.print(f"{r.source_key}: {r.error}", highlight=False, markup=False)
        for reason, n in r.report.reasons.most_common(5):
            console.print(f"  {r.source_key}: {n} quarantined — {reason}", highlight=False, markup=False)


def sources(json_out: JsonFlag = False) -> None:
    """List the source catalog: key, kind, tier, organisation, URLs, cadence, required env vars, and the
    real payload each parser was verified on ('unverified': none yet, so a plain refresh leaves it out)."""
    from evalhouse.ingest.catalog import catalog

    specs = [m.SOURCE for m in catalog().values()]
    if json_out:
        emit_json([s.as_dict() for s in specs])
        return
    from rich.table import Table

    table = Table(title="sources")
    for col in ("key", "kind", "tier", "organisation", "cadence", "env", "default URLs", "verified on"):
        table.add_column(col)
    for s in specs:
        env = ", ".join([*s.required_env, *(f"({v})" for v in s.optional_env)])
        rec = s.verified_on
        verified = f"{rec.repository} @ {rec.commit[:10]} ({rec.recorded})" if rec else "unverified"
        table.add_row(s.key, s.kind, str(s.tier), s.organisation, s.cadence, env, "\n".join(s.default_urls), verified)
    out.print(table)
    n = sum(s.verified_on is not None for s in specs)
    out.print(f"{n} of {len(specs)} sources verified on a recorded real payload", highlight=False)


def refresh(
    ctx: typer.Context,
    source: SourceOption = None,
    mirror: Annotated[
        str | None,
        typer.Option(help="Replay pinned payloads from a directory or base URL instead of the live hosts."),
    ] = None,
    skip_validation: SkipValidation = False,
    accept_drift: Annotated[
        list[str] | None,
        typer.Option(
            "--accept-drift",
            help="Accept a real shrink of this source (repeatable): its row-drop guard passes for this run,"
            " recorded as a curation decision.",
        ),
    ] = None,
    deadline: Annotated[
        float,
        typer.Option(
            "--deadline",
            min=1.0,
            metavar="SECONDS",
            help="Total time one source may spend fetching (every request, retry and byte; a crawl too);"
            " past it the source fails with 'deadline exceeded' and the next one runs.",
        ),
    ] = 300.0,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """The nightly refresh: fetch (httpx, or a scrapy crawl) every scheduled source, keep the bytes, parse, load.

    Sources fetched on demand (model-cards, papers) run only through 'evalhouse ingest'.

    Per source: plan -> fetch -> raw store -> unchanged payload? stop -> parse -> drift guards
    (rows dropped > 10%, empty placeholder, bot-check page, layout changed, values outside the
    registry's bounds, oversize body, redirect loop: failed; pages missing: partial) -> unchanged
    records? stop -> validate (bad rows to quarantine) -> load in one transaction -> one
    ingest_run row. When the registries changed since a source's rows were canonicalised, its
    stored payloads are re-canonicalised ('recanonicalised'). A failing source never touches
    another's data. A plain refresh leaves out sources never verified on a recorded real payload
    ('evalhouse sources'; --source KEY fetches one anyway), and a --mirror that holds nothing of a
    source skips it: both are 'skipped', not failed. What the runs changed (new and vanished
    models, new benchmarks, values that moved, failed runs) is written as JSON to
    <db stem>.reports/refresh-<UTC time>.json and latest.json ('evalhouse changes' prints it). Exit 1
    when any source failed, 2 for an unknown --source, 130 when interrupted.
    """
    from evalhouse.config import raw_store_path, serial_blas

    serial_blas()  # a load: no linear algebra
    from evalhouse.ingest.catalog import get_source
    from evalhouse.ingest.http import DEFAULT_DEADLINE, HttpClient
    from evalhouse.pipeline import refresh as refresh_mod
    from evalhouse.pipeline.changes import reports_dir, run_report, write_report
    from evalhouse.pipeline.ledger import checkpoint
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    path = db_path(ctx, db)
    with guard():
        keys = [get_source(k).SOURCE.key for k in source] if source else None
        total = len(keys) if keys else len(refresh_mod.scheduled_sources()) + len(refresh_mod.unverified_sources())
        accepted = {get_source(k).SOURCE.key for k in accept_drift or ()}
        show = not json_out and sys.stderr.isatty()
        after_load = checkpoint(skip_validation)
        store = RawStore(raw_store_path(path))
        with Warehouse.open(path) as wh, _progress(show) as progress:
            task = progress.add_task("refresh", total=total)
            results = refresh_mod.refresh(
                wh,
                store,
                keys,
                refresh_mod.RefreshOptions(
                    mirror=mirror,
                    client_factory=lambda m: HttpClient(
                        mirror=m, source_deadline=deadline, deadline=min(DEFAULT_DEADLINE, deadline)
                    ),
                    crawl_settings={"CLOSESPIDER_TIMEOUT": deadline},
                    after_load=after_load,
                    accept_drift=accepted,
                    on_start=lambda key: progress.update(task, description=f"refreshing {key}"),
                    on_done=lambda _r: progress.advance(task),
                ),
            )
        # the boards are read again with the writer's lock released, as any reader reads them
        with Warehouse.open(path, read_only=True) as wh:
            report = run_report(wh, store, results, db_path=path)
        written = write_report(reports_dir(path), report)
    if json_out:
        from evalhouse.ingest.redaction import redact_url

        emit_json(
            {
                "db": str(path),
                "mirror": mirror and redact_url(mirror),
                "runs": [r.as_dict() for r in results],
                "report": str(written),
            }
        )
    else:
        _print_runs(results)
        t = report["totals"]
        out.print(
            f"run report: {written} ({t['models_new']} new and {t['models_vanished']} vanished models, "
            f"{t['benchmarks_new']} new benchmarks, {t['values_moved']} values moved; 'evalhouse changes' shows them)",
            highlight=False,
            markup=False,
        )
    if any(r.status == "failed" for r in results):
        raise typer.Exit(1)


def ingest(
    ctx: typer.Context,
    key: Annotated[str, typer.Argument(help="Source key or alias (see 'evalhouse sources'), e.g. model-card, paper.")],
    locations: Annotated[
        list[str] | None,
        typer.Argument(help="Local files, URLs, or ids the source can fetch (a Hub repo id, an arXiv id)."),
    ] = None,
    targets: Annotated[
        Path | None,
        typer.Option("--targets", help="A file of ids to fetch, one per line ('#' starts a comment).", metavar="FILE"),
    ] = None,
    named: Annotated[
        bool,
        typer.Option("--named", help="Fetch the models the warehouse's other sources name (model-cards)."),
    ] = False,
    mirror: Annotated[
        str | None,
        typer.Option(help="Replay pinned payloads from a directory or base URL instead of the live hosts."),
    ] = None,
    skip_validation: SkipValidation = False,
    accept_drift: Annotated[
        bool,
        typer.Option(
            "--accept-drift",
            help="Accept what the drift guards refuse for this run (a real shrink or scale change),"
            " recorded as a curation decision.",
        ),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Run one source's parser over pinned payloads, or fetch what ids name, recorded like any fetch.

    A local file or URL is read as is, e.g.
    'evalhouse ingest artificial-analysis ../shared/datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv'.
    An id is fetched through the normal client: 'evalhouse ingest model-card alpindale/WizardLM-2-8x22B'
    (the Hub API: the card's results and createdAt), 'evalhouse ingest paper 2406.01234v2' (the
    paper's arXiv HTML tables). Several ids, '--targets FILE' or '--named' make one run over all of
    them; a target that fails is quarantined with its reason and the others load. A payload is
    judged by the refresh's drift guards against the source's last loading run (values rescaled,
    most rows quarantined, a shrink): one they refuse loads nothing and fails the run, unless
    '--accept-drift' waives it.

    Harness logs load their aggregate scores and, when kept, their samples as item rows (see
    docs/harness-logs.md); several logs make one run:
    'evalhouse ingest lm-eval results_<ts>.json [samples_<task>_<ts>.jsonl ...]' (or the output
    directory), 'evalhouse ingest inspect-log a.json b.eval', 'evalhouse ingest helm-run RUN_DIR ...'.
    Exit 1 when the run failed, 2 for an unknown source or an unreadable --targets file.
    """
    from evalhouse.errors import InputError
    from evalhouse.ingest.catalog import get_source
    from evalhouse.pipeline.ingest_file import ingest_file, ingest_paths
    from evalhouse.pipeline.refresh import RefreshOptions
    from evalhouse.pipeline.targets import named_models

    given = list(locations or [])

    def run(wh, store, after):
        waived = {get_source(key).SOURCE.key} if accept_drift else set()
        options = RefreshOptions(mirror=mirror, after_load=after, accept_drift=waived)
        wanted = [*given, *_read_targets(targets)]
        if named:
            wanted += named_models(wh, key)
        if not wanted:
            raise InputError("nothing to ingest: give a file, URL or id, --targets FILE or --named")
        if len(wanted) == 1 and not (targets or named):
            return ingest_file(wh, store, key, wanted[0], options)
        return ingest_paths(wh, store, key, wanted, options)

    _run_one(ctx, db, key, skip_validation, json_out, run, title=f"ingest {key}")


def _read_targets(path: Path | None) -> list[str]:
    """The ids of a ``--targets`` file: one per line, ``#`` comments and blank lines skipped."""
    if path is None:
        return []
    from evalhouse.errors import InputError

    try:
        text = path.read_text(encoding="utf-8")
    except OSError as exc:
        raise InputError(f"cannot read --targets {path}: {exc.strerror or exc}") from exc
    return [line.split("#", 1)[0].strip() for line in text.splitlines() if line.split("#", 1)[0].strip()]


def reparse(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", "-s", help="The source whose rows to rebuild.")],
    skip_validation: SkipValidation = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Rebuild a source's rows from the raw store with the current parser and registries (no fetching)."""
    from evalhouse.pipeline.reparse import reparse as reparse_source

    _run_one(
        ctx,
        db,
        source,
        skip_validation,
        json_out,
        lambda wh, store, after: reparse_source(wh, store, source, after_load=after),
        title=f"reparse {source}",
    )


def _run_one(
    ctx: typer.Context, db: str | None, key: str, skip_validation: bool, json_out: bool, run, *, title: str
) -> None:
    """Open the warehouse for writing, run one source's load, report it; exit 1 if it failed."""
    from evalhouse.config import raw_store_path, serial_blas

    serial_blas()  # a load: no linear algebra
    from evalhouse.pipeline.ledger import checkpoint
    from evalhouse.pipeline.refresh import resolve_key
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    path = db_path(ctx, db)
    with guard():
        resolve_key(key)
        after_load = checkpoint(skip_validation)
        with Warehouse.open(path) as wh:
            result = run(wh, RawStore(raw_store_path(path)), after_load)
    if json_out:
        emit_json(result.as_dict())
    else:
        _print_runs([result], title)
    if result.status == "failed":
        raise typer.Exit(1)


def mirror_export(
    ctx: typer.Context,
    directory: Annotated[Path, typer.Argument(help="Where to write the mirror tree.")],
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Write the latest stored payload of every fetched URL as a mirror tree for --mirror replays."""
    from evalhouse.config import raw_store_path
    from evalhouse.ingest.mirror_export import export_mirror
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore

    path = db_path(ctx, db)
    with guard(), Warehouse.open(path, read_only=True) as wh:
        written = export_mirror(wh, RawStore(raw_store_path(path)), directory)
    _print_mirror(directory, written, json_out)


_CHECKOUT = Path(__file__).resolve().parents[2]


def mirror_from_shared(
    directory: Annotated[Path, typer.Argument(help="Where to write the mirror tree.")],
    shared: Annotated[
        Path, typer.Option(help="The pinned datasets folder (the repository's ../shared).")
    ] = _CHECKOUT.parent / "shared",
    fixtures: Annotated[
        Path, typer.Option(help="The recorded real payloads of the sources (the repository's tests/fixtures).")
    ] = _CHECKOUT / "tests" / "fixtures",
    json_out: JsonFlag = False,
) -> None:
    """Build a replay mirror of every verified source from its recorded real payloads, for machines that
    have never been online.

    Epoch's export and the AA page come from the pinned datasets; every other source verified on a
    recorded payload ('evalhouse sources') has its recorded files placed at the URLs they stand for.
    Then 'evalhouse refresh --mirror DIR' (or 'make run MIRROR=DIR') loads them through the real
    fetch, parse and load path; a source the mirror holds nothing of is 'skipped'. Exit 2 when no
    recorded payload is found at all.
    """
    from evalhouse.ingest.pinned import mirror_from_shared as build

    with guard():
        written = build(shared, directory, fixtures)
    _print_mirror(directory, written, json_out)


def _print_mirror(directory: Path, written: dict[str, Path], json_out: bool) -> None:
    if json_out:
        emit_json({"directory": str(directory), "files": {k: str(v) for k, v in written.items()}})
    else:
        for url, file in written.items():
            out.print(f"{url} -> {file}", highlight=False, markup=False)


class _NoProgress:
    """What ``refresh`` calls on its progress bar, doing nothing (``--json``, or not a terminal)."""

    def __enter__(self) -> _NoProgress:
        return self

    def __exit__(self, *exc: object) -> None:
        return None

    def add_task(self, description: str, **fields: Any) -> int:
        return 0

    def update(self, task: int, **fields: Any) -> None:
        return None

    def advance(self, task: int) -> None:
        return None


def _progress(show: bool) -> Progress | _NoProgress:
    if not show:  # rich.progress (≈ 45 ms of imports) only when a bar is shown
        return _NoProgress()
    from rich.progress import BarColumn, Progress, SpinnerColumn, TextColumn, TimeElapsedColumn

    return Progress(
        SpinnerColumn(),
        TextColumn("{task.description}"),
        BarColumn(),
        TimeElapsedColumn(),
        console=console.console,
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
