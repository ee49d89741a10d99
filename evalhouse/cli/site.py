"""``evalhouse site``: the static explorer of a snapshot."""

from pathlib import Path
from typing import Annotated

import typer

from evalhouse.cli._common import (
    DbOption,
    JsonFlag,
    KeepOption,
    SnapshotOption,
    console,
    emit_json,
    escape,
    guard,
    house,
    out,
    print_pin,
)


def site(
    ctx: typer.Context,
    out_dir: Annotated[Path, typer.Argument(help="Folder to write the site into (new, empty, or an earlier site).")],
    snapshot: SnapshotOption = None,
    analyses: Annotated[
        bool,
        typer.Option(
            "--analyses/--no-analyses",
            help="Show the report's analyses: as recorded for the snapshot, else fitted now (minutes).",
        ),
    ] = True,
    record: Annotated[
        bool,
        typer.Option(
            "--record/--no-record",
            help="Record the analyses fitted for the site (with the figures drawn) into the warehouse at --db.",
        ),
    ] = True,
    keep: KeepOption = 5,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Build a static, self-contained explorer of a snapshot: open OUT_DIR/index.html, or serve the
    folder from any static host.

    Pages: an index with search over models and benchmarks; one page per base model (its
    configurations, every score with its source, tier and who ran it, cells where sources disagree
    highlighted, release-date evidence); one per benchmark (every model on the canonical metric,
    family and version links); an audit page per evaluation record (each score's raw sha256, URL,
    locator and canonicalisation steps); the analyses' figures; the warehouse's great-expectations
    Data Docs when 'evalhouse validate --docs' built them; "What's new": the run report the
    warehouse's last refresh wrote (as 'evalhouse changes' prints it). Tables sort on a click; every page is
    readable with JavaScript off. Without --snapshot the live warehouse is frozen first, into
    <db>.snapshots/ (an unchanged warehouse reuses its earlier snapshot without writing; the --keep N
    pins used most recently stay, older pin folders are removed). The site is written beside OUT_DIR
    and moved into place at the end: an interrupted build leaves nothing.

    Analyses: the sections 'evalhouse report' or an earlier site recorded for the snapshot in the
    warehouse at --db are shown as recorded (nothing is refitted); only the missing ones are fitted,
    and recorded there (unless --no-record) so the next site of that snapshot reuses them.
    """
    with guard():
        built = house(ctx, db).site(out_dir, snapshot=snapshot, analyses=analyses, record=record, keep=keep)
    if built.frozen is not None:
        print_pin(built.frozen)
    for note in built.notes:
        console.print(f"[yellow]note:[/] {escape(note)}", highlight=False)
    summary = built.summary
    if json_out:
        emit_json(summary.as_dict())
        return
    pages = ", ".join(f"{n:,} {kind}" for kind, n in summary.pages.items())
    out.print(f"site of snapshot {summary.snapshot_id} → {summary.out_dir}/index.html ({pages})", highlight=False)
    for section in summary.analyses:
        how = "as recorded, nothing refitted" if section["reused"] else "drawn now"
        out.print(f"  {section['title']}: {section['status']} ({section['figures']} figures; {how})", highlight=False)
    if summary.data_docs:
        out.print(f"  Data Docs: {summary.out_dir / summary.data_docs}", highlight=False)


def register(app: typer.Typer) -> None:
    app.command("site")(site)
