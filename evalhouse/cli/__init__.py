"""The ``evalhouse`` command: one typer app, one module per command group."""

from __future__ import annotations

from typing import Annotated

import typer

app = typer.Typer(
    name="evalhouse",
    help=(
        "A curated, hash-pinned warehouse of AI evaluation results.\n\n"
        "Sources are fetched into a content-addressed raw store, parsed into Every Eval Ever "
        "records, validated, canonicalised and loaded into one DuckDB file. Start with "
        "'evalhouse refresh' (or 'make run'), look with 'evalhouse stats', trace a number with "
        "'evalhouse audit', freeze with 'evalhouse snapshot create'."
    ),
    no_args_is_help=True,
    rich_markup_mode="rich",
    pretty_exceptions_enable=False,
)


@app.callback()
def _root(
    ctx: typer.Context,
    db: Annotated[
        str | None,
        typer.Option(
            "--db",
            help="Warehouse file. Default: $EVALHOUSE_DB, else ./warehouse.duckdb.",
            metavar="PATH",
        ),
    ] = None,
    wait: Annotated[
        float | None,
        typer.Option(
            "--wait",
            help="Seconds a reader waits while a writer holds the warehouse for a load transaction, then fails"
            " naming it. Default: $EVALHOUSE_WAIT, else 5.",
            metavar="SECONDS",
            min=0,
        ),
    ] = None,
) -> None:
    from evalhouse.cli._common import configure_output
    from evalhouse.config import set_reader_wait

    ctx.obj = {"db": db}
    set_reader_wait(wait)
    configure_output()


def _register() -> None:
    # Imported here so `evalhouse --help` lists every group and a group's heavy imports
    # (sklearn, great-expectations) load only when one of its commands runs.
    from evalhouse.cli import analytics, audit, curate, ingest, items, models, site, snapshot, sql, validate, warehouse

    warehouse.register(app)
    ingest.register(app)
    curate.register(app)
    models.register(app)
    validate.register(app)
    audit.register(app)
    snapshot.register(app)
    sql.register(app)
    site.register(app)
    analytics.register(app)
    items.register(app)  # after analytics: adds 'analyze items' to its group


_register()


def main() -> None:
    app()
