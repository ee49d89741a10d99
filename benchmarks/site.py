"""What an explorer site costs, with its analyses recorded, next to a site without analyses.

Builds the warehouse a user has after a night's refresh of the pinned sources (Epoch + Artificial
Analysis from a mirror of ../shared served on 127.0.0.1) with the legacy EEE datastore imported
beside them, then times, each as its own `evalhouse` process on the live warehouse (so each also
pins the warehouse to a snapshot):

1. `site --no-analyses` (the baseline: the pages alone);
2. `site` the first time: the report's analyses are fitted for the snapshot and recorded (what
   every `site` cost before the analyses were reused);
3. `site` again: the analyses recorded for the snapshot are shown as recorded, nothing refitted;
   the pin reuses the snapshot of the unchanged warehouse without writing it again.

(1) and (3) are run several times, alternating (the machine may be shared), and their medians
compared: (3) / (1) is the price of the analyses once they are recorded (target: <= 1.2). The
folders in <db>.snapshots/ are counted: one, however many sites were built.

Usage: `.venv/bin/python benchmarks/site.py [path/to/shared]`.
"""

from __future__ import annotations

import functools
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from evalhouse.ingest.pinned import mirror_from_shared

PINNED = ("epoch-benchmarks", "artificial-analysis")
LEGACY = "datasets/eee-datastore-legacy"
EVALHOUSE = [sys.executable, "-c", "from evalhouse.cli import main; main()"]
RUNS = 3
TARGET_RATIO = 1.2


class _Quiet(SimpleHTTPRequestHandler):
    def log_message(self, *args: object) -> None:
        pass


def timed(cmd: list[str], ok: tuple[int, ...] = (0,)) -> dict[str, float | str]:
    t0 = time.perf_counter()
    proc = subprocess.run(["/usr/bin/time", "-f", "%U %S %M", *cmd], capture_output=True, text=True, check=False)
    wall = time.perf_counter() - t0
    user, system, rss = proc.stderr.strip().splitlines()[-1].split()
    if proc.returncode not in ok:
        sys.exit(f"{cmd[3:]} exited {proc.returncode}:\n{proc.stdout[-2000:]}\n{proc.stderr[-2000:]}")
    return {"wall": wall, "cpu": float(user) + float(system), "rss_mb": int(rss) / 1024, "out": proc.stdout}


def summary(run: dict) -> dict:
    """What 'site --json' printed: the JSON object that starts a line (anything printed before it
    is shown, as a finding: --json output should be JSON alone)."""
    out = str(run["out"])
    start = out.find("\n{") + 1 if not out.startswith("{") else 0
    if start:
        print(f"note: stdout before the JSON: {out[:start][-500:]!r}", file=sys.stderr)
    return json.JSONDecoder().raw_decode(out[start:])[0]


def median(runs: list[dict], key: str) -> float:
    return statistics.median(float(r[key]) for r in runs)


def line(label: str, runs: list[dict]) -> str:
    n = f" (median of {len(runs)})" if len(runs) > 1 else ""
    return f"{label:<34}{median(runs, 'wall'):8.1f} s wall {median(runs, 'cpu'):8.1f} s CPU{n}"


def main(shared: Path) -> None:
    legacy = shared / LEGACY
    if not (legacy / "data").is_dir():
        sys.exit(f"{legacy} is not there: pass the path to ../shared")
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-site-"))
    mirror_from_shared(shared, tmp / "mirror")
    server = ThreadingHTTPServer(("127.0.0.1", 0), functools.partial(_Quiet, directory=str(tmp / "mirror")))
    threading.Thread(target=server.serve_forever, daemon=True).start()
    db = tmp / "w.duckdb"
    sources = [arg for key in PINNED for arg in ("--source", key)]
    mirror = f"http://127.0.0.1:{server.server_address[1]}"
    try:
        timed([*EVALHOUSE, "--db", str(db), "refresh", *sources, "--mirror", mirror, "--json"])
        timed([*EVALHOUSE, "--db", str(db), "import-eee", str(legacy), "--skip-validation"], ok=(0, 1))

        def site(*extra: str) -> dict:
            return timed([*EVALHOUSE, "--db", str(db), "site", str(tmp / "site"), "--json", *extra])

        bare = [site("--no-analyses")]
        fitted = site()
        sections = summary(fitted)["analyses"]
        recorded = []
        for _ in range(RUNS):  # alternating, so a busy spell hits both alike
            recorded.append(site())
            if len(bare) < RUNS:
                bare.append(site("--no-analyses"))
        reused = summary(recorded[-1])["analyses"]
        pins = [p for p in (tmp / "w.snapshots").iterdir() if p.is_dir()]
        ratio = median(recorded, "wall") / median(bare, "wall")
        print(f"site of the pinned sources + the legacy datastore ({len(sections)} analysis sections)")
        print(line("--no-analyses:", bare))
        print(line("analyses fitted and recorded:", [fitted]))
        print(
            line("analyses as recorded:", recorded) + f"; {ratio:.2f} x --no-analyses (target <= {TARGET_RATIO}: "
            f"{ratio / TARGET_RATIO:.2f} of the budget), {float(fitted['wall']) / median(recorded, 'wall'):.1f} x "
            "faster than fitting"
        )
        print(
            f"sections reused: {sum(s['reused'] for s in reused)} of {sum(s['figures'] > 0 for s in reused)} "
            f"with figures; {len(pins)} snapshot folder(s) after {2 * RUNS + 1} sites of the unchanged warehouse"
        )
    finally:
        server.shutdown()
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1].parent / "shared"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
