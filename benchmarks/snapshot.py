"""Snapshot create, verify and diff at 10^6 scores, timed as a user runs them (CLI subprocesses).

The warehouse is a real DuckDB file whose rows are generated with SQL straight into the tables
(``benchmarks/snapshot_synthetic.sql``: 10 sources, 1,000 model configurations, 100 benchmarks,
10,000 evaluation records, N scores) rather than through the EEE loader, which is measured by
``load.py``/``import_eee.py``. Every measured step is its own ``evalhouse snapshot ...`` process;
its wall time, CPU seconds (user + system) and peak RSS come from GNU ``/usr/bin/time`` around
that child, so the figures are the command's own, interpreter start and imports included.

Prints in one run: create at N scores against the targets (15 s, 1 GB) and the baseline of
issue 17 (127 s, 2.6 GiB); a second create of the same state (same id and same bytes, after
reopening the warehouse); verify; diff of two identical snapshots and of two that differ by a
few thousand rows, against the target (10 s, 1 GB) and the baseline (27 s, 1.8 GiB). Usage:
``.venv/bin/python benchmarks/snapshot.py [N_SCORES]`` (default 1,000,000).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from evalhouse.warehouse.db import Warehouse

SYNTHETIC_SQL = Path(__file__).with_name("snapshot_synthetic.sql")
EVALHOUSE = Path(sys.executable).with_name("evalhouse")
TIME = Path("/usr/bin/time")  # GNU time (apt package "time")
GB = 1e9
GIB = 2**30
CREATE_TARGET = (15.0, 1 * GB)  # seconds, bytes (issue 17's acceptance)
CREATE_BASELINE = (127.0, 2.6 * GIB)  # issue 17's measurement before this work
DIFF_TARGET = (10.0, 1 * GB)
DIFF_BASELINE = (27.0, 1.8 * GIB)
# A few thousand rows differ between the warehouse of snapshot A and that of C.
CHANGE_SQL = """
UPDATE score_value SET value = value / 2, raw_value = raw_value / 2 WHERE score_id % 500 = 7;
DELETE FROM score_value WHERE score_id % 1000 = 123;
INSERT INTO score_value SELECT * REPLACE (
    CAST(CAST('0x' || left(md5(fingerprint) || md5(fingerprint || 'new'), 16) AS UBIGINT) & 4611686018427387903
         AS BIGINT) AS score_id,
    md5(fingerprint) || md5(fingerprint || 'new') AS fingerprint,
    md5(source_row_key || 'new') AS source_row_key)
FROM score_value WHERE score_id % 1000 = 321;
"""


Pair = tuple[float, float]  # seconds, bytes


@dataclass
class Run:
    wall: float
    cpu: float
    rss: int  # bytes
    code: int
    stdout: str

    def line(
        self, what: str, target: tuple[float, float] | None = None, base: tuple[float, float] | None = None
    ) -> str:
        text = f"{what:<34} {self.wall:7.2f} s wall  {self.cpu:7.2f} s CPU  {self.rss / 1e6:8.1f} MB peak RSS"
        if target:
            text += f"  | target {target[0]:.0f} s / {target[1] / 1e9:.0f} GB: x{self.wall / target[0]:.2f} time"
            text += f", x{self.rss / target[1]:.2f} memory"
        if base:
            text += f" | vs before ({base[0]:.0f} s, {base[1] / GIB:.1f} GiB): {base[0] / self.wall:.1f}x faster"
            text += f", {base[1] / self.rss:.1f}x less memory"
        return text


def measured(*args: str, ok: tuple[int, ...] = (0,)) -> Run:
    """Run ``evalhouse ARGS`` as a child under ``/usr/bin/time``: its own wall, CPU and peak RSS.

    A child forked from this process would inherit this process's high-water RSS (Linux keeps
    it across exec), so the command is started by ``time``, a small process, and ``time``
    reports the command's own figures.
    """
    with tempfile.TemporaryDirectory() as scratch:
        figures = Path(scratch) / "time.txt"
        cmd = [str(TIME), "-o", str(figures), "-f", "%e %U %S %M %x", str(EVALHOUSE), *args]
        proc = subprocess.run(cmd, capture_output=True, text=True, check=False)
        wall, user, system, kb, code = figures.read_text().split()[-5:]
    if int(code) not in ok:
        raise SystemExit(f"evalhouse {' '.join(args)} exited {code}:\n{proc.stderr[-4000:]}")
    return Run(float(wall), float(user) + float(system), int(kb) * 1024, int(code), proc.stdout)


def build(db: Path, n_scores: int) -> float:
    """Fill a fresh warehouse with synthetic rows; returns the seconds it took."""
    t0 = time.perf_counter()
    with Warehouse.open(db) as wh:
        wh.con.execute("SET enable_progress_bar = false")
        with wh.transaction() as con:
            # DuckDB binds parameters only in a script's last statement: one statement at a time
            for statement in SYNTHETIC_SQL.read_text(encoding="utf-8").split(";\n"):
                code = "\n".join(line for line in statement.splitlines() if not line.lstrip().startswith("--"))
                if code.strip():
                    params = {"n_scores": n_scores} if "$n_scores" in code else None
                    con.execute(statement, params)
    return time.perf_counter() - t0


def change(db: Path) -> int:
    with Warehouse.open(db) as wh, wh.transaction() as con:
        before = con.execute("SELECT count(*) FROM score").fetchone()[0]
        con.execute(CHANGE_SQL)
        after = con.execute("SELECT count(*) FROM score").fetchone()[0]
    return before - after


def same_bytes(a: Path, b: Path) -> bool:
    files = sorted(p.relative_to(a) for p in a.rglob("*") if p.is_file())
    return files == sorted(p.relative_to(b) for p in b.rglob("*") if p.is_file()) and all(
        (a / f).read_bytes() == (b / f).read_bytes() for f in files if f.name != "manifest.json"
    )


def create(db: Path, out: Path, name: str) -> tuple[Run, dict]:
    run = measured("snapshot", "create", "--db", str(db), str(out), "--name", name, "--json")
    return run, json.loads(run.stdout)


def main(n_scores: int = 1_000_000) -> None:
    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-snapshot-") as tmp:
        root = Path(tmp)
        db = root / "w.duckdb"
        print(f"building a warehouse of {n_scores:,} synthetic scores (SQL inserts, not the EEE loader)...")
        print(f"  built in {build(db, n_scores):.1f} s")
        first, a = create(db, root / "a", "a")
        second, b = create(db, root / "b", "b")
        print(f"score rows: {a['rows']['score_value']:,}; snapshot: {a['files']:,} files, {a['bytes'] / 1e6:,.1f} MB")
        print(first.line(f"create ({n_scores:,} scores)", CREATE_TARGET, CREATE_BASELINE))
        print(second.line("create again (warehouse reopened)"))
        same = a["snapshot_id"] == b["snapshot_id"]
        identical = same_bytes(root / "a", root / "b")
        print(f"determinism: same id {same} ({a['snapshot_id'][:16]}…), every data file byte-identical {identical}")
        print(measured("snapshot", "verify", str(root / "a")).line("verify"))
        print(
            measured("snapshot", "diff", "--json", str(root / "a"), str(root / "b")).line(
                "diff, identical snapshots", DIFF_TARGET, DIFF_BASELINE
            )
        )
        net = change(db)
        create(db, root / "c", "c")
        run = measured("snapshot", "diff", "--json", str(root / "a"), str(root / "c"), ok=(0, 1))
        cells = json.loads(run.stdout)["cells"]
        score = json.loads(run.stdout)["tables"]["score_value"]
        print(run.line("diff, a few thousand rows differ", DIFF_TARGET, DIFF_BASELINE))
        print(
            f"  score rows: +{score['added']:,} -{score['removed']:,} ~{score['changed']:,} (net {-net:+,}); "
            f"cells: +{cells['n_added']:,} -{cells['n_removed']:,} ~{cells['n_changed']:,}; "
            f"{len(cells['changed'])} changed cells listed (--limit 20)"
        )
        load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
        print(f"(machine: {os.cpu_count()} CPUs, load average {load}; CPU seconds are the steadier figure)")
        if not (same and identical):
            raise SystemExit("the same warehouse state gave different snapshot bytes")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
