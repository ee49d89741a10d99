"""Progress of long steps: every long analysis reports counted steps, and off a terminal the
command line turns them into whole plain log lines (no bar, no truncation)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import numpy as np
import pandas as pd
from clirunner import CliRunner

from evalhouse.analytics.factor.grid import run_grid
from evalhouse.cli import _common, app
from evalhouse.common import progress

runner = CliRunner()


class Recorder:
    """A reporter that keeps every task's label, final count and total."""

    def __init__(self) -> None:
        self.tasks: list[dict] = []

    def begin(self, label: str, total: int | None) -> dict:
        self.tasks.append({"label": label, "done": 0, "total": total, "notes": []})
        return self.tasks[-1]

    def update(self, handle: object, *, done: int, total: int | None, note: str | None) -> None:
        assert isinstance(handle, dict)
        handle.update(done=done, total=total)
        if note:
            handle["notes"].append(note)

    def end(self, handle: object) -> None:
        assert isinstance(handle, dict)
        handle["ended"] = True


def _wide(seed: int = 0) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    theta = rng.normal(size=(40, 1))
    values = theta @ rng.uniform(0.5, 1.0, size=(1, 8)) + rng.normal(scale=0.4, size=(40, 8))
    values[rng.random(values.shape) < 0.2] = np.nan
    return pd.DataFrame(values, index=[f"m{i}" for i in range(40)], columns=[f"b{j}" for j in range(8)])


def test_factor_grid_reports_each_cell() -> None:
    rec = Recorder()
    with progress.reporting(rec):
        table, _ = run_grid(_wide(), dataset="synthetic", densifiers=("C", "R"), imputers=("corr_zero",),
                            n_simulations=5)  # fmt: skip
    (cells,) = [t for t in rec.tasks if t["label"] == "factor grid: cells"]
    assert cells["total"] == cells["done"] == len(table) == 2 and cells["ended"]
    assert list(dict.fromkeys(cells["notes"])) == ["C x corr_zero", "R x corr_zero"]


def test_item_audit_and_report_report_their_steps(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    sim = runner.invoke(app, ["--db", db, "simulate-panel", "--items", "60", "--json"])
    assert sim.exit_code == 0, sim.output
    rec = Recorder()
    from evalhouse.analytics.items.audit import ItemAudit
    from evalhouse.analytics.items.engine import DuckDBEngine
    from evalhouse.analytics.report.page import sections, write_report
    from evalhouse.warehouse.db import Warehouse

    with Warehouse.open(db, read_only=True) as wh, progress.reporting(rec):
        ItemAudit(n_boot=20).fit(DuckDBEngine(wh.con))
        write_report(wh.con, tmp_path / "r.html")
    by_label = {t["label"]: t for t in rec.tasks}
    audit = [t for t in rec.tasks if t["label"] == "items: audit"]
    assert len(audit) == 2  # the explicit fit, and the report's item section fitting for the page
    assert all(t["done"] == t["total"] == 3 for t in audit)
    assert by_label["report: sections"]["done"] == len(sections())


def test_log_lines_off_a_terminal_are_whole(monkeypatch) -> None:
    monkeypatch.setattr(_common, "QUIET_FOR_S", 0.0)
    monkeypatch.setattr(_common, "LOG_EVERY_S", 0.0)
    stream = io.StringIO()
    with progress.reporting(_common._LogReporter(stream)):
        for _ in progress.each(range(4), "snapshot create: tables", total=4, note=lambda i: f"table_{i}_" + "x" * 150):
            pass
    lines = stream.getvalue().splitlines()
    assert lines[-1].endswith("snapshot create: tables: 4/4 (100%) done")
    assert any(("x" * 150) in line and "eta" in line for line in lines[:-1])  # the note whole, with an ETA
    assert "…" not in stream.getvalue()


def test_a_command_off_a_terminal_logs_progress_to_stderr(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setattr(_common, "QUIET_FOR_S", 0.0)
    monkeypatch.setattr(_common, "LOG_EVERY_S", 0.0)
    db = str(tmp_path / "w.duckdb")
    assert runner.invoke(app, ["--db", db, "simulate-panel", "--items", "40", "--json"]).exit_code == 0
    result = runner.invoke(app, ["--db", db, "analyze", "items", "--n-boot", "10", "--json"])
    assert result.exit_code == 0, result.output
    assert json.loads(result.stdout)["n_items"] == 40  # stdout stays JSON
    assert "items: audit: 3/3 (100%) done" in result.stderr


def test_refresh_on_a_terminal_draws_one_bar(tmp_path: Path, monkeypatch) -> None:
    """The refresh's progress is the one mechanism every long step uses: on a terminal one bar,
    its task the refresh's own, never a second bar of the command beside it."""
    from rich.progress import Progress

    live: list[Progress] = []
    most: list[int] = [0]
    tasks: list[str] = []
    start, stop, add_task = Progress.start, Progress.stop, Progress.add_task

    def started(self: Progress) -> None:
        live.append(self)
        most[0] = max(most[0], len(live))
        start(self)

    def stopped(self: Progress) -> None:
        if self in live:
            live.remove(self)
        stop(self)

    def added(self: Progress, description: str, *args, **kwargs):
        tasks.append(description)
        return add_task(self, description, *args, **kwargs)

    monkeypatch.setattr(Progress, "start", started)
    monkeypatch.setattr(Progress, "stop", stopped)
    monkeypatch.setattr(Progress, "add_task", added)
    monkeypatch.setattr(_common, "is_terminal", lambda stream=None: True)
    (tmp_path / "mirror").mkdir()  # a mirror holding nothing: the source ends without its bytes
    argv = ["--db", str(tmp_path / "w.duckdb"), "refresh", "--source", "artificial-analysis"]
    result = runner.invoke(app, [*argv, "--mirror", str(tmp_path / "mirror"), "--skip-validation"])
    assert "artificial-analysis" in result.stdout, result.output
    assert most[0] == 1 and tasks == ["refresh"]
    assert not live  # and it is gone when the refresh ends
