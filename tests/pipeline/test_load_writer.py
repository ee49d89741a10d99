"""A load's inserts run one batch behind, on a writer thread (common/one_behind.py): on real EEE
records, an insert that fails there fails its run, rolls it back whole and leaves no thread; the
other collections load as they would have, and the failed one loads the same when run again."""

from __future__ import annotations

import shutil
import threading
from pathlib import Path

import pytest

import evalhouse.warehouse.load.records as load_module
from evalhouse.pipeline.import_eee import collection_source_key, import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

LEGACY = "datasets/eee-datastore-legacy/data"
COLLECTIONS = ("helm_lite", "helm_mmlu")  # 91 and 79 real records of many results each
TABLES = ("evaluation", "score", "quarantine", "model_attribute", "release_date_evidence", "model_config")


@pytest.fixture(scope="module")
def tree(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("tree")
    for name in COLLECTIONS:
        if not (shared / LEGACY / name).is_dir():
            pytest.skip(f"{shared / LEGACY / name} is not there")
        shutil.copytree(shared / LEGACY / name, root / "data" / name)
    return root


def contents(wh: Warehouse) -> dict[str, int]:
    return {t: int(wh.scalar(f"SELECT count(*) FROM {t}")) for t in TABLES}


def writers() -> list[str]:
    return [t.name for t in threading.enumerate() if t.name.startswith("evalhouse-load-writer")]


def test_an_insert_failing_on_the_writer_thread_fails_its_run_and_loses_nothing(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with Warehouse.open(tmp_path / "reference.duckdb") as wh:
        reference = import_tree(wh, tree, RawStore(tmp_path / "raw-reference"), batch_size=10)
        expected = contents(wh)
    status = {r.source_key: r.status for r in reference.runs}
    assert set(status.values()) <= {"completed", "partial"}  # partial: some results quarantined, with reasons

    real_insert = load_module.insert_rows
    calls = {"evaluation": 0}

    def failing_insert(con, table, rows, **kw):
        on_writer = threading.current_thread().name.startswith("evalhouse-load-writer")
        if on_writer and table == "evaluation" and rows and rows[0]["collection"] == "helm_lite":
            calls["evaluation"] += 1
            if calls["evaluation"] == 3:  # a middle batch: two written before it, more prepared after
                raise RuntimeError("the disk is full (injected)")
        real_insert(con, table, rows, **kw)

    monkeypatch.setattr(load_module, "insert_rows", failing_insert)
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        summary = import_tree(wh, tree, RawStore(tmp_path / "raw"), batch_size=10)
        runs = {r.source_key: r for r in summary.runs}
        failed, other = runs[collection_source_key("helm_lite")], runs[collection_source_key("helm_mmlu")]
        assert failed.status == "failed" and "RuntimeError: the disk is full (injected)" in (failed.error or "")
        assert other.status == status[other.source_key]
        assert other.counts == next(r for r in reference.runs if r.source_key == other.source_key).counts
        n_failed = wh.scalar("SELECT count(*) FROM evaluation WHERE collection = 'helm_lite'")
        assert n_failed == 0  # the two batches written before the failure rolled back with it
        assert not writers()

        monkeypatch.setattr(load_module, "insert_rows", real_insert)
        again = import_tree(wh, tree, RawStore(tmp_path / "raw"), batch_size=10)
        assert {r.source_key: r.status for r in again.runs}[failed.source_key] == status[failed.source_key]
        assert contents(wh) == expected
