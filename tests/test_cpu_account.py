"""``make test-cpu``'s accounting: every test run with ``EVALHOUSE_TEST_CPU`` set leaves one line,
and the summary adds them up by module."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

from cpu_account import ENV, summary

REPO = Path(__file__).resolve().parents[1]


def test_each_test_leaves_one_line_with_its_cpu(tmp_path: Path) -> None:
    (tmp_path / "test_probe.py").write_text(
        "import time\n"
        "def test_busy():\n"
        "    end = time.process_time() + 0.3\n"
        "    while time.process_time() < end:\n"
        "        pass\n"
        "def test_idle():\n"
        "    time.sleep(0.3)\n",
        encoding="utf-8",
    )
    out = tmp_path / "cpu.jsonl"
    inherited = {k: v for k, v in os.environ.items() if k != "PYTEST_XDIST_WORKER"}  # as a run without xdist
    env = {**inherited, ENV: str(out), "PYTHONPATH": str(REPO / "tests")}
    proc = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", "-p", "no:xdist", "-p", "cpu_account",
         str(tmp_path / "test_probe.py")],
        cwd=tmp_path, env=env, capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    rows = [json.loads(line) for line in out.read_text().splitlines()]
    lines = {r["id"].rsplit("::", 1)[1]: r for r in rows if "id" in r}
    assert set(lines) == {"test_busy", "test_idle"}
    # and one line for the whole run, last: the machine's CPU meanwhile holds at least the busy test's
    run = rows[-1]["run"]
    assert [r for r in rows if "run" in r] == rows[-1:]
    assert run["machine_cpu"] >= lines["test_busy"]["cpu"] - 0.02  # /proc/stat counts in 10 ms ticks
    assert run["wall"] >= lines["test_busy"]["wall"] + lines["test_idle"]["wall"]
    assert lines["test_busy"]["cpu"] >= 0.25 and lines["test_busy"]["wall"] >= 0.25  # ran 0.3 s on the CPU
    assert lines["test_idle"]["cpu"] < 0.15 and lines["test_idle"]["wall"] >= 0.25  # waited, used none
    assert lines["test_busy"]["worker"] == "main"  # no xdist here
    assert lines["test_busy"]["end"] <= lines["test_idle"]["end"] <= time.time()  # in the order they ran


def test_the_summary_adds_up_by_module(tmp_path: Path) -> None:
    rows = [
        {"id": "tests/a/test_x.py::test_1", "cpu": 2.0, "children": 1.0, "wall": 4.0},
        {"id": "tests/a/test_x.py::test_2[p]", "cpu": 1.0, "children": 0.0, "wall": 1.0},
        {"id": "tests/test_y.py::test_3", "cpu": 0.5, "children": 0.0, "wall": 9.0},
    ]
    path = tmp_path / "cpu.jsonl"
    run = {"run": {"machine_cpu": 9.25, "wall": 12.0}}
    path.write_text("".join(json.dumps(r) + "\n" for r in [*rows, run]) + '{"id": "tests/cut', encoding="utf-8")
    text = summary(path)
    assert "3 tests used 4 CPU s (14 s of worker wall time)" in text
    body = text.splitlines()[2:]
    assert body[0].split() == ["4.0", "5.0", "2", "tests/a/test_x.py"]  # the most CPU first
    assert body[1].split() == ["0.5", "9.0", "1", "tests/test_y.py"]
    assert body[2].startswith("the machine's CPU while the run lasted (12 s): 9 s, 5 s more than the tests'")
    assert body[-1].startswith("1 line(s) of") and "not counted" in body[-1]  # the cut line is said, not summed


def test_the_summary_says_how_long_the_runs_tail_was(tmp_path: Path) -> None:
    """The tail: from the first worker's last test to the last worker's, when the cores were not
    all busy. Lines without a worker (an older file) are summed but give no tail."""
    rows = [
        {"id": "tests/test_a.py::t1", "cpu": 1.0, "children": 0.0, "wall": 1.0, "worker": "gw0", "end": 100.0},
        {"id": "tests/test_a.py::t2", "cpu": 1.0, "children": 0.0, "wall": 1.0, "worker": "gw0", "end": 130.0},
        {"id": "tests/test_b.py::t3", "cpu": 1.0, "children": 0.0, "wall": 1.0, "worker": "gw1", "end": 172.5},
        {"id": "tests/test_c.py::t4", "cpu": 1.0, "children": 0.0, "wall": 1.0},
    ]
    path = tmp_path / "cpu.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in rows), encoding="utf-8")
    text = summary(path)
    assert "4 tests used 4 CPU s" in text
    assert text.splitlines()[-1] == "the run's tail: 42 s from the first of 2 workers' last test to the last's"
