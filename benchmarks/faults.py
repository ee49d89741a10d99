"""The fault suite's reliability figures, in one run: faults tried / survived, kill -9 trials that
left a consistent warehouse, inputs fuzzed per parser, unhandled exceptions, rows lost.

It runs ``pytest -m faults`` (the suite in ``tests/faults/``, slow parts included), which writes
its figures to a JSON file, and prints them with the CPU seconds the run took. The baseline is the
external campaign the suite replaces: 41 of 46 HTTP/payload faults survived and 26 of 26 kill -9
trials consistent, before the holes it found were closed.

Usage: ``.venv/bin/python benchmarks/faults.py [extra pytest args]`` (``-k snapshot`` for a part).
"""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
BASELINE = {"faults": (41, 46), "kills": (26, 26)}
PEAK_LIMIT = 2**30  # what reading a decompression bomb or a 400 MB line may cost, at most


def main(args: list[str]) -> int:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "figures.json"
        start = time.perf_counter()
        proc = subprocess.run(
            [sys.executable, "-m", "pytest", "-q", "-m", "faults", "-p", "no:cacheprovider", *args],
            cwd=REPO,
            env={**_env(), "EVALHOUSE_FAULT_FIGURES": str(out)},
            check=False,
        )
        wall = time.perf_counter() - start
        usage = resource.getrusage(resource.RUSAGE_CHILDREN)
        if not out.exists():
            print("the fault suite wrote no figures (did it run?)")
            return proc.returncode or 1
        figures = json.loads(out.read_text())
    tried, survived = figures["faults_tried"], figures["faults_survived"]
    kills, consistent = figures["kill_trials"], figures["kill_consistent"]
    base_ok, base_n = BASELINE["faults"]
    print()
    print("evalhouse fault suite")
    print(f"  faults tried / survived      {survived} / {tried}" + _share(survived, tried))
    print(f"    baseline (external, before the fixes) {base_ok} / {base_n}" + _share(base_ok, base_n))
    if tried and base_n:
        print(f"    survival ratio now / baseline: {(survived / tried) / (base_ok / base_n):.2f}")
    for area, (ok, n) in figures["faults_by_area"].items():
        print(f"    {area:<44} {ok} / {n}")
    base_kills = f"(baseline {BASELINE['kills'][0]} / {BASELINE['kills'][1]})"
    print(f"  kill -9 trials consistent    {consistent} / {kills}   {base_kills}")
    for target, (ok, n) in figures["kill_by_target"].items():
        print(f"    {target:<44} {ok} / {n}")
    print("  inputs fuzzed per parser")
    for name, n in figures["inputs_fuzzed"].items():
        print(f"    {name:<44} {n:,}")
    print(f"  unhandled exceptions         {figures['unhandled_exceptions']}")
    print(f"  rows lost                    {figures['rows_lost']}")
    peaks = figures.get("peak_memory_bytes") or {}
    if peaks:
        print(f"  peak memory on hostile input (limit {PEAK_LIMIT / 2**30:g} GiB; before the budgets 5+ GiB, 2.45 GiB)")
    for name, peak in peaks.items():
        print(f"    {name:<44} {peak / 2**20:,.0f} MiB" + ("" if peak <= PEAK_LIMIT else "  OVER THE LIMIT"))
    for line in figures["not_survived"]:
        print(f"  NOT SURVIVED: {line}")
    print(f"  took {wall:,.0f} s wall, {usage.ru_utime + usage.ru_stime:,.0f} CPU s (pytest exit {proc.returncode})")
    return proc.returncode


def _share(ok: int, n: int) -> str:
    return f"  ({ok / n:.0%})" if n else ""


def _env() -> dict[str, str]:
    return dict(os.environ)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
