"""Import time of the real legacy EEE corpus (../shared/datasets/eee-datastore-legacy, 2,792 records
of schema 0.2.x), first into an empty warehouse and then again unchanged, against the EEE project's
own validator reading the same files (the baseline: the least any importer must do, reading and
validating every file). The import runs without the great-expectations checkpoint, which
`evalhouse import-eee` adds unless --skip-validation.

Usage: `.venv/bin/python benchmarks/legacy_import.py [path/to/shared]`.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

CORPUS = "datasets/eee-datastore-legacy"


def validator_seconds(root: Path) -> float | None:
    try:
        import every_eval_ever  # noqa: F401
    except ImportError:
        return None
    files = sorted(str(p.relative_to(root)) for p in (root / "data").rglob("*.json"))
    t0 = time.perf_counter()
    for start in range(0, len(files), 1000):
        subprocess.run(
            [sys.executable, "-m", "every_eval_ever", "validate", *files[start : start + 1000]],
            check=False,
            capture_output=True,
            cwd=root,
        )
    return time.perf_counter() - t0


def main(shared: Path) -> None:
    root = shared / CORPUS
    if not (root / "data").is_dir():
        sys.exit(f"{root} is not there: pass the path to ../shared")
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-legacy-"))
    try:
        with Warehouse.open(tmp / "w.duckdb") as wh:
            store = RawStore(tmp / "raw")
            t0 = time.perf_counter()
            first = import_tree(wh, root, store).as_dict()
            first_s = time.perf_counter() - t0
            t0 = time.perf_counter()
            again = import_tree(wh, root, store).as_dict()
            again_s = time.perf_counter() - t0
        files = sum(1 for _ in (root / "data").rglob("*.json"))
        print(
            f"first import: {first['records_loaded']:,} records, {first['scores_loaded']:,} scores, "
            f"{len(first['runs'])} collections in {first_s:.2f} s = {first['records_loaded'] / first_s:,.0f} records/s"
        )
        print(f"second import (unchanged): {again['files_unchanged']:,} files skipped in {again_s:.2f} s")
        theirs = validator_seconds(root)
        if theirs is None:
            print("every-eval-ever is not installed: no validator baseline (pip install -e '.[test]')")
            return
        print(f"every_eval_ever validate, the same {files:,} files: {theirs:.2f} s")
        print(
            f"ratio: first import {first_s / theirs:.2f}x the validator's time; "
            f"unchanged re-import {again_s / theirs:.2f}x"
        )
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared")
