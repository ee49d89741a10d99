"""The fault suite's shared pieces: the figures it prints, and a small real warehouse to break.

Every test here adds to :data:`FIGURES` (faults tried and survived, kill -9 trials, inputs fuzzed
per parser, unhandled exceptions, rows lost); the session prints them at the end and, when
``EVALHOUSE_FAULT_FIGURES`` names a file, writes them there as JSON (what ``benchmarks/faults.py``
reads). The tests are marked ``faults``: ``pytest -m faults`` runs this suite alone.
"""

from __future__ import annotations

import json
import os
import sys
from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))


@dataclass
class Figures:
    faults_tried: Counter = field(default_factory=Counter)  # area -> cases
    faults_survived: Counter = field(default_factory=Counter)
    failures: list[str] = field(default_factory=list)  # cases that did not survive, with why
    kill_trials: Counter = field(default_factory=Counter)  # what was killed -> trials
    kill_consistent: Counter = field(default_factory=Counter)
    fuzzed: Counter = field(default_factory=Counter)  # parser -> inputs
    unhandled: Counter = field(default_factory=Counter)  # parser -> unhandled exceptions
    rows_lost: int = 0
    peak_memory: dict[str, int] = field(default_factory=dict)  # hostile input -> peak resident bytes

    def fault(self, area: str, case: str, survived: bool, why: str = "") -> None:
        self.faults_tried[area] += 1
        if survived:
            self.faults_survived[area] += 1
        else:
            self.failures.append(f"{area}: {case}: {why}")

    def as_dict(self) -> dict[str, Any]:
        return {
            "faults_tried": sum(self.faults_tried.values()),
            "faults_survived": sum(self.faults_survived.values()),
            "faults_by_area": {a: [self.faults_survived[a], n] for a, n in sorted(self.faults_tried.items())},
            "not_survived": self.failures,
            "kill_trials": sum(self.kill_trials.values()),
            "kill_consistent": sum(self.kill_consistent.values()),
            "kill_by_target": {k: [self.kill_consistent[k], n] for k, n in sorted(self.kill_trials.items())},
            "inputs_fuzzed": dict(sorted(self.fuzzed.items())),
            "unhandled_exceptions": sum(self.unhandled.values()),
            "rows_lost": self.rows_lost,
            "peak_memory_bytes": dict(sorted(self.peak_memory.items())),
        }

    def merge(self, other: dict[str, Any]) -> None:
        """Add another process's figures (a pytest-xdist worker's :meth:`raw`)."""
        for name in ("faults_tried", "faults_survived", "kill_trials", "kill_consistent", "fuzzed", "unhandled"):
            getattr(self, name).update(other[name])
        self.failures += other["failures"]
        self.rows_lost += other["rows_lost"]
        for key, peak in other["peak_memory"].items():
            self.peak_memory[key] = max(peak, self.peak_memory.get(key, 0))

    def raw(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in self.__dataclass_fields__}


FIGURES = Figures()


@pytest.fixture(scope="session")
def figures() -> Figures:
    return FIGURES


@pytest.hookimpl(tryfirst=True)  # before -m selects by marker
def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    here = Path(__file__).parent
    for item in items:
        if here in Path(str(item.fspath)).parents:
            item.add_marker(pytest.mark.faults)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """A pytest-xdist worker hands its figures to the controller, which prints them all."""
    workeroutput = getattr(session.config, "workeroutput", None)
    if workeroutput is not None:
        workeroutput["fault_figures"] = json.dumps(FIGURES.raw())


@pytest.hookimpl(optionalhook=True)  # a pytest-xdist hook: called on the controller per finished worker
def pytest_testnodedown(node: Any, error: Any) -> None:
    output = getattr(node, "workeroutput", {}).get("fault_figures")
    if output:
        FIGURES.merge(json.loads(output))


def pytest_terminal_summary(terminalreporter: Any) -> None:
    data = FIGURES.as_dict()
    if not (data["faults_tried"] or data["kill_trials"] or data["inputs_fuzzed"]):
        return
    write = terminalreporter.write_line
    terminalreporter.section("fault suite figures")
    write(f"faults tried / survived: {data['faults_tried']} / {data['faults_survived']}")
    for area, (ok, n) in data["faults_by_area"].items():
        write(f"  {area}: {ok} / {n}")
    for line in data["not_survived"]:
        write(f"  NOT SURVIVED {line}")
    write(f"kill -9 trials consistent: {data['kill_consistent']} / {data['kill_trials']}")
    for target, (ok, n) in data["kill_by_target"].items():
        write(f"  {target}: {ok} / {n}")
    write("inputs fuzzed per parser: " + ", ".join(f"{k} {v}" for k, v in data["inputs_fuzzed"].items()))
    write(f"unhandled exceptions: {data['unhandled_exceptions']}")
    write(f"rows lost: {data['rows_lost']}")
    for name, peak in data["peak_memory_bytes"].items():
        write(f"peak memory reading {name}: {peak / 2**20:,.0f} MiB")
    out = os.environ.get("EVALHOUSE_FAULT_FIGURES")
    if out:
        Path(out).write_text(json.dumps(data, indent=2) + "\n", encoding="utf-8")
