"""What the analysis commands share: the recording switch, the rules text, running and exiting.

Every analysis command follows the same rules (``RULES`` is appended to each ``--help``): input
from ``--snapshot DIR`` if given, else the live warehouse at ``--db`` opened read-only (the CSV
commands read ``--input FILE``); the run is pinned to the snapshot id, the warehouse's content
hash or the file's sha256; it is recorded into the warehouse at ``--db`` (created if missing)
unless ``--no-record``. Exit 0 ok, 1 a run or check failed or a reproduction is off, 2 bad input.
"""

import inspect
import math
from collections.abc import Callable
from pathlib import Path
from typing import Annotated, Any

import typer

from evalhouse.cli._common import console, db_path, emit_json, guard, out

RULES = (
    "\n\nInput: --snapshot DIR if given, else the live warehouse at --db opened read-only{csv}. "
    "The run is pinned to the snapshot id, on the live warehouse to its content hash (warehouse-state:...)"
    "{csv_pin}, and recorded with its results into the warehouse at --db (created if missing; the writer "
    "lock is taken only for that final transaction) unless --no-record. "
    "Exit codes: 0 ok; 1 the run or a check failed{off}; 2 bad input or usage."
)
CSV_RULES = (
    "\n\nInput: the CSV given with --input. The run is pinned to the file's sha256 (file-sha256:...) and "
    "recorded with its results into the warehouse at --db (created if missing; the writer lock is taken "
    "only for that final transaction) unless --no-record. Exit codes: 0 ok; 1 the run failed; 2 bad input or usage."
)

RecordFlag = Annotated[
    bool,
    typer.Option("--record/--no-record", help="Record the run and its results into the warehouse at --db."),
]


def rules(*, csv: bool = False, reproduction: bool = False) -> str:
    """The rules paragraph for a command's help (``csv``: it can also read ``--input FILE``)."""
    return RULES.format(
        csv=", or the CSV given with --input" if csv else "",
        csv_pin=", on a CSV to the file's sha256" if csv else "",
        off=", or a reproduction is off" if reproduction else "",
    )


def with_rules(
    *, csv: bool = False, csv_only: bool = False, reproduction: bool = False
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Decorator: append the rules paragraph to a command's docstring (its ``--help``)."""

    def apply(fn: Callable[..., Any]) -> Callable[..., Any]:
        extra = CSV_RULES if csv_only else rules(csv=csv, reproduction=reproduction)
        fn.__doc__ = inspect.cleandoc(fn.__doc__ or "") + extra
        return fn

    return apply


def target(ctx: typer.Context, db: str | None, record: bool) -> tuple[Path, Path | None]:
    """``(warehouse read when there is no snapshot, warehouse recorded into or None)``."""
    path = db_path(ctx, db)
    return path, (path if record else None)


def run(call: Callable[[], Any], printer: Callable[[dict[str, Any]], None], json_out: bool) -> None:
    """Run one ``analytics.runs`` call under :func:`guard`, print its outcome, exit 1 when it is off."""
    with guard():
        outcome = call()
    payload = outcome.as_dict()
    if json_out:
        emit_json(payload)
    else:
        printer(payload | {"extra": outcome.extra} if outcome.extra else payload)
        if outcome.analysis_id:
            console.print(f"recorded as analysis {outcome.analysis_id} in {outcome.recorded_in}", highlight=False)
        else:
            console.print("not recorded (--no-record)", highlight=False)
    if not outcome.ok:
        raise typer.Exit(1)


def split(value: str) -> tuple[str, ...]:
    return tuple(part.strip() for part in value.split(",") if part.strip())


def num(value: Any, digits: int = 3) -> str:
    """A number for a table cell; None and non-finite values as an em dash."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return "—"
    if isinstance(value, bool):
        return str(value)
    if isinstance(value, int):
        return str(value)
    return f"{float(value):.{digits}f}"


def print_kept(kept: dict[str, Any] | None, inputs: str) -> None:
    """The line under a table whose fit was read back from the kept fits (``inputs``: what was fitted)."""
    if kept:
        out.print(
            f"the fit was read back: these {inputs}, settings and code were fitted at {kept['fitted_at']} "
            f"(in {kept['fit_s']:.0f} s); EVALHOUSE_KEEP_FITS=0 fits again",
            highlight=False,
        )
