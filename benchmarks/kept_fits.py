"""What a kept fit saves: paper 000's reproduction fitted, then asked for again on the same rows.

`evalhouse.analytics.reproduce.paper000_results.run_paper000` keeps its result in the cache folder
(`evalhouse.analytics.kept_fits`). The baseline is the fit itself (what every `reproduce paper-000`,
report and notebook call paid before); the figure is the second call on the same frames, which reads
the kept result back. One run, a fresh cache folder, the pinned Artificial Analysis snapshot; the
script also checks the two results are the same quantities.

Usage: `.venv/bin/python benchmarks/kept_fits.py [path/to/shared]`.
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

from evalhouse.analytics.data.aa import aa_frames
from evalhouse.analytics.reproduce.paper000_results import run_paper000
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

AA_CSV = "datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv"


def main() -> None:
    shared = Path(sys.argv[1] if len(sys.argv) > 1 else Path(__file__).resolve().parents[2] / "shared")
    with tempfile.TemporaryDirectory() as cache:
        os.environ["EVALHOUSE_CACHE_DIR"] = cache
        os.environ.pop("EVALHOUSE_KEEP_FITS", None)
        db = Path(cache) / "w.duckdb"
        with Warehouse.open(db) as wh:  # the frames as a warehouse gives them, after a real ingest
            ingest_file(wh, RawStore(Path(cache) / "w.raw"), "artificial-analysis", str(shared / AA_CSV))
            wide, meta = aa_frames(wh.con)
        t0 = time.perf_counter()
        first, rec1 = run_paper000(wide, meta)
        fit_s = time.perf_counter() - t0
        t0 = time.perf_counter()
        again, rec2 = run_paper000(wide.copy(), meta.copy())
        kept_s = time.perf_counter() - t0
    same = [q["ours"] for q in first["quantities"]] == [q["ours"] for q in again["quantities"]]
    print(f"paper 000 on {wide.shape[0]} configurations: fit {fit_s:.1f} s (baseline)")
    print(f"the same fit asked again: {kept_s * 1000:.0f} ms, read back: {'kept_fit' in rec2.diagnostics}")
    print(f"ratio: {fit_s / kept_s:.0f}x faster; same quantities: {same}; same run id: {rec1.run_id == rec2.run_id}")


if __name__ == "__main__":
    main()
