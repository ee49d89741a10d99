"""The two pinned sources give exactly what the row-by-row path gave when the digest was recorded:
the same parsed records and failures (locators, reasons, payloads), and the same warehouse rows,
quarantines, decisions and fingerprints after the real refresh over loopback (``real_warehouse``).

The recorded digest (``data/pinned_refresh_digest.json``) was written by ``tests/pinned_digest.py
record`` before the load path was made faster; a change that alters content fails here naming the
table and column. Re-record only for an intended change of content, and say so in its commit.
"""

from __future__ import annotations

import json
from pathlib import Path

from pinned_digest import DIGEST_FILE, parse_digest, warehouse_digest

RECORDED = json.loads(DIGEST_FILE.read_text())


def test_the_pinned_payloads_parse_into_the_recorded_records_and_failures(shared: Path) -> None:
    got = parse_digest(shared)
    for key, expected in RECORDED["parse"].items():
        assert got[key]["records"] + got[key]["failures"] > 500, key
        assert got[key] == expected, f"{key}: parse output differs from the recorded digest"


def test_the_refreshed_warehouse_holds_the_recorded_rows(real_warehouse: Path) -> None:
    got = warehouse_digest(real_warehouse, RECORDED["warehouse"])
    assert got["score"]["rows"] == 10_317 and got["quarantine"]["rows"] > 0
    for table, expected in RECORDED["warehouse"].items():
        assert got[table]["rows"] == expected["rows"], (
            f"{table}: {got[table]['rows']} rows, {expected['rows']} recorded"
        )
        changed = [c for c, d in expected["columns"].items() if got[table]["columns"].get(c) != d]
        assert not changed, f"{table}: columns {changed} differ from the recorded digest"
        assert got[table]["whole_rows"] == expected["whole_rows"], f"{table}: rows pair values differently"


def test_a_refresh_records_the_view_decisions_once_for_the_warehouse_it_leaves(real_warehouse: Path) -> None:
    """The conflict and canonical-metric decisions of a refresh of two sources are recorded after
    the last one and describe the warehouse the refresh leaves (the digest's one intended change:
    GPQA Diamond's metric choice counts the models of both sources, not of the first alone). A
    metric choice is the last run's; a conflict resolution is credited to the run that caused it,
    the one that loaded the latest of its cell's candidates."""
    import duckdb

    con = duckdb.connect(str(real_warehouse), read_only=True)
    try:
        last_run = con.execute(
            "SELECT run_id FROM ingest_run WHERE status IN ('completed', 'partial') ORDER BY started_at DESC LIMIT 1"
        ).fetchone()[0]
        by_run = dict(
            con.execute(
                "SELECT run_id, count(*) FROM curation_decision WHERE kind = 'canonical_metric' GROUP BY run_id"
            ).fetchall()
        )
        assert by_run.keys() == {last_run} and by_run[last_run] > 10
        credited = con.execute(
            "SELECT d.run_id = (SELECT arg_max(c.run_id, c.run_started_at) FROM v_cell_candidates c"
            "                   WHERE c.cell_id = json_extract_string(d.subject, '$.cell_id')), count(*)"
            " FROM curation_decision d WHERE d.kind = 'conflict_resolution' GROUP BY 1"
        ).fetchall()
        assert dict(credited).get(True, 0) > 100 and False not in dict(credited)
        stale = con.execute(
            "SELECT count(*) FROM curation_decision d JOIN v_benchmark_metric bm"
            " ON bm.benchmark_id = json_extract_string(d.subject, '$.benchmark_id')"
            " WHERE d.kind = 'canonical_metric'"
            "   AND (json_extract(d.detail, '$.n_models')::INT <> bm.n_models"
            "        OR json_extract_string(d.detail, '$.metric_id') <> bm.metric_id)"
        ).fetchone()[0]
        assert stale == 0
    finally:
        con.close()
