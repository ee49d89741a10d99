"""Peak memory of the real command line on the three hostile inputs the budgets are for.

Builds, in a temporary folder (in seconds, without inflating them; tests/faults/bombs.py):

* an Inspect ``.eval`` of 7 MB holding 8 members of 900 MB, read by ``ingest inspect-log``;
* an Epoch export of 7 MB holding 120 CSVs of 60 MB, fetched by ``refresh`` from a mirror;
* an EEE tree whose ``_samples.jsonl`` holds one 400 MB line, read by ``import-eee``;

runs each in its own process under an address-space limit (a regression ends in a MemoryError,
not in the machine's swap), and prints the process's peak resident memory, the limit (1 GiB) and
the ratio to the baseline: before the budgets the archives passed 5 GB within 20 s and the line
peaked at 2.45 GB.

Usage: ``.venv/bin/python benchmarks/bombs.py`` (needs ../shared for the Epoch CSV header; without
it, the Epoch bomb uses a header of its own).
"""

from __future__ import annotations

import json
import os
import resource
import sys
import tempfile
import time
import uuid
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO / "tests"), str(REPO / "tests" / "faults")]

from bombs import MiB, epoch_zip, inspect_eval, run_measured, samples_line  # noqa: E402
from eee_records import eee_record, write_file  # noqa: E402

from evalhouse.ingest.mirror import mirror_relpath  # noqa: E402
from evalhouse.ingest.pinned import EPOCH_DIR, EPOCH_URL  # noqa: E402

LIMIT = 1024 * MiB
ADDRESS_LIMIT = 3 * 1024 * MiB
BASELINE = {"inspect": 5 * 1000 * MiB, "epoch": 5 * 1000 * MiB, "samples": int(2.45 * 1000 * MiB)}
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def _cli(db: Path, *args: str) -> tuple[int, str, str, int, float]:
    start = time.perf_counter()
    code, out, err, peak = run_measured([sys.executable, "-m", "evalhouse", "--db", str(db), *args], preexec_fn=_limit)
    return code, out, err, peak, time.perf_counter() - start


def inspect_case(tmp: Path) -> tuple[int, str, str, int, float]:
    path = tmp / "bomb.eval"
    path.write_bytes(inspect_eval())
    return _cli(tmp / "inspect.duckdb", "ingest", "inspect-log", str(path), "--json")


def epoch_case(tmp: Path) -> tuple[int, str, str, int, float]:
    csv = SHARED / EPOCH_DIR / "gpqa_diamond.csv"
    header = csv.read_bytes().split(b"\n", 1)[0] + b"\n" if csv.is_file() else b"Model version,Best score\n"
    target = tmp / "mirror" / mirror_relpath(EPOCH_URL)
    target.parent.mkdir(parents=True)
    target.write_bytes(epoch_zip(header))
    return _cli(
        tmp / "epoch.duckdb", "refresh", "--source", "epoch-benchmarks", "--mirror", str(tmp / "mirror"), "--json"
    )


def samples_case(tmp: Path) -> tuple[int, str, str, int, float]:
    tree, rel = tmp / "tree", f"s/org/alpha/{uuid.uuid4()}"
    write_file(tree, f"{rel}.json", eee_record("org/alpha", {"bench_a": 0.6}, evaluation_id="s/alpha/1"))
    samples_line(tree / "data" / f"{rel}_samples.jsonl")
    return _cli(tmp / "samples.duckdb", "import-eee", str(tree), "--json", "--skip-validation")


CASES = {
    "inspect": ("Inspect .eval 7 MB -> 8 x 900 MB (ingest)", inspect_case),
    "epoch": ("Epoch zip 7 MB -> 120 x 60 MB (refresh)", epoch_case),
    "samples": ("_samples.jsonl, one 400 MB line (import-eee)", samples_case),
}


def _outcome(out: str) -> str:
    try:
        doc = json.loads(out)
    except ValueError:
        return "(no JSON on stdout)"
    run = doc["runs"][0] if "runs" in doc else doc
    reasons = run.get("quarantine_reasons") or {}
    return run.get("error") or f"{run['status']}: {', '.join(reasons) or 'nothing quarantined'}"


def main() -> int:
    worst = 0
    limits = f"limit {LIMIT / MiB:,.0f} MiB; address space {ADDRESS_LIMIT / MiB:,.0f} MiB"
    print(f"peak resident memory on hostile input ({limits})")
    for key, (label, case) in CASES.items():
        with tempfile.TemporaryDirectory() as tmp:
            code, out, _err, peak, took = case(Path(tmp))
        worst = max(worst, peak)
        ratio = peak / BASELINE[key]
        verdict = "ok" if peak <= LIMIT else "OVER THE LIMIT"
        print(f"  {label:<46} {peak / MiB:7,.0f} MiB  {took:5.1f} s  exit {code}  {verdict}")
        print(f"    ratio to the baseline ({BASELINE[key] / MiB:,.0f} MiB before the budgets): {ratio:.2f}")
        print(f"    {_outcome(out)[:300]}")
    return 0 if worst <= LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
