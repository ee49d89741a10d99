"""Reading the Epoch export's CSVs: Python's `csv` module against DuckDB's `read_csv`.

The issue behind the load path suggested parsing the Epoch zip "without per-row Python, e.g.
DuckDB `read_csv` over the zip members". This prints, on the pinned export (../shared), the median
of several runs of

* Python's `csv` reader over the 43 members (what `ingest/sources/epoch_benchmarks.py` does);
* one DuckDB `read_csv` per member, from memory;
* one DuckDB `read_csv` over all members written to disk (`union_by_name`: the files' headers differ);
* the whole Epoch parse (`epoch_benchmarks.parse`: reading, then one EEE record per row),

so the share of the parse that reading is, and what DuckDB would make of it, are one run's figures.
Usage: `.venv/bin/python benchmarks/epoch_csv.py [path/to/shared]`.
"""

from __future__ import annotations

import csv
import io
import shutil
import statistics
import sys
import tempfile
import time
import zipfile
from collections.abc import Callable
from datetime import UTC, datetime
from pathlib import Path

import duckdb

from evalhouse.ingest.pinned import EPOCH_DIR, epoch_zip
from evalhouse.ingest.source import FetchMeta
from evalhouse.ingest.sources import epoch_benchmarks
from evalhouse.schema.records import ParsedRecord

RUNS = 5


def median_ms(work: Callable[[], int]) -> tuple[float, int]:
    """Median milliseconds of ``work`` over RUNS runs (one warm-up first), and the rows it read."""
    rows = work()
    times = []
    for _ in range(RUNS):
        t0 = time.perf_counter()
        work()
        times.append((time.perf_counter() - t0) * 1000)
    return statistics.median(times), rows


def main(shared: Path) -> None:
    if not (shared / EPOCH_DIR).is_dir():
        print(f"skipped: {shared / EPOCH_DIR} is absent (the pinned Epoch export)")
        return
    body = epoch_zip(shared / EPOCH_DIR)
    with zipfile.ZipFile(io.BytesIO(body)) as archive:
        members = [(info.filename, archive.read(info)) for info in archive.infolist()]
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    folder = Path(tempfile.mkdtemp(prefix="evalhouse-epoch-csv-"))
    for name, data in members:
        (folder / name).write_bytes(data)
    meta = FetchMeta(
        source_key=epoch_benchmarks.SOURCE.key,
        url=epoch_benchmarks.ZIP_URL,
        sha256="0" * 64,
        retrieved_at=datetime.now(UTC),
        label=epoch_benchmarks.EXPORT_NAME,
    )

    def python_csv() -> int:
        return sum(
            sum(1 for row in csv.reader(io.StringIO(data.decode("utf-8"), newline="")) if row) - 1
            for _, data in members
        )

    def duckdb_each() -> int:
        return sum(len(con.read_csv(io.BytesIO(data), header=True, all_varchar=True).fetchall()) for _, data in members)

    def duckdb_all() -> int:
        sql = "SELECT count(*) FROM read_csv(?, union_by_name = true, all_varchar = true, filename = true)"
        return con.execute(sql, [str(folder / "*.csv")]).fetchone()[0]

    def whole_parse() -> int:
        return sum(1 for _ in epoch_benchmarks.parse(body, meta=meta))

    items = list(epoch_benchmarks.parse(body, meta=meta))
    records = sum(1 for item in items if isinstance(item, ParsedRecord))

    try:
        reading, rows = median_ms(python_csv)
        figures = {
            "Python csv reader": (reading, rows),
            "DuckDB read_csv, one per member": median_ms(duckdb_each),
            "DuckDB read_csv, all members at once": median_ms(duckdb_all),
        }
        parse_ms, _ = median_ms(whole_parse)
        counts = {n for _, n in figures.values()}
        if counts != {len(items)}:  # every row is one record or one refusal: the readers must agree
            raise SystemExit(f"the readers disagree: rows {sorted(counts)}, parsed items {len(items)}")
        print(f"the pinned Epoch export: {len(members)} CSV members; medians of {RUNS} runs")
        for label, (ms, n) in figures.items():
            print(f"  {label:38s} {ms:8.1f} ms  {n:5d} rows  = {ms / reading:6.1f}x Python's reader")
        print(
            f"  {'the whole Epoch parse':38s} {parse_ms:8.1f} ms  {len(items):5d} items ({records} records +"
            f" {len(items) - records} refused rows): reading with Python's csv is {reading / parse_ms:.1%} of it"
        )

    finally:
        shutil.rmtree(folder, ignore_errors=True)


if __name__ == "__main__":
    default = Path(__file__).resolve().parents[1].parent / "shared"
    main(Path(sys.argv[1]) if len(sys.argv) > 1 else default)
