"""Analysis commands: the `analyze` and `reproduce` groups, `compare` and `report`.

The commands themselves live beside their analyses (``factor_commands``: EFA, the factor grid,
paper 000; ``equate_commands``: equating, task comparison, paper 004, the ECI); this module makes
the groups and the HTML report that gathers both. Every command calls one
:mod:`evalhouse.analytics.runs` function; the shared rules are in :mod:`evalhouse.cli._analysis`.
"""

from pathlib import Path
from typing import Annotated, Any

import typer

from evalhouse.cli._analysis import RecordFlag, run, with_rules
from evalhouse.cli._common import DbOption, JsonFlag, KeepOption, SnapshotOption, house, out, print_pin


@with_rules()
def report(
    ctx: typer.Context,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML page.")] = Path(
        "reports/evalhouse.html"
    ),
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    live: Annotated[
        bool,
        typer.Option(
            "--live",
            help="Read the live warehouse read-only (pinned to its content hash) instead of freezing it first.",
        ),
    ] = False,
    welfare: Annotated[
        Path | None,
        typer.Option(
            "--welfare",
            metavar="DIR",
            help="WORKBank-format folder (task_ratings.csv, task_gwa.csv, item_gwa_rankings.csv) for the item"
            " section's welfare landscape, as for 'analyze items --welfare'.",
        ),
    ] = None,
    record: RecordFlag = True,
    keep: KeepOption = 5,
    json_out: JsonFlag = False,
) -> None:
    """Write a self-contained HTML report (figures embedded as PNG) of the analyses.

    Sections: the factor structure of the Artificial Analysis snapshot (scree with the
    parallel-analysis curve, loadings raw vs date-adjusted, first-factor score vs release date,
    the prediction ladder's dMSE forest plot), the equated ability scale of the Epoch hub
    (theta vs release date with CIs, benchmark characteristic curves) and, where the input holds
    item responses, the item audit (cost/noise, cheapest axis, welfare landscape; the newest
    stored 'analyze items' run, else fitted for the page; --welfare adds the welfare landscape;
    a snapshot holds no analysis results, so on one the audit is always fitted). Sections whose data is not in the
    input say so instead of failing. Every fit behind a section is recorded, with the section as drawn.

    A section already recorded for the same input (snapshot id or warehouse-state id) by this version
    of evalhouse, with its fits still recorded, is reused as it was drawn: only the missing ones are fitted.

    The page is pinned to a snapshot: --snapshot DIR, else the live warehouse is frozen first into
    <db>.snapshots/ (an unchanged warehouse reuses its earlier snapshot without writing, as
    'evalhouse site' does; the --keep N pins used most recently stay, older pin folders are removed);
    --live skips the freeze and pins to the warehouse's content hash (warehouse-state:...).
    """
    where = house(ctx, db)

    def call() -> Any:
        outcome = where.report(output, snapshot=snapshot, live=live, welfare=welfare, record=record, keep=keep)
        if frozen := outcome.extra.get("frozen"):
            print_pin(frozen)
        return outcome

    run(call, _print_report, json_out)


def _print_report(summary: dict[str, Any]) -> None:
    out.print(f"wrote {summary['output']} ({summary['bytes']:,} bytes, {len(summary['sections'])} sections)")
    for section in summary["sections"]:
        reused = " (as recorded for this input: nothing refitted)" if section.get("reused") else ""
        out.print(f"  {section['title']}: {section['status']}{reused}", highlight=False)


def register(app: typer.Typer) -> None:
    from evalhouse.cli import equate_commands, factor_commands

    analyze = typer.Typer(help="Run an analysis on the warehouse, a snapshot or a CSV.", no_args_is_help=True)
    reproduce = typer.Typer(help="Reproduce a paper's headline numbers next to the paper's.", no_args_is_help=True)
    factor_commands.register(analyze, reproduce, app)
    equate_commands.register(analyze, reproduce, app)
    app.add_typer(analyze, name="analyze")
    app.add_typer(reproduce, name="reproduce")
    app.command("report")(report)
