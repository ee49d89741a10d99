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

import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, NoReturn, TextIO

import typer

from evalhouse.common import progress
from evalhouse.common.jsonable import dumps
from evalhouse.config import resolve_db_path
from evalhouse.errors import EXIT_INTERRUPTED, EXIT_USAGE, EvalhouseError, RunFailed

if TYPE_CHECKING:
    from rich.console import Console
    from rich.progress import Progress, TaskID

    from evalhouse.app import House

#: Width tables are laid out at when the stream is not a terminal: wide enough that rich never
#: cuts a value to "…" (a nightly log exists to show whole source keys, ids and dates).
UNBOUNDED_WIDTH = 100_000


class LazyConsole:
    """A rich ``Console`` made when something is first printed through it.

    Importing rich is ~30 ms, and a command that writes JSON (a nightly ``refresh --json``) or
    nothing prints nothing through it. Every attribute is the console's own; :attr:`console` is
    the console itself, for rich APIs that take one (a progress bar).
    """

    def __init__(self, **options: Any) -> None:
        self.__dict__.update(_options=options, _console=None, _width=("keep", None))

    @property
    def console(self) -> "Console":
        if self._console is None:
            made = _safe_console_class()(**self._options)
            self.__dict__["_console"] = made
            self._apply(made)
        return self._console

    def lay_out(self, width: int | None) -> None:
        """Tables at the terminal's width (None), or at ``width`` (when not a terminal)."""
        self.__dict__["_width"] = ("set", width)
        if self._console is not None:
            self._apply(self._console)

    def _apply(self, made: "Console") -> None:
        how, width = self._width
        if how == "set" and width is None:
            made._width = None  # back to the terminal's own width
        elif how == "set":
            made.width = width

    def __getattr__(self, name: str) -> Any:
        return getattr(self.console, name)

    def __setattr__(self, name: str, value: Any) -> None:
        setattr(self.console, name, value)


def _safe_console_class() -> type["Console"]:
    """rich's Console, writing the control characters of every string it is given as visible
    escapes (a value from the data can carry ``ESC [2J`` or an OSC sequence; rich itself only drops
    a few codes such as BEL). rich's own styling is not a string it is given, so it stays."""
    from rich.console import Console

    from evalhouse.common.safe_text import printable

    class SafeConsole(Console):
        def render_str(self, text: str, **kwargs: Any) -> Any:
            return super().render_str(printable(text), **kwargs)

    return SafeConsole


console = LazyConsole(stderr=True, soft_wrap=True)  # messages carry paths; never break them
out = LazyConsole(soft_wrap=True)


def escape(text: str) -> str:
    """rich's markup escape (rich loads when it is first needed)."""
    from rich.markup import escape as rich_escape

    return rich_escape(text)


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


def house(ctx: typer.Context, db: str | None = None) -> "House":
    """The house of the warehouse :func:`db_path` names (nothing is opened until a call needs it)."""
    from evalhouse.app import House

    return House.open(db_path(ctx, db))


def is_terminal(stream: TextIO | None = None) -> bool:
    stream = stream or sys.stdout
    isatty = getattr(stream, "isatty", None)
    return bool(isatty and isatty())


def configure_output() -> None:
    """Lay tables out at the terminal's width on a terminal, and never truncate anywhere else.

    Called once per command (the root callback), when the streams the command writes to are
    known (a test runner replaces them).
    """
    for con, stream in ((out, sys.stdout), (console, sys.stderr)):
        con.lay_out(None if is_terminal(stream) else UNBOUNDED_WIDTH)


def shown(value: str | None, n: int = 16) -> str:
    """A long hash or id shortened to ``n`` characters on a terminal, whole in a log or pipe."""
    if value is None:
        return ""
    return value[:n] + "…" if is_terminal() and len(value) > n else value


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


def _interrupted(exc: BaseException) -> bool:
    """Ctrl-C, also when DuckDB caught the signal first: it then raises its own InterruptException,
    or a RuntimeError "Query interrupted" from a query run inside a Python call."""
    seen: BaseException | None = exc
    duckdb = sys.modules.get("duckdb")
    interrupt = getattr(duckdb, "InterruptException", ()) if duckdb is not None else ()
    while seen is not None:
        if isinstance(seen, KeyboardInterrupt) or (interrupt and isinstance(seen, interrupt)):
            return True
        if isinstance(seen, RuntimeError) and str(seen).strip() == "Query interrupted":
            return True
        seen = seen.__cause__ or seen.__context__
    return False


@contextmanager
def guard() -> Iterator[None]:
    """Map evalhouse's errors to their exit codes and Ctrl-C to "interrupted" (exit 130).

    Long steps inside the block report progress: a bar with counts and ETA on a terminal, a
    plain log line every :data:`LOG_EVERY_S` seconds elsewhere (see :mod:`evalhouse.common.progress`).
    """
    try:
        with progress.reporting(_reporter()):
            yield
    except EvalhouseError as exc:
        raise fail(str(exc), exc.exit_code) from exc
    except BaseException as exc:
        if not _interrupted(exc):
            raise
        console.print("interrupted", highlight=False)
        raise typer.Exit(EXIT_INTERRUPTED) from None


# -- progress display -------------------------------------------------------------------------

#: A step shorter than this shows nothing (quick commands stay quiet, their output unchanged).
QUIET_FOR_S = 2.0
#: Off a terminal, one line per running step at most this often.
LOG_EVERY_S = 10.0


def _reporter() -> progress.Reporter:
    return _BarReporter() if is_terminal(sys.stderr) else _LogReporter(sys.stderr)


def _eta(done: int, total: int | None, elapsed: float) -> str:
    if not total or done <= 0 or done >= total:
        return ""
    return f", eta {elapsed / done * (total - done):.0f} s"


class _LogReporter:
    """Plain lines on stderr for cron and CI logs: ``[12 s] refresh: 3/12 (25%), eta 36 s — helm``."""

    def __init__(self, stream: TextIO) -> None:
        self.stream = stream

    def begin(self, label: str, total: int | None) -> dict[str, Any]:
        now = time.monotonic()
        return {"label": label, "start": now, "last": now, "said": False, "done": 0, "total": total, "note": None}

    def update(self, handle: object, *, done: int, total: int | None, note: str | None) -> None:
        assert isinstance(handle, dict)
        handle.update(done=done, total=total, note=note)
        now = time.monotonic()
        if now - handle["start"] >= QUIET_FOR_S and now - handle["last"] >= LOG_EVERY_S:
            self._say(handle, now)

    def end(self, handle: object) -> None:
        assert isinstance(handle, dict)
        now = time.monotonic()
        if handle["said"] or now - handle["start"] >= QUIET_FOR_S:
            self._say(handle, now, final=True)

    def _say(self, h: dict[str, Any], now: float, final: bool = False) -> None:
        elapsed = now - h["start"]
        count = f"{h['done']:,}/{h['total']:,}" if h["total"] else f"{h['done']:,}"
        pct = f" ({100 * h['done'] / h['total']:.0f}%)" if h["total"] else ""
        tail = " done" if final else _eta(h["done"], h["total"], elapsed)
        note = f" ({h['note']})" if h["note"] and not final else ""
        from evalhouse.common.safe_text import printable  # a label or note can name a collection from the data

        self.stream.write(printable(f"[{elapsed:.0f} s] {h['label']}: {count}{pct}{tail}{note}") + "\n")
        self.stream.flush()
        h["last"], h["said"] = now, True


class _BarReporter:
    """A rich progress bar per step on the terminal (counts, elapsed, ETA), gone when it ends."""

    def __init__(self) -> None:
        self._bar: Progress | None = None
        self._open = 0

    def begin(self, label: str, total: int | None) -> "TaskID":
        if self._bar is None:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                SpinnerColumn,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self._bar = Progress(
                SpinnerColumn(),
                TextColumn("{task.description}"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                TextColumn("eta"),
                TimeRemainingColumn(),
                TextColumn("{task.fields[note]}"),
                console=console.console,
                transient=True,
            )
            self._bar.start()
        self._open += 1
        return self._bar.add_task(label, total=total, note="")

    def update(self, handle: object, *, done: int, total: int | None, note: str | None) -> None:
        if self._bar is not None:
            self._bar.update(handle, completed=done, total=total, note=note or "")  # type: ignore[arg-type]

    def end(self, handle: object) -> None:
        if self._bar is None:
            return
        self._bar.remove_task(handle)  # type: ignore[arg-type]
        self._open -= 1
        if self._open == 0:
            self._bar.stop()
            self._bar = None


# -- rows of a query ----------------------------------------------------------------------------


#: Rows a query prints when no --limit is given.
DEFAULT_ROW_LIMIT = 10_000
RawFlag = Annotated[
    bool,
    typer.Option(
        "--raw",
        help="CSV/TSV cells exactly as stored: no ' before a cell a spreadsheet would run as a formula "
        "(=, +, -, @, tab), and control characters written as they are even on a terminal.",
    ),
]
RowLimitOption = Annotated[
    int | None,
    typer.Option(
        "--limit",
        help=f"Stop after this many rows (0 = all; rows are fetched in chunks either way). Without it, at most "
        f"{DEFAULT_ROW_LIMIT:,}: on a terminal a note says so; in a pipe or file more rows exit 1, so a "
        "script never takes a cut result for the whole.",
        min=0,
        metavar="N",
    ),
]


TimeoutOption = Annotated[
    float | None,
    typer.Option(
        "--timeout",
        help="Stop the query after this many seconds, its rows' fetching and output included (0 = no timeout). "
        "Default $EVALHOUSE_SQL_TIMEOUT, else 120.",
        metavar="SECONDS",
    ),
]
MemoryLimitOption = Annotated[
    str | None,
    typer.Option(
        "--memory-limit",
        help="DuckDB's memory limit for the query; beyond it DuckDB spills to disk or stops the query. "
        "Default $EVALHOUSE_SQL_MEMORY_LIMIT, else $EVALHOUSE_MEMORY_LIMIT, else 2GB.",
        metavar="SIZE",
    ),
]
TempLimitOption = Annotated[
    str | None,
    typer.Option(
        "--temp-limit",
        help="How much the query may spill to disk (a private folder, removed after). "
        "Default $EVALHOUSE_SQL_TEMP_LIMIT, else 4GB.",
        metavar="SIZE",
    ),
]


def row_limit(limit: int | None) -> int | None:
    """The rows a query may print: ``--limit`` (0 = all), else :data:`DEFAULT_ROW_LIMIT`."""
    if limit is None:
        return DEFAULT_ROW_LIMIT
    return limit or None


def print_rows(
    result: Any, *, json_out: bool = False, csv_out: bool = False, raw: bool = False, limit_given: bool = True
) -> int:
    """Write a :class:`~evalhouse.warehouse.sql_guard.GuardedResult` as it is fetched.

    ``--json``: one JSON array, streamed record by record (NaN/Infinity as null); ``--csv``: a
    header and RFC 4180 rows; otherwise a table on a terminal, tab-separated values elsewhere.
    CSV and TSV cells a spreadsheet would evaluate get a ``'`` first, and on a terminal control
    characters are written as escapes, unless ``raw`` (a table always escapes them). Returns the
    number of rows written. When the limit stopped it, a note on stderr says so; when that limit
    is the default (``limit_given`` false) and stdout is not a terminal, it is an error (exit 1)
    after the rows.
    """
    if json_out:
        n = _stream_json(result)
    elif csv_out or not is_terminal():
        n = _stream_delimited(result, "," if csv_out else "\t", raw=raw)
    else:
        from rich.table import Table

        grid = Table()
        for name in result.columns:
            grid.add_column(name)
        for row in result.rows():
            grid.add_row(*("" if v is None else str(v) for v in row))
        out.print(grid)  # control characters as escapes, --raw or not: a table is for reading
        n = result.fetched
        console.print(f"{n:,} row(s)", highlight=False)
    if result.truncated:
        if not limit_given and not is_terminal():
            raise RowCapReached(
                f"stopped at the default limit of {result.limit:,} rows and more rows exist: the output is "
                "not the whole result. Give --limit N to take N rows, or --limit 0 for all"
            )
        console.print(
            f"stopped at --limit {result.limit:,} rows; more rows exist (raise --limit, or --limit 0 for all)",
            highlight=False,
        )
    return n


class RowCapReached(RunFailed):
    """A query's rows stopped at the default limit where no one sees the note (exit 1)."""


def _stream_json(result: Any) -> int:
    write = sys.stdout.write
    write("[")
    n = 0
    for record in result.records():
        write(("," if n else "") + "\n  " + dumps(record))
        n += 1
    write("\n]\n" if n else "]\n")
    return n


def _stream_delimited(result: Any, sep: str, *, raw: bool = False) -> int:
    import csv

    from evalhouse.common.jsonable import to_jsonable
    from evalhouse.common.safe_text import printable, spreadsheet_safe

    on_terminal = is_terminal()

    def text(value: str) -> str:
        if raw:
            return value
        return printable(spreadsheet_safe(value)) if on_terminal else spreadsheet_safe(value)

    def cell(value: Any) -> Any:
        plain = to_jsonable(value)
        if isinstance(plain, dict | list):
            # CSV: JSON (a machine reads it); TSV: the form the terminal shows (['a', 'b']), which
            # has no double quotes for the writer to quote and double
            return text(dumps(plain) if sep == "," else repr(plain))
        return "" if plain is None else text(plain) if isinstance(plain, str) else plain

    writer = csv.writer(sys.stdout, delimiter=sep, lineterminator="\n")
    # csv quotes a field holding the line terminator ("\n") but not a lone "\r", which every reader
    # takes for the end of the row: a row with one is written with each field quoted
    quoted = csv.writer(sys.stdout, delimiter=sep, lineterminator="\n", quoting=csv.QUOTE_ALL)

    def write(cells: list[Any]) -> None:
        (quoted if any(isinstance(c, str) and "\r" in c for c in cells) else writer).writerow(cells)

    write([cell(c) for c in result.columns])
    for row in result.rows():
        write([cell(v) for v in row])
    return result.fetched


KeepOption = Annotated[
    int,
    typer.Option(
        "--keep",
        min=1,
        metavar="N",
        help="Pins of the live warehouse to keep in <db>.snapshots/: the N used most recently stay, older pin "
        "folders are removed (folders made by 'snapshot create' never are).",
    ),
]


def print_pin(pin: Any) -> None:
    """One line for a pin of the live warehouse (``snapshot.pin.Pin``), one more when old pins went."""
    console.print(f"{'froze' if pin.created else 'reusing'} snapshot {pin.path}", highlight=False)
    if pin.pruned:
        names = ", ".join(p.name for p in pin.pruned)
        console.print(f"removed {len(pin.pruned)} older pin(s) beyond --keep: {names}", highlight=False)
