"""What changed: per source, the runs since a moment and what they did to the source's board.

A window of runs per source — since the previous refresh of each source (the default), since a
run, since a date, or the runs of one refresh — is compared as two boards
(:mod:`evalhouse.pipeline.boards`): the board at the last refresh that loaded before the window
(the baseline) and the board at the last refresh that loaded in it. Only refreshes make boards:
they fetch the whole board, while ``ingest`` reads the files it is given (a file not given again
is not a vanished model), a reparse re-reads stored payloads and an EEE import its tree; those
runs are listed, not compared. A refresh that ends ``unchanged`` or ``recanonicalised`` left the
board as it was.

A refresh refused by a drift guard after reading the whole board (rows dropped, scale changed,
values out of bounds, mass quarantine) loads nothing, so the board stays; its payloads are kept,
and the report says what the refused board would have changed ("refused"), so the models a board
dropped are named even when the guard stopped them from vanishing here.

:func:`write_report` keeps the report of each refresh as JSON beside the warehouse
(``<db stem>.reports/refresh-<UTC time>.json`` and ``latest.json``) for monitors.
"""

from __future__ import annotations

import json
import os
from collections import defaultdict
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

from evalhouse.common.jsonable import dumps
from evalhouse.errors import InputError, NotFound
from evalhouse.ingest.catalog import get_source, source_keys
from evalhouse.pipeline.boards import DEFAULT_TOLERANCE, Board, BoardReader, compare
from evalhouse.warehouse import history

if TYPE_CHECKING:
    from evalhouse.warehouse.db import Warehouse

#: Run statuses that left a new board (a refresh that loaded rows).
BOARD_STATUSES = ("completed", "partial")
#: Drift guards that judge a whole fetched and parsed board (what it would have changed is known).
WHOLE_BOARD_GUARDS = frozenset({"row_drop", "scale", "bounds", "mass_quarantine"})
REPORT_FORMAT = 1
SinceKind = Literal["previous-refresh", "run", "date", "runs"]


@dataclass(frozen=True)
class Run:
    run_id: str
    source_key: str
    trigger: str
    status: str
    started_at: datetime
    finished_at: datetime | None
    loaded: int
    quarantined: int
    error: str | None
    guard: str | None

    @property
    def makes_board(self) -> bool:
        return self.trigger == "refresh" and self.status in BOARD_STATUSES

    def as_dict(self) -> dict[str, Any]:
        return {
            "run_id": self.run_id,
            "trigger": self.trigger,
            "status": self.status,
            "started_at": _iso(self.started_at),
            "finished_at": _iso(self.finished_at),
            "loaded": self.loaded,
            "quarantined": self.quarantined,
            "error": self.error,
            "guard": self.guard,
        }


@dataclass(frozen=True)
class Since:
    """Where a report's windows begin."""

    kind: SinceKind = "previous-refresh"
    at: datetime | None = None  # a run's start, or a date (naive UTC, as the warehouse stores times)
    run_id: str | None = None  # kind "run": the run named
    run_ids: frozenset[str] = frozenset()  # kind "runs": the runs of one refresh

    def describe(self) -> str:
        if self.kind == "run":
            return f"since run {self.run_id} (started {_iso(self.at)})"
        if self.kind == "date":
            return f"since {_iso(self.at)} UTC"
        if self.kind == "runs":
            return "the runs of this refresh"
        return "since the previous refresh of each source"

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "run_id": self.run_id, "at": _iso(self.at), "text": self.describe()}


def _iso(moment: datetime | None) -> str | None:
    return None if moment is None else moment.replace(tzinfo=None).isoformat(timespec="seconds") + "Z"


def all_runs(con: Any) -> list[Run]:
    return [Run(*row) for row in history.runs(con)]


def parse_since(con: Any, text: str | None) -> Since:
    """``--since``: a run id (or an unambiguous prefix of one), a date or a date and time (UTC)."""
    if text is None or not text.strip():
        return Since()
    text = text.strip()
    runs = all_runs(con)
    exact = [r for r in runs if r.run_id == text]
    matches = exact or [r for r in runs if r.run_id.startswith(text)]
    if len(matches) == 1:
        return Since("run", matches[0].started_at, run_id=matches[0].run_id)
    if len(matches) > 1:
        shown = ", ".join(r.run_id for r in matches[:5]) + (f" and {len(matches) - 5} more" if len(matches) > 5 else "")
        raise InputError(f"--since {text!r} names several runs ({shown}); give more of the run id")
    try:
        moment = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        raise NotFound(
            f"--since {text!r} is neither a run id (see 'evalhouse sql \"SELECT run_id FROM ingest_run\"')"
            " nor a date (2026-07-01, or 2026-07-01T02:00 in UTC)"
        ) from None
    if moment.tzinfo is not None:
        moment = moment.astimezone(UTC).replace(tzinfo=None)
    return Since("date", moment)


def since_runs(run_ids: list[str]) -> Since:
    """The window of one refresh: the runs it recorded."""
    return Since("runs", run_ids=frozenset(run_ids))


@dataclass
class Window:
    """One source's runs in the window and the boards they are compared by."""

    source_key: str
    runs: list[Run]
    baseline: Run | None  # the last refresh that loaded before the window
    current: Run | None = field(init=False)  # the last refresh that loaded in it

    def __post_init__(self) -> None:
        self.current = next((r for r in reversed(self.runs) if r.makes_board), None)


def windows(runs: list[Run], since: Since) -> list[Window]:
    """Each source's window (sources without a run in theirs are left out), by source key."""
    by_source: dict[str, list[Run]] = defaultdict(list)
    for run in runs:
        by_source[run.source_key].append(run)
    found = []
    for key in sorted(by_source):
        mine = by_source[key]
        start = _window_start(mine, since)
        if start is None:
            continue
        before = [r for r in mine[:start] if r.makes_board]
        found.append(Window(key, mine[start:], before[-1] if before else None))
    return found


def _window_start(runs: list[Run], since: Since) -> int | None:
    """The index of a source's first run in the window (its runs are oldest first), or None."""
    if since.kind == "previous-refresh":
        refreshes = [n for n, r in enumerate(runs) if r.trigger == "refresh"]
        return refreshes[-1] if refreshes else None
    if since.kind == "runs":
        return next((n for n, r in enumerate(runs) if r.run_id in since.run_ids), None)
    assert since.at is not None
    after = (lambda r: r.started_at > since.at) if since.kind == "run" else (lambda r: r.started_at >= since.at)
    return next((n for n, r in enumerate(runs) if after(r)), None)


def changes(
    wh: Warehouse,
    boards: BoardReader,
    since: Since | None = None,
    *,
    tolerance: float = DEFAULT_TOLERANCE,
    sources: list[str] | None = None,
) -> dict[str, Any]:
    """The report of what changed (a JSON-ready dict; its keys are described in docs/operations.md);
    ``boards`` reads the boards compared (``BoardReader(store)``: each from its stored payloads)."""
    if tolerance < 0:
        raise InputError(f"--tolerance {tolerance} is negative: give a share of a value's magnitude, e.g. 0.001")
    since = since or Since()
    known = set(source_keys())  # each source's module is imported only when its window is read
    found = [w for w in windows(all_runs(wh.con), since) if sources is None or w.source_key in sources]
    blocks = [
        _source_block(wh, boards, w, get_source(w.source_key) if w.source_key in known else None, tolerance)
        for w in found
    ]
    return {
        "report": "evalhouse changes",
        "format": REPORT_FORMAT,
        "generated_at": _iso(datetime.now(UTC)),
        "since": since.as_dict(),
        "tolerance": {
            "relative": tolerance,
            "rule": f"a value moved when |new - old| > {tolerance:g} × max(|old|, |new|)",
        },
        "totals": _totals(blocks),
        "sources": blocks,
    }


def _source_block(wh: Warehouse, read: BoardReader, window: Window, module: Any, tolerance: float) -> dict[str, Any]:
    block: dict[str, Any] = {
        "source": window.source_key,
        "runs": [r.as_dict() for r in window.runs],
        "baseline": _point(window.baseline),
        "current": _point(window.current),
        "compared": False,
        "first": False,  # compared against nothing: the source's first board
        "note": None,
        "changes": None,
        "refused": None,
    }
    refused = _refused_run(window)
    if module is None:
        block["note"] = f"{window.source_key} is not in this evalhouse's source catalog: its boards cannot be read"
        return block
    boards: dict[str, Board] = {}

    def board(run: Run) -> Board:
        if run.run_id not in boards:
            boards[run.run_id] = read.board(wh.con, module, run.run_id)
        return boards[run.run_id]

    if window.current is None:
        block["note"] = _why_not_compared(window)
    else:
        after = board(window.current)
        before = board(window.baseline) if window.baseline is not None else Board()
        unreadable = after.unreadable + before.unreadable
        if unreadable:
            block["note"] = f"stored payloads no longer parse, so the boards are not compared: {unreadable[0]}"
        else:
            block["compared"] = True
            block["first"] = window.baseline is None
            block["changes"] = _with_benchmark_ids(wh, window.source_key, compare(before, after, tolerance))
    if refused is not None:
        standing = window.current or window.baseline
        would = board(refused)
        block["refused"] = {
            "run_id": refused.run_id,
            "guard": refused.guard,
            "error": refused.error,
            "against": _point(standing),
            "changes": None
            if would.unreadable or not would.payloads
            else compare(board(standing) if standing else Board(), would, tolerance),
        }
    return block


def _point(run: Run | None) -> dict[str, Any] | None:
    return None if run is None else {"run_id": run.run_id, "at": _iso(run.finished_at or run.started_at)}


def _refused_run(window: Window) -> Run | None:
    """The last run of the window when a drift guard refused a whole board it had read."""
    last = window.runs[-1]
    if last.status == "failed" and last.trigger == "refresh" and last.guard in WHOLE_BOARD_GUARDS:
        return last
    return None


def _why_not_compared(window: Window) -> str:
    statuses = sorted({r.status for r in window.runs})
    if window.runs and all(r.trigger != "refresh" for r in window.runs):
        return "no refresh in the window: runs of other kinds read what they are given, so no board is compared"
    if statuses == ["unchanged"] or set(statuses) <= {"unchanged", "recanonicalised"}:
        return "the board did not change (its payload, or every record parsed from it, equals the last load's)"
    if window.baseline is None:
        return f"no refresh has loaded this source yet ({', '.join(statuses)} in the window)"
    return f"no refresh loaded in the window ({', '.join(statuses)}): the board stays as the last load left it"


def _with_benchmark_ids(wh: Warehouse, key: str, found: dict[str, Any]) -> dict[str, Any]:
    """New and vanished benchmark names with the canonical benchmark the warehouse mapped each to."""
    ids = history.benchmark_ids(wh.con, key)
    bench = found["benchmarks"]
    for side in ("new", "vanished"):
        bench[side] = [{"name": name, "benchmark_id": ids.get(name)} for name in bench[side]]
    return found


def _totals(blocks: list[dict[str, Any]]) -> dict[str, int]:
    totals = dict.fromkeys(
        ("sources", "runs", "runs_failed", "runs_skipped", "models_new", "models_vanished", "benchmarks_new"), 0
    )
    totals |= {"benchmarks_vanished": 0, "values_moved": 0, "refused": 0}
    for b in blocks:
        totals["sources"] += 1
        totals["runs"] += len(b["runs"])
        totals["runs_failed"] += sum(r["status"] == "failed" for r in b["runs"])
        totals["runs_skipped"] += sum(r["status"] == "skipped" for r in b["runs"])
        totals["refused"] += b["refused"] is not None
        if b["changes"] is not None and not b.get("first"):
            c = b["changes"]
            totals["models_new"] += len(c["models"]["new"])
            totals["models_vanished"] += len(c["models"]["vanished"])
            totals["benchmarks_new"] += len(c["benchmarks"]["new"])
            totals["benchmarks_vanished"] += len(c["benchmarks"]["vanished"])
            totals["values_moved"] += len(c["values"]["moved"])
    return totals


# -- the run report of a refresh ---------------------------------------------------------------

LATEST = "latest.json"


def run_report(
    wh: Warehouse, boards: BoardReader, results: list[Any], *, db_path: Path, tolerance: float = DEFAULT_TOLERANCE
) -> dict[str, Any]:
    """The report of one refresh (``results``: its :class:`~evalhouse.warehouse.load.ledger.RunResult`
    list; ``boards``: with the boards its runs parsed), with the exit code the refresh ends with (1
    when a source failed)."""
    report = changes(wh, boards, since_runs([r.run_id for r in results]), tolerance=tolerance)
    failed = sorted(r.source_key for r in results if r.status == "failed")
    return {**report, "warehouse": str(db_path), "exit_code": 1 if failed else 0, "failed_sources": failed}


def reports_dir(db_path: Path) -> Path:
    """Where each refresh's report is kept: ``<db stem>.reports/`` beside the warehouse."""
    return db_path.with_name(f"{db_path.stem}.reports")


def write_report(directory: Path, report: dict[str, Any], *, stamp: datetime | None = None) -> Path:
    """Write ``report`` as ``refresh-<UTC time>.json`` and as ``latest.json`` (each whole or not at
    all: written beside, then renamed into place); returns the dated file's path."""
    directory.mkdir(parents=True, exist_ok=True)
    name = f"refresh-{(stamp or datetime.now(UTC)).strftime('%Y%m%dT%H%M%SZ')}"
    path, n = directory / f"{name}.json", 1
    while path.exists():  # two refreshes in one second keep both reports
        n += 1
        path = directory / f"{name}-{n}.json"
    text = dumps(report, indent=2) + "\n"
    for target in (path, directory / LATEST):
        partial = target.with_name(f".{target.name}.partial-{os.getpid()}")
        partial.write_text(text, encoding="utf-8")
        os.replace(partial, target)
    return path


def read_latest(db_path: Path) -> dict[str, Any] | None:
    """The last refresh's report beside ``db_path``, or None when no refresh wrote one."""
    path = reports_dir(db_path) / LATEST
    if not path.is_file():
        return None
    try:
        report = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise InputError(f"{path} is not a readable run report ({exc}); the next refresh writes it again") from exc
    if not isinstance(report, dict) or report.get("report") != "evalhouse changes":
        raise InputError(f"{path} is not an evalhouse run report")
    return report
