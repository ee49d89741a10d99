"""What each test costs in CPU, for finding where the suite's time goes (``make test-cpu``).

On a machine whose cores are busy the whole run, wall time per test says little: a test that
waits on a deadline costs wall time but no CPU, and three workers share two cores. With
``EVALHOUSE_TEST_CPU=<file>`` set, every test appends one JSON line to the file: its id, the CPU
its worker used while it ran (all threads: DuckDB's, a loopback server's), the CPU of the child
processes reaped meanwhile (the CLI runs a test starts), its wall time, its worker and when it
ended. A child reaped later
than the test that started it (a pool a fixture keeps) is counted where it is reaped, so a
module's total is the steadier figure. ``python tests/cpu_account.py <file>`` sums them by module
and says how long the run's tail was: the time from the first worker's last test to the last's.

A process no test reaps is in no test's line, and one reaped late is in the wrong one: Chromium's
processes (Playwright's driver owns them) and the Spark JVM (pyspark does not wait for it; a later
test of its worker that starts a process may reap it, and is charged with it), each tens of CPU
seconds. So the controller also writes one ``run`` line at the end: the CPU every process of
the machine used while the run lasted (``/proc/stat``), which the summary sets beside the tests'.
"""

from __future__ import annotations

import json
import os
import sys
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest

ENV = "EVALHOUSE_TEST_CPU"


def _cpu() -> tuple[float, float]:
    t = os.times()
    return t.user + t.system, t.children_user + t.children_system


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> Iterator[None]:
    out = os.environ.get(ENV)
    if not out:
        yield
        return
    own, children = _cpu()
    start = time.monotonic()
    yield
    own2, children2 = _cpu()
    line = {
        "id": item.nodeid,
        "cpu": own2 - own,
        "children": children2 - children,
        "wall": time.monotonic() - start,
        "worker": os.environ.get("PYTEST_XDIST_WORKER", "main"),
        "end": time.time(),
    }
    with open(out, "a", encoding="utf-8") as fh:  # one short line per write: workers append side by side
        fh.write(json.dumps(line) + "\n")


def machine_cpu() -> float | None:
    """CPU seconds every process of this machine has used since it booted (user, nice and system
    time of ``/proc/stat``), or None where there is no ``/proc/stat``."""
    try:
        first = Path("/proc/stat").read_text(encoding="ascii").split("\n", 1)[0].split()
    except OSError:
        return None
    return sum(int(field) for field in first[1:4]) / os.sysconf("SC_CLK_TCK")


def pytest_sessionstart(session: pytest.Session) -> None:
    """At the controller's start: the machine's CPU and the clock."""
    if os.environ.get(ENV) and not hasattr(session.config, "workerinput"):
        session.config.stash[_RUN] = (machine_cpu(), time.monotonic())


def pytest_sessionfinish(session: pytest.Session) -> None:
    """At the controller's end: one ``run`` line with what the machine used meanwhile."""
    out, start = os.environ.get(ENV), session.config.stash.get(_RUN, None)
    if not out or start is None or start[0] is None:
        return
    line = {"run": {"machine_cpu": (machine_cpu() or 0.0) - start[0], "wall": time.monotonic() - start[1]}}
    with open(out, "a", encoding="utf-8") as fh:
        fh.write(json.dumps(line) + "\n")


_RUN = pytest.StashKey[tuple[float | None, float]]()


def summary(path: Path, top: int = 25) -> str:
    rows, unreadable, run = [], 0, None
    for line in path.read_text(encoding="utf-8").splitlines():
        try:
            row = json.loads(line)
        except json.JSONDecodeError:  # a line a killed worker cut short: counted and said, not summed
            unreadable += bool(line.strip())
            continue
        if "run" in row:
            run = row["run"]
        else:
            rows.append(row)
    cpu: Counter[str] = Counter()
    wall: Counter[str] = Counter()
    tests: Counter[str] = Counter()
    for r in rows:
        module = r["id"].split("::", 1)[0]
        cpu[module] += r["cpu"] + r["children"]
        wall[module] += r["wall"]
        tests[module] += 1
    total = sum(cpu.values())
    cores = os.cpu_count() or 1
    lines = [
        f"{len(rows):,} tests used {total:,.0f} CPU s ({sum(wall.values()):,.0f} s of worker wall time); "
        f"on {cores} core(s) that alone takes at least {total / cores:,.0f} s",
        f"{'CPU s':>8} {'wall s':>8} {'tests':>6}  module",
    ]
    lines += [f"{v:8.1f} {wall[m]:8.1f} {tests[m]:6d}  {m}" for m, v in cpu.most_common(top)]
    ends: dict[str, float] = {}
    for r in rows:
        if "end" in r:
            ends[r["worker"]] = max(ends.get(r["worker"], 0.0), r["end"])
    if len(ends) > 1:
        first, last = min(ends.values()), max(ends.values())
        lines.append(
            f"the run's tail: {last - first:,.0f} s from the first of {len(ends)} workers' last test to the last's"
        )
    if run is not None:
        lines.append(
            f"the machine's CPU while the run lasted ({run['wall']:,.0f} s): {run['machine_cpu']:,.0f} s, "
            f"{run['machine_cpu'] - total:,.0f} s more than the tests': collection, starting workers, "
            "processes no test reaped (the Spark JVM, Chromium) and the kernel's own threads"
        )
    if unreadable:
        lines.append(f"{unreadable} line(s) of {path} could not be read (a worker cut short?) and are not counted")
    return "\n".join(lines)


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: python tests/cpu_account.py FILE [N]")
    print(summary(Path(sys.argv[1]), int(sys.argv[2]) if len(sys.argv) > 2 else 25))
