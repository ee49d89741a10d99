"""EEE datastore imports give exactly what the row-by-row loader gave when the digest was recorded:
the real legacy datastore and the edge tree (``eee_digest.write_edge_tree``), each imported twice,
hold the same rows, quarantines (reasons, locators, payloads), decisions and fingerprints, table by
table and column by column, and every run counts what it did the same way.

The recorded digest (``data/eee_import_digest.json``) was written by ``tests/eee_digest.py record``
with the row-by-row loader, before the batch load path replaced it. Re-record only for an intended
change of content, and say so in its commit.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eee_digest import DIGEST_FILE, LEGACY, current

RECORDED = json.loads(DIGEST_FILE.read_text())


@pytest.fixture(scope="module")
def digest(shared: Path, tmp_path_factory: pytest.TempPathFactory, legacy_imported_twice: dict) -> dict:
    """The edge tree imported twice here; the legacy tree's two imports are the run's shared ones."""
    if not (shared / LEGACY / "data").is_dir():
        pytest.skip(f"{shared / LEGACY} is not there")
    return current(shared, tmp_path_factory.mktemp("eee-digest"), RECORDED, legacy=legacy_imported_twice)


@pytest.mark.parametrize("tree", ["legacy", "edge"])
def test_each_import_run_counts_what_the_recorded_runs_counted(digest: dict, tree: str) -> None:
    for attempt in ("first", "second"):
        got, expected = digest[tree]["runs"][attempt], RECORDED[tree]["runs"][attempt]
        assert [r["source"] for r in got] == [r["source"] for r in expected]
        for g, e in zip(got, expected, strict=True):
            assert g == e, f"{tree}, {attempt} import, {e['source']}: {g} != {e}"


@pytest.mark.parametrize("tree", ["legacy", "edge"])
def test_the_imported_warehouse_holds_the_recorded_rows(digest: dict, tree: str) -> None:
    got, expected = digest[tree]["tables"], RECORDED[tree]["tables"]
    assert expected["score"]["rows"] > 300 and expected["quarantine"]["rows"] > 10
    for table, want in expected.items():
        have = got[table]
        assert have["rows"] == want["rows"], f"{tree}: {table} has {have['rows']} rows, {want['rows']} recorded"
        changed = [c for c, d in want["columns"].items() if have["columns"].get(c) != d]
        assert not changed, f"{tree}: {table} columns {changed} differ from the recorded digest"
        assert have["whole_rows"] == want["whole_rows"], f"{tree}: {table} rows pair values differently"
