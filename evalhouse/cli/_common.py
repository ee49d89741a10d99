"""Pieces every command shares: option bundles, JSON output, the console, exit codes.

Exit codes are the same everywhere (see ``evalhouse --help``):

* 0 — done;
* 1 — a run, a load, a check or a comparison failed (the request was fine);
* 2 — bad input or usage (an unknown name, an unreadable file, a bad option);
* 130 — interrupted (Ctrl-C).

A command body raises :class:`evalhouse.errors.EvalhouseError` subclasses; :func:`guard` turns
them into a one-line message and the matching exit code, so no command prints a traceback for
an error evalhouse raised on purpose.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, NoReturn

import typer
from rich.console import Console
from rich.markup import escape

from evalhouse.common.jsonable import dumps
from evalhouse.config import resolve_db_path
from evalhouse.errors import EXIT_INTERRUPTED, EXIT_USAGE, EvalhouseError

console = Console(stderr=True, soft_wrap=True)  # messages carry paths; never break them
out = Console(soft_wrap=True)

JsonFlag = Annotated[bool, typer.Option("--json", help="Print one JSON document on stdout (for scripts).")]
DbOption = Annotated[
    str | None,
    typer.Option(
        "--db",
        help="Warehouse file (overrides the global --db). Default: $EVALHOUSE_DB, else ./warehouse.duckdb.",
        metavar="PATH",
    ),
]
SnapshotOption = Annotated[
    Path | None,
    typer.Option(
        "--snapshot",
        help="Read a frozen snapshot folder instead of the live warehouse (results are pinned to its id).",
        metavar="DIR",
    ),
]
SourceOption = Annotated[
    list[str] | None,
    typer.Option("--source", "-s", help="Only this source key (repeatable; see 'evalhouse sources').", metavar="KEY"),
]


def db_path(ctx: typer.Context, db: str | None = None) -> Path:
    """The warehouse path: a command's own ``--db``, else the root ``--db``, else env/default."""
    if db:
        return resolve_db_path(db)
    root = ctx.find_root()
    return resolve_db_path((root.obj or {}).get("db"))


def emit_json(payload: Any) -> None:
    """Strict JSON on stdout: NaN and infinities become null, never bare ``NaN``."""
    sys.stdout.write(dumps(payload, indent=2) + "\n")


def fail(message: str, code: int = 1) -> typer.Exit:
    """Print a one-line error and return the Exit to raise (``raise fail(...)``)."""
    console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, markup=True)
    return typer.Exit(code)


def usage_error(message: str) -> NoReturn:
    """Bad input or usage: print it and exit 2."""
    raise fail(message, EXIT_USAGE)


@contextmanager
def guard() -> Iterator[None]:
    """Map evalhouse's errors to their exit codes and Ctrl-C to "interrupted" (exit 130)."""
    try:
        yield
    except EvalhouseError as exc:
        raise fail(str(exc), exc.exit_code) from exc
    except KeyboardInterrupt:
        console.print("interrupted", highlight=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None
