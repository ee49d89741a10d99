"""Ingest commands: sources, refresh, ingest, reparse, mirror export / from-shared."""

from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from evalhouse.app.catalog import DEFAULT_FIXTURES, DEFAULT_SHARED
from evalhouse.cli._common import DbOption, JsonFlag, SourceOption, console, emit_json, guard, house, out

if TYPE_CHECKING:
    from evalhouse.app.results import RunResult

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


def _print_runs(results: list["RunResult"], title: str = "refresh") -> None:
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
    from evalhouse.app import sources as catalog

    specs = catalog()
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
    with guard():
        night = house(ctx, db).refresh(
            source, mirror=mirror, deadline=deadline, accept_drift=accept_drift or (), validate=not skip_validation
        )
    if json_out:
        emit_json(night.as_dict())
    else:
        _print_runs(night.runs)
        t = night.report["totals"]
        out.print(
            f"run report: {night.report_path} ({t['models_new']} new and {t['models_vanished']} vanished models, "
            f"{t['benchmarks_new']} new benchmarks, {t['values_moved']} values moved; 'evalhouse changes' shows them)",
            highlight=False,
            markup=False,
        )
    if not night.ok:
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
    with guard():
        result = house(ctx, db).ingest(
            key,
            locations or (),
            targets=targets,
            named=named,
            mirror=mirror,
            accept_drift=accept_drift,
            validate=not skip_validation,
        )
    _report_run(result, json_out, title=f"ingest {key}")


def reparse(
    ctx: typer.Context,
    source: Annotated[str, typer.Option("--source", "-s", help="The source whose rows to rebuild.")],
    skip_validation: SkipValidation = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Rebuild a source's rows from the raw store with the current parser and registries (no fetching)."""
    with guard():
        result = house(ctx, db).reparse(source, validate=not skip_validation)
    _report_run(result, json_out, title=f"reparse {source}")


def _report_run(result: "RunResult", json_out: bool, *, title: str) -> None:
    """Print one source's run; exit 1 if it failed."""
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
    with guard():
        written = house(ctx, db).export_mirror(directory)
    _print_mirror(directory, written, json_out)


def mirror_from_shared(
    directory: Annotated[Path, typer.Argument(help="Where to write the mirror tree.")],
    shared: Annotated[
        Path, typer.Option(help="The pinned datasets folder (the repository's ../shared).")
    ] = DEFAULT_SHARED,
    fixtures: Annotated[
        Path, typer.Option(help="The recorded real payloads of the sources (the repository's tests/fixtures).")
    ] = DEFAULT_FIXTURES,
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
    from evalhouse.app import mirror_from_shared as build

    with guard():
        written = build(directory, shared=shared, fixtures=fixtures)
    _print_mirror(directory, written, json_out)


def _print_mirror(directory: Path, written: dict[str, Path], json_out: bool) -> None:
    if json_out:
        emit_json({"directory": str(directory), "files": {k: str(v) for k, v in written.items()}})
    else:
        for url, file in written.items():
            out.print(f"{url} -> {file}", highlight=False, markup=False)


def register(app: typer.Typer) -> None:
    app.command("sources")(sources)
    app.command("refresh")(refresh)
    app.command("ingest")(ingest)
    app.command("reparse")(reparse)
    mirror = typer.Typer(help="Mirrors: pinned payload trees that 'refresh --mirror' replays.", no_args_is_help=True)
    mirror.command("export")(mirror_export)
    mirror.command("from-shared")(mirror_from_shared)
    app.add_typer(mirror, name="mirror")
