"""The load path as a user runs it: `evalhouse import-eee` in a fresh process, checkpoint included.

For each corpus (generated EEE 0.3.0 trees shaped like the real datastore, see `_corpus.py`):
10^5 and 10^6 scores (25 results per record) and the real datastore's shape (22,000 records of
~10 results, one model each), it prints in one run

* wall and CPU seconds, scores/s and peak RSS of `evalhouse import-eee DIR` (a subprocess);
* the same for an unchanged re-import (target: <= 10% of the first);
* the EEE project's own validator alone on the same files (`python -m every_eval_ever validate`),
  and the ratio (target: the import >= 5x faster than validation alone);
* a plain DuckDB Arrow append of the same number of score rows into a keyed table: the physical
  floor on this machine;
* the plainest one-process Python import of the same files (read, sha256, orjson, one row per
  result and per record, one Arrow append per table, the record kept zstd-compressed as the
  warehouse keeps it), with none of validation, identity, canonicalisation, dedup or checks: the
  floor of an import that parses in Python, to set the targets against;
* the same import with the parse done inside DuckDB (``read_text`` + ``sha256`` + ``from_json`` into
  typed structs, rows unnested in SQL): the floor of an import that hands the files to DuckDB;
* how the import's CPU time grows from 10^5 to 10^6 scores (linear means ~10x).

CPU seconds are the steadier figure on a shared machine; wall seconds are what a user waits (a
load's inserts run on a second thread while the next batch is prepared, so wall can be below CPU).
Usage:
`.venv/bin/python benchmarks/load.py [--sizes 1e5,1e6,datastore] [--keep DIR]`.
"""

from __future__ import annotations

import argparse
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from _corpus import write_corpus

ROOT = Path(__file__).resolve().parents[1]
EVALHOUSE = [sys.executable, "-c", "from evalhouse.cli import main; main()"]
SHAPES = {"1e5": (4_000, 25), "1e6": (40_000, 25), "datastore": (22_000, 10)}
TARGET_SCORES_PER_S = 50_000
TARGET_RATIO = 5.0
TARGET_RSS_MB = 1024


def timed(cmd: list[str], cwd: Path | None = None) -> dict[str, float]:
    """Wall, user+system CPU and peak RSS of one command (GNU time)."""
    t0 = time.perf_counter()
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%U %S %M", *cmd], cwd=cwd, capture_output=True, text=True, check=False
    )
    wall = time.perf_counter() - t0
    user, system, rss = proc.stderr.strip().splitlines()[-1].split()
    return {"wall": wall, "cpu": float(user) + float(system), "rss_mb": int(rss) / 1024, "rc": proc.returncode}


def arrow_floor(n: int, tmp: Path) -> float:
    """CPU seconds DuckDB needs to append ``n`` score-like rows from Arrow into a keyed file table."""
    code = f"""
import duckdb, pyarrow as pa, time
n = {n}
t = pa.table({{"score_id": pa.array(range(n), pa.int64()), "fingerprint": pa.array([f"{{i:064x}}" for i in range(n)]),
              "evaluation_id": pa.array([f"c/org/m{{i // 25}}/1" for i in range(n)]),
              "benchmark_id": pa.array([f"b{{i % 25}}" for i in range(n)]),
              "value": pa.array([i / n for i in range(n)], pa.float64())}})
con = duckdb.connect("{tmp / f"floor-{n}.duckdb"}")
con.execute("CREATE TABLE s (score_id BIGINT PRIMARY KEY, fingerprint TEXT UNIQUE, evaluation_id TEXT,"
            " benchmark_id TEXT, value DOUBLE)")
t0 = time.process_time()
con.register("t", t)
con.execute("INSERT INTO s SELECT * FROM t")
con.close()
print(time.process_time() - t0)
"""
    (tmp / f"floor-{n}.duckdb").unlink(missing_ok=True)  # one fresh file per size
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=False)
    if out.returncode != 0:
        raise RuntimeError(f"the Arrow floor run failed: {out.stderr.strip()[-500:]}")
    return float(out.stdout.strip())


#: The floors' warehouse: both imports write the same two keyed tables into a new DuckDB file.
FLOOR_TABLES = """
con = duckdb.connect(sys.argv[2])
con.execute("SET enable_progress_bar = false")
con.execute("CREATE TABLE score (evaluation_id TEXT, result_index INTEGER, benchmark TEXT, metric TEXT, value DOUBLE,"
            " PRIMARY KEY (evaluation_id, result_index))")
con.execute("CREATE TABLE evaluation (evaluation_id TEXT PRIMARY KEY, raw_sha256 TEXT,"
            " record JSON USING COMPRESSION zstd)")
"""

PYTHON_FLOOR = (
    """
import hashlib, sys, time
from pathlib import Path
import duckdb, orjson, pyarrow as pa
pa.array([1])  # Arrow's first array imports pandas: an import, not per-file work
t0, w0 = time.process_time(), time.perf_counter()
scores = {"evaluation_id": [], "result_index": [], "benchmark": [], "metric": [], "value": []}
records = {"evaluation_id": [], "raw_sha256": [], "record": []}
for path in sorted(Path(sys.argv[1]).rglob("*.json")):
    raw = path.read_bytes()
    record = orjson.loads(raw)
    eid = record["evaluation_id"]
    records["evaluation_id"].append(eid)
    records["raw_sha256"].append(hashlib.sha256(raw).hexdigest())
    records["record"].append(raw.decode())
    for i, result in enumerate(record["evaluation_results"]):
        scores["evaluation_id"].append(eid)
        scores["result_index"].append(i)
        scores["benchmark"].append(result["source_data"]["dataset_name"])
        scores["metric"].append(result["evaluation_name"])
        scores["value"].append(float(result["score_details"]["score"]))
s, r = pa.table(scores), pa.table(records)
"""
    + FLOOR_TABLES
    + """con.execute("INSERT INTO score SELECT * FROM s")
con.execute("INSERT INTO evaluation SELECT * FROM r")
con.close()
print(time.process_time() - t0, len(scores["value"]), time.perf_counter() - w0)
"""
)


#: The same import with the parse inside DuckDB: ``read_text`` reads every file (DuckDB's threads),
#: ``sha256`` hashes it and ``from_json`` parses the fields the rows need with yyjson into typed
#: structs; the rows are unnested in SQL and the record kept as it was read. No Python touches a file.
DUCKDB_FLOOR = (
    """
import sys, time
import duckdb
t0, w0 = time.process_time(), time.perf_counter()
shape = ('{"evaluation_id": "VARCHAR", "evaluation_results": [{"evaluation_name": "VARCHAR",'
         ' "source_data": {"dataset_name": "VARCHAR"}, "score_details": {"score": "DOUBLE"}}]}')
"""
    + FLOOR_TABLES
    + """con.execute("CREATE TEMP TABLE parsed AS SELECT content, sha256(content) AS sha, from_json(content, ?) AS r"
            " FROM read_text(?)", [shape, sys.argv[1] + "/**/*.json"])
con.execute("INSERT INTO evaluation SELECT r.evaluation_id, sha, content FROM parsed")
con.execute("INSERT INTO score SELECT r.evaluation_id, generate_subscripts(r.evaluation_results, 1) - 1,"
            " unnest(r.evaluation_results).source_data.dataset_name, unnest(r.evaluation_results).evaluation_name,"
            " unnest(r.evaluation_results).score_details.score FROM parsed")
n = con.execute("SELECT count(*) FROM score").fetchone()[0]
con.close()
print(time.process_time() - t0, n, time.perf_counter() - w0)
"""
)


def floor_run(code: str, tree: Path, tmp: Path, what: str) -> tuple[float, float]:
    """CPU and wall seconds of one floor import of ``tree`` (``code``: argv tree, database), imports excluded."""
    db = tmp / "floor-import.duckdb"
    db.unlink(missing_ok=True)
    out = subprocess.run([sys.executable, "-c", code, str(tree), str(db)], capture_output=True, text=True, check=False)
    db.unlink(missing_ok=True)
    if out.returncode != 0:
        raise RuntimeError(f"the {what} floor run failed: {out.stderr.strip()[-500:]}")
    cpu, _, wall = out.stdout.splitlines()[-1].split()
    return float(cpu), float(wall)


def validator(tree: Path) -> dict[str, float] | None:
    try:
        import every_eval_ever  # noqa: F401 - optional: the test extra
    except ImportError:
        return None
    files = sorted(str(p.relative_to(tree)) for p in (tree / "data").rglob("*.json"))
    totals = {"wall": 0.0, "cpu": 0.0, "rss_mb": 0.0}
    for start in range(0, len(files), 2000):
        run = timed([sys.executable, "-m", "every_eval_ever", "validate", *files[start : start + 2000]], cwd=tree)
        totals["wall"] += run["wall"]
        totals["cpu"] += run["cpu"]
        totals["rss_mb"] = max(totals["rss_mb"], run["rss_mb"])
    return totals


def bench(name: str, tmp: Path) -> dict[str, float]:
    records, results = SHAPES[name]
    tree = tmp / f"tree-{name}"
    scores = write_corpus(tree, records, results, one_model_each=name == "datastore")
    db = tmp / f"{name}.duckdb"
    print(f"\n== {name}: {records:,} records x {results} results = {scores:,} scores", flush=True)
    first = timed([*EVALHOUSE, "--db", str(db), "import-eee", str(tree)])
    again = timed([*EVALHOUSE, "--db", str(db), "import-eee", str(tree)])
    check = timed([*EVALHOUSE, "--db", str(db), "stats", "--json"])
    assert first["rc"] == again["rc"] == check["rc"] == 0, (first, again, check)
    rate = scores / first["cpu"]
    print(
        f"import-eee        {first['wall']:7.1f} s wall  {first['cpu']:7.1f} s CPU  "
        f"{scores / first['wall']:9,.0f} scores/s wall  {rate:9,.0f} scores/s CPU  peak {first['rss_mb']:6.0f} MB"
        f"   (target >= {TARGET_SCORES_PER_S:,}/s: {rate / TARGET_SCORES_PER_S:.2f}x by CPU, "
        f"{scores / first['wall'] / TARGET_SCORES_PER_S:.2f}x by wall; <= {TARGET_RSS_MB} MB)"
    )
    print(
        f"re-import         {again['wall']:7.1f} s wall  {again['cpu']:7.1f} s CPU  = {again['cpu'] / first['cpu']:.1%}"
        " of the first (target <= 10%)",
        flush=True,
    )
    theirs = validator(tree)
    if theirs:
        print(
            f"EEE validator     {theirs['wall']:7.1f} s wall  {theirs['cpu']:7.1f} s CPU  ->  evalhouse is "
            f"{theirs['cpu'] / first['cpu']:.2f}x faster by CPU, {theirs['wall'] / first['wall']:.2f}x by wall "
            f"(target >= {TARGET_RATIO:.0f}x)",
            flush=True,
        )
    else:
        print("EEE validator     not installed (pip install -e '.[test]'): no ratio")
    floor = arrow_floor(scores, tmp)
    print(
        f"Arrow append      {floor:7.2f} s CPU for the same number of rows (the floor): "
        f"import = {first['cpu'] / floor:.1f}x",
        flush=True,
    )
    for label, code, what in (
        ("plain Python ", PYTHON_FLOOR, "to read, hash, parse and append the same files, nothing checked"),
        ("DuckDB parse ", DUCKDB_FLOOR, "for the same, parsed by DuckDB (read_text, sha256, from_json)"),
    ):
        plain, wall = floor_run(code, tree, tmp, label.strip())
        print(
            f"{label}     {plain:7.2f} s CPU ({wall:.2f} s wall) {what}: "
            f"import = {first['cpu'] / plain:.1f}x; {scores / plain:,.0f} scores/s"
            + (
                f"; {TARGET_RATIO:.0f}x the validator leaves {theirs['cpu'] / TARGET_RATIO:.2f} s CPU"
                f" = {theirs['cpu'] / TARGET_RATIO / plain:.2f}x this floor"
                if theirs
                else ""
            ),
            flush=True,
        )
    return {"scores": scores, "cpu": first["cpu"], "wall": first["wall"], "rss_mb": first["rss_mb"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", default="1e5,1e6,datastore", help="comma-separated: 1e5, 1e6, datastore")
    parser.add_argument("--keep", type=Path, help="keep the corpora and warehouses in this folder")
    args = parser.parse_args()
    tmp = args.keep or Path(tempfile.mkdtemp(prefix="evalhouse-load-"))
    tmp.mkdir(parents=True, exist_ok=True)
    try:
        runs = {name: bench(name, tmp) for name in args.sizes.split(",")}
        if "1e5" in runs and "1e6" in runs:
            growth = runs["1e6"]["cpu"] / runs["1e5"]["cpu"]
            print(f"\ngrowth 1e5 -> 1e6 scores: CPU x{growth:.1f} for x10 the scores (linear: ~10)")
        print("\nscores/s (CPU, wall) and peak RSS per corpus:")
        for name, r in runs.items():
            print(
                f"  {name:10s} {r['scores'] / r['cpu']:9,.0f}/s CPU  {r['scores'] / r['wall']:9,.0f}/s wall  "
                f"{r['rss_mb']:6.0f} MB  (targets: >= {TARGET_SCORES_PER_S:,}/s, <= {TARGET_RSS_MB} MB at 1e6)"
            )
    finally:
        if args.keep is None:
            shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    sys.path.insert(0, str(ROOT / "benchmarks"))
    main()
