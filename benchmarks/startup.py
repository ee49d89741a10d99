"""Start-up time of the CLI as a user runs it: `evalhouse --help` and `evalhouse stats`.

Each command runs as its own process (the installed console script), several times; the median
wall time is printed next to `python -c "import duckdb"` measured the same way in the same run,
and against the target (issue "One house": --help and stats start in <= 0.3 s). Heavy libraries
(pandas, scipy, scikit-learn, matplotlib, great-expectations) must not load for either command.
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

RUNS = 7
TARGET_S = 0.3
BIN = Path(sys.executable).parent


def median_wall(cmd: list[str], runs: int = RUNS) -> float:
    subprocess.run(cmd, check=True, capture_output=True)  # warm the page cache
    times = []
    for _ in range(runs):
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, capture_output=True)
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def heavy_modules(cmd_args: list[str]) -> list[str]:
    """Which heavy libraries a CLI invocation imports (run in-process under -X importtime)."""
    code = (
        "import sys; from evalhouse.cli import main; sys.argv = ['evalhouse', *sys.argv[1:]]\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "heavy = ('pandas', 'scipy', 'sklearn', 'matplotlib', 'great_expectations', 'pyarrow')\n"
        "print('HEAVY:' + ','.join(m for m in heavy if m in sys.modules), file=sys.stderr)"
    )
    done = subprocess.run([sys.executable, "-c", code, *cmd_args], check=False, capture_output=True, text=True)
    marks = [line for line in done.stderr.splitlines() if line.startswith("HEAVY:")]
    return [m for m in marks[-1].removeprefix("HEAVY:").split(",") if m] if marks else ["(could not tell)"]


def main() -> None:
    evalhouse = str(BIN / "evalhouse")
    with tempfile.TemporaryDirectory() as tmp:
        db = str(Path(tmp) / "w.duckdb")
        subprocess.run([evalhouse, "--db", db, "migrate"], check=True, capture_output=True)
        baseline = median_wall([sys.executable, "-c", "import duckdb"])
        rows = [
            ("evalhouse --help", median_wall([evalhouse, "--help"]), ["--help"]),
            ("evalhouse stats", median_wall([evalhouse, "--db", db, "stats"]), ["--db", db, "stats"]),
        ]
        print(f"python -c 'import duckdb': {baseline:.3f} s (median of {RUNS})")
        for name, wall, args in rows:
            verdict = "ok" if wall <= TARGET_S else "OVER TARGET"
            heavy = heavy_modules(args)
            print(
                f"{name}: {wall:.3f} s = {wall / baseline:.2f}x import duckdb; target <= {TARGET_S} s: {verdict};"
                f" heavy modules loaded: {', '.join(heavy) or 'none'}"
            )


if __name__ == "__main__":
    main()
