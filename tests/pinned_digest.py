"""A content digest of what the two pinned sources become: parsed items and warehouse tables.

Recorded once (``tests/pipeline/data/pinned_refresh_digest.json``, written by
``python tests/pinned_digest.py record``) from the row-by-row parsers and loader, and compared by
``tests/pipeline/test_pinned_digest.py`` after every change to the load path: the same rows,
quarantines (reasons and locators), decisions and fingerprints, table by table and column by
column. Columns that name the run or the clock (``run_id``, ``loaded_at`` …) differ on every run
and are left out; so are the fetch facts (``raw_snapshot``, ``ingest_run``), which hold times.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import json
import sys
from pathlib import Path
from typing import Any

DIGEST_FILE = Path(__file__).parent / "pipeline" / "data" / "pinned_refresh_digest.json"
#: Tables the load writes that hold the sources' content (not the run's own bookkeeping).
TABLES = (
    "evaluation",
    "score",
    "quarantine",
    "curation_decision",
    "developer",
    "model_family",
    "base_model",
    "model_config",
    "model_alias",
    "model_attribute",
    "release_date_evidence",
    "benchmark",
    "metric",
    "benchmark_alias",
    "metric_alias",
)
#: Columns that differ between two runs over the same bytes (the run, the wall clock).
VOLATILE = {
    "run_id",
    "loaded_at",
    "created_at",
    "updated_at",
    "decided_at",
    "quarantined_at",
    "recorded_at",
    "retrieved_timestamp",  # the fetch time, and what is read from it
    "observed_at",
}
#: Serial numbers: the same set every run, but which row gets which can follow set order.
SERIAL = {"decision_id"}
FIXED_TIME = dt.datetime(2026, 7, 6, 12, 0, tzinfo=dt.UTC)


def _digest(values: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(values)).encode()).hexdigest()


def _cell(value: Any, column: str = "", fetch_dates: tuple[str, ...] = ()) -> str:
    if column == "record" and isinstance(value, str):  # the stored EEE record: all but its fetch time
        value = {k: v for k, v in json.loads(value).items() if k != "retrieved_timestamp"}
    text = json.dumps(value, sort_keys=True, default=str)
    if column == "detail":  # a decision naming an undated row's observation date names the fetch day
        for day in fetch_dates:
            text = text.replace(day, "<fetch date>")
    return text


def table_digest(con: Any, table: str, only: set[str] | None = None) -> dict[str, Any]:
    """Row count, one digest per stable column and one over whole rows (stable columns only;
    ``only``: of those, the ones a recorded digest names, so a column added later changes nothing)."""
    columns = [r[0] for r in con.execute(f"DESCRIBE {table}").fetchall()]
    volatile = {c for c in columns if c in VOLATILE or c.endswith("_run_id")}
    stable = [c for c in columns if c not in volatile and (only is None or c in only)]
    rows = con.execute(f"SELECT {', '.join(stable)} FROM {table}").fetchall()
    fetch_dates = tuple(
        str(d) for (d,) in con.execute("SELECT DISTINCT CAST(started_at AS DATE) FROM ingest_run").fetchall()
    )
    cells = [[_cell(v, c, fetch_dates) for v, c in zip(r, stable, strict=True)] for r in rows]
    per_column = {c: _digest([r[i] for r in cells]) for i, c in enumerate(stable)}
    keep = [i for i, c in enumerate(stable) if c not in SERIAL]
    whole = _digest(["\t".join(r[i] for i in keep) for r in cells])
    return {"rows": len(rows), "columns": per_column, "whole_rows": whole}


def parse_items(shared: Path) -> dict[str, list[Any]]:
    """Each pinned source's parsed items (records and failures), under a fixed fetch time."""
    from evalhouse.ingest.catalog import get_source
    from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
    from evalhouse.ingest.source import FetchMeta, SourceState

    bodies = {EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: (shared / AA_CSV).read_bytes()}
    out = {}
    for key in ("epoch-benchmarks", "artificial-analysis"):
        module = get_source(key)
        (request,) = module.plan(SourceState())
        body = bodies[request.url]
        meta = FetchMeta(key, request.url, hashlib.sha256(body).hexdigest(), FIXED_TIME, None, request.label)
        out[key] = list(module.parse(body, meta=meta))
    return out


def parse_digest(shared: Path) -> dict[str, Any]:
    """What each pinned payload parses into: records (fingerprints and canonical JSON) and
    failures (locator, reason, payload), in order."""
    from evalhouse.schema.fingerprint import canonical_json, record_fingerprint
    from evalhouse.schema.records import ParsedRecord

    out: dict[str, Any] = {}
    for key, items in parse_items(shared).items():
        records = [i for i in items if isinstance(i, ParsedRecord)]
        failures = [i for i in items if not isinstance(i, ParsedRecord)]
        out[key] = {
            "records": len(records),
            "failures": len(failures),
            "fingerprints": _digest([record_fingerprint(r.record) for r in records]),
            "records_json": _digest([canonical_json([r.locator, r.record]) for r in records]),
            "failures_json": _digest([canonical_json([f.locator, f.reason, f.payload]) for f in failures]),
            "order": hashlib.sha256("\n".join(i.locator for i in items).encode()).hexdigest(),
        }
    return out


def warehouse_digest(db: Path, recorded: dict[str, Any] | None = None) -> dict[str, Any]:
    """Each table's digest (``recorded``: on the columns the recorded digest names)."""
    from evalhouse.warehouse.db import Warehouse

    with Warehouse.open(db, read_only=True) as wh:
        return {t: table_digest(wh.con, t, set(recorded[t]["columns"]) if recorded else None) for t in TABLES}


def current(shared: Path, db: Path) -> dict[str, Any]:
    return {"parse": parse_digest(shared), "warehouse": warehouse_digest(db)}


if __name__ == "__main__":  # record: python tests/pinned_digest.py record [shared] (from the repo root)
    import tempfile

    sys.path.insert(0, str(Path(__file__).parent))
    from realwarehouse import build

    shared = Path(sys.argv[2]) if len(sys.argv) > 2 else Path(__file__).resolve().parents[2] / "shared"
    with tempfile.TemporaryDirectory() as tmp:
        digest = current(shared, build(shared, Path(tmp)))
    if sys.argv[1:2] == ["record"]:
        DIGEST_FILE.write_text(json.dumps(digest, indent=1, sort_keys=True) + "\n")
    else:
        print(json.dumps(digest, indent=1, sort_keys=True))
