"""The validate command: run the great-expectations suites on demand and store their results."""

from typing import TYPE_CHECKING, Annotated

import typer
from rich.markup import escape
from rich.table import Table

from evalhouse.cli._common import DbOption, JsonFlag, console, emit_json, guard, house, out

if TYPE_CHECKING:
    from evalhouse.app.results import ValidationSummary

STYLE = {"passed": "green", "failed": "bold red", "warning": "yellow"}


def validate(
    ctx: typer.Context,
    docs: Annotated[
        bool,
        typer.Option("--docs", help="Also build great-expectations Data Docs in the project folder and print where."),
    ] = False,
    db: DbOption = None,
    json_out: JsonFlag = False,
) -> None:
    """Run the validation suites (great-expectations) on the whole warehouse.

    The same checkpoint runs after every load: referential integrity (scores -> evaluation,
    model configuration, benchmark, metric; evaluation -> raw snapshot; configuration -> base
    model), no model or benchmark without current scores, values within their metric's bounds,
    unique fingerprints, release dates between 2015 and today, and (warning only) benchmarks with
    fewer than 5 rows. One validation_result row per expectation is stored, and great-expectations'
    own results go to the warehouse's GX project folder beside it (<db stem>.gx/). --docs then
    builds GX Data Docs there (open the printed index.html; 'evalhouse site' links them). Exit
    code 1 when an error-level expectation fails; warnings never fail.
    """
    with guard():
        done = house(ctx, db).validate(docs=docs)
    if json_out:
        emit_json(done.as_dict())
    else:
        _print(done.summary)
        if done.data_docs:
            out.print(f"Data Docs: {done.data_docs}", highlight=False, markup=False)
    if not done.success:
        raise typer.Exit(1)


def _print(summary: "ValidationSummary") -> None:
    table = Table(title=f"validation {summary.validation_id}")
    for col in ("suite", "expectation", "level", "result"):
        table.add_column(col)
    for o in summary.outcomes:
        status = "passed" if o.success else ("failed" if o.level == "error" else "warning")
        table.add_row(o.suite, o.name, o.level, f"[{STYLE[status]}]{status}[/]")
    out.print(table)
    for o in summary.outcomes:
        if not o.success:
            out.print(f"{o.level} {o.qualified_name}: {o.explain()}", markup=False, highlight=False, soft_wrap=True)
    rows = ", ".join(f"{n:,} {name}" for name, n in summary.frame_rows.items())
    setup = f" (+ {summary.setup_s:.1f} s loading great-expectations)" if summary.setup_s > 0.05 else ""
    console.print(f"checked {rows} in {summary.duration_s:.2f} s{setup}", highlight=False, soft_wrap=True)
    if summary.success:
        console.print(f"[green]ok[/]: {escape(summary.message())}", highlight=False, soft_wrap=True)
    else:
        console.print(f"[bold red]failed[/]: {escape(summary.message())}", highlight=False, soft_wrap=True)


def register(app: typer.Typer) -> None:
    app.command("validate")(validate)
