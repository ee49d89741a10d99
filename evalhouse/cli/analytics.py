"""Analysis commands: the `analyze` and `reproduce` groups, `compare` and `report`.

The commands themselves live beside their analyses (``factor_commands``: EFA, the factor grid,
paper 000; ``equate_commands``: equating, task comparison, paper 004); this module makes the
groups and the HTML report that gathers both.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from evalhouse.cli._common import JsonFlag, db_path, emit_json, fail, out
from evalhouse.warehouse.db import Warehouse, WarehouseError


def report(
    ctx: typer.Context,
    output: Annotated[Path, typer.Option("--output", "-o", help="Where to write the HTML page.")] = Path(
        "reports/evalhouse.html"
    ),
    snapshot: Annotated[
        Path | None, typer.Option(help="Report on this snapshot directory instead of the warehouse.")
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """Write a self-contained HTML report (figures embedded as PNG) of the analyses.

    Sections: the factor structure of the Artificial Analysis snapshot (scree with the
    parallel-analysis curve, loadings raw vs date-adjusted, first-factor score vs release date,
    the prediction ladder's dMSE forest plot) and the equated ability scale of the Epoch hub
    (theta vs release date, benchmark characteristic curves). Sections whose data is not in the
    warehouse say so instead of failing.
    """
    from evalhouse.analytics.report import write_report

    try:
        if snapshot is not None:
            from evalhouse.warehouse.snapshot import open_snapshot

            con = open_snapshot(snapshot)
            summary = write_report(con, output, writable=None)
        else:
            with Warehouse.open(db_path(ctx)) as wh:
                summary = write_report(wh.con, output, writable=wh)
    except WarehouseError as exc:
        raise fail(str(exc)) from exc
    if json_out:
        emit_json(summary)
    else:
        out.print(f"wrote {output} ({summary['bytes']:,} bytes, {len(summary['sections'])} sections)")
        for section in summary["sections"]:
            out.print(f"  {section['title']}: {section['status']}")


def register(app: typer.Typer) -> None:
    from evalhouse.cli import equate_commands, factor_commands

    analyze = typer.Typer(help="Run an analysis on the warehouse, a snapshot or a CSV.", no_args_is_help=True)
    reproduce = typer.Typer(help="Reproduce a paper's headline numbers next to the paper's.", no_args_is_help=True)
    factor_commands.register(analyze, reproduce, app)
    equate_commands.register(analyze, reproduce, app)
    app.add_typer(analyze, name="analyze")
    app.add_typer(reproduce, name="reproduce")
    app.command("report")(report)
