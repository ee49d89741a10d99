"""The ``evalhouse`` command: one typer app, one module per command group.

``app`` (``from evalhouse.cli import app``) has every command. The console script (:func:`main`)
builds only the module(s) of the command it was asked for: typer reads the signature of every
registered command at each start, so a full app costs ``stats`` or a quiet ``refresh`` tens of
milliseconds for commands it never runs. ``--help``, no command or an unknown one get all of them.

No module of this package says ``from __future__ import annotations``. typer reads each command's
parameters from its annotations, and annotations kept as strings are compiled and evaluated anew
each time an app is built: about 65 ms for the whole app, against 17 ms with annotations that
are already objects (``typer.main.get_command(app)`` on this 2-core machine, idle). A type
imported only for checking is quoted where it is used.
"""

import gc
import importlib
import os
import sys
from typing import Annotated, Any

import typer

#: Command modules in registration order ('items' adds 'analyze items' to the group 'analytics' makes).
MODULES = (
    "warehouse",
    "ingest",
    "curate",
    "models",
    "validate",
    "audit",
    "snapshot",
    "sql",
    "site",
    "analytics",
    "items",
    "changes",
)
#: Top-level command -> the modules that register it (tests/cli/test_cli.py checks it against ``app``).
COMMAND_MODULES: dict[str, tuple[str, ...]] = {
    **dict.fromkeys(("migrate", "stats", "import-eee", "export-eee"), ("warehouse",)),
    **dict.fromkeys(("sources", "refresh", "ingest", "reparse", "mirror"), ("ingest",)),
    **dict.fromkeys(("curate", "dates", "quarantine"), ("curate",)),
    "models": ("models",),
    "validate": ("validate",),
    **dict.fromkeys(("audit", "conflicts"), ("audit",)),
    "snapshot": ("snapshot",),
    "sql": ("sql",),
    "site": ("site",),
    **dict.fromkeys(("compare", "report", "reproduce"), ("analytics",)),
    **dict.fromkeys(("analyze", "simulate-panel"), ("analytics", "items")),
    "changes": ("changes",),
}
#: Global options that take a value (so the token after them is not the command).
_VALUED = ("--db", "--wait")


def _new_app() -> typer.Typer:
    return typer.Typer(
        name="evalhouse",
        help=(
            "A curated, hash-pinned warehouse of AI evaluation results.\n\n"
            "Sources are fetched into a content-addressed raw store, parsed into Every Eval Ever "
            "records, validated, canonicalised and loaded into one DuckDB file. Start with "
            "'evalhouse refresh' (or 'make run'), look with 'evalhouse stats', trace a number with "
            "'evalhouse audit', freeze with 'evalhouse snapshot create'."
        ),
        epilog=(
            "One process's resources: $EVALHOUSE_MEMORY_LIMIT bounds DuckDB's memory (e.g. 512MB) and"
            " $EVALHOUSE_THREADS the threads a query runs on (e.g. 1, where jobs run side by side);"
            " see docs/operations.md."
        ),
        no_args_is_help=True,
        rich_markup_mode="rich",
        pretty_exceptions_enable=False,
    )


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


def build_app(modules: tuple[str, ...] = MODULES) -> typer.Typer:
    """A typer app with the commands of ``modules`` (names from :data:`MODULES`)."""
    # Imported here so `evalhouse --help` lists every group and a group's heavy imports
    # (sklearn, great-expectations) load only when one of its commands runs.
    built = _new_app()
    built.callback()(_root)
    for name in MODULES:
        if name in modules:
            importlib.import_module(f"evalhouse.cli.{name}").register(built)
    return built


_full: typer.Typer | None = None


def __getattr__(name: str) -> Any:
    """``app``: the app with every command, built on first use."""
    global _full  # noqa: PLW0603 - one app per process, built when first asked for
    if name == "app":
        if _full is None:
            _full = build_app()
        return _full
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def command_of(argv: list[str]) -> str | None:
    """The top-level command ``argv`` (without the program name) runs, or None (help, nothing)."""
    skip = False
    for token in argv:
        if skip:
            skip = False
        elif token in _VALUED:
            skip = True
        elif not token.startswith("-"):
            return token
    return None


def modules_for(argv: list[str]) -> tuple[str, ...]:
    """The command modules the console script builds for ``argv`` (without the program name):
    the command's own, or all of them for help, no command or an unknown one."""
    return COMMAND_MODULES.get(command_of(argv) or "", MODULES)


def main() -> None:
    # pydantic looks for third-party plugins in every installed distribution's entry points when it
    # builds its first validator (~20 ms of each command); the command runs none (a value set in
    # the environment is kept)
    os.environ.setdefault("PYDANTIC_DISABLE_PLUGINS", "__all__")
    try:
        build_app(modules_for(sys.argv[1:]))()
    finally:
        _ending()


def _ending() -> None:
    """The process ends after its command: what is alive now lives until then, so the cycle
    collector stops looking at it. The interpreter's shutdown runs the collector over the whole
    heap several times while it clears modules (≈ 85 ms of a refresh of the two pinned sources,
    a twentieth of it); frozen objects are skipped there. Everything is still released by
    reference counting, and exit handlers, flushes and closes run as always; only garbage in
    reference cycles is left to the operating system, as Python never promises to collect it at
    exit."""
    gc.freeze()
