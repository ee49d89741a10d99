"""import-eee reads each collection with the database closed (readers get in); collections it
finds unchanged share one closing and are recorded together when it opens again, as a refresh's
quiet sources are. On three real legacy collections."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

import evalhouse.warehouse.db as db_module
from evalhouse.pipeline.import_eee import ImportSummary, collection_source_key, import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

LEGACY = "datasets/eee-datastore-legacy/data"
COLLECTIONS = ("global-mmlu-lite", "hal-usaco", "helm_instruct")  # 24, 13 and 4 real records


@pytest.fixture
def tree(shared: Path, tmp_path: Path) -> Path:
    root = tmp_path / "tree"
    for name in COLLECTIONS:
        if not (shared / LEGACY / name).is_dir():
            pytest.skip(f"{shared / LEGACY / name} is not there")
        shutil.copytree(shared / LEGACY / name, root / "data" / name)
    return root


def reopenings(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every time the writer opens the database again after a closing."""
    seen: list[str] = []
    real = db_module._connect

    def counted(path: Path, **how: Any) -> object:
        seen.append(how["who"])
        return real(path, **how)

    monkeypatch.setattr(db_module, "_connect", counted)
    return seen


def statuses(summary: ImportSummary) -> list[tuple[str, str]]:
    return [(r.source_key, r.status) for r in summary.runs]


def test_unchanged_collections_share_one_closing_and_a_changed_one_loads_between(
    tree: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    keys = [collection_source_key(c) for c in COLLECTIONS]
    store = RawStore(tmp_path / "raw")
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        first = import_tree(wh, tree, store)
        assert [k for k, _ in statuses(first)] == keys and all(s != "unchanged" for _, s in statuses(first))

        opened = reopenings(monkeypatch)
        again = import_tree(wh, tree, store)
        assert statuses(again) == [(k, "unchanged") for k in keys]
        assert opened == ["writer"]  # one closing for the three (it was one per collection)
        assert [again.unchanged[r.run_id] for r in again.runs] == [24, 13, 4]

        # the middle collection's file rewritten: other bytes, the same record (a duplicate)
        changed = next((tree / "data" / COLLECTIONS[1]).rglob("*.json"))
        changed.write_text(json.dumps(json.loads(changed.read_text()), indent=4))
        opened.clear()
        third = import_tree(wh, tree, store)
        assert statuses(third) == [(keys[0], "unchanged"), (keys[1], "completed"), (keys[2], "unchanged")]
        assert opened == ["writer", "writer"]  # the first closing ends at the changed file
        middle = third.runs[1].report
        assert (middle.records_duplicate, middle.records_loaded, third.unchanged[third.runs[1].run_id]) == (1, 0, 12)
        ids = [r.run_id for r in third.runs]
        rows = dict(
            (run_id, (status, finished))
            for run_id, status, finished in wh.con.execute(
                "SELECT run_id, status, finished_at FROM ingest_run WHERE run_id IN (SELECT unnest(?::VARCHAR[]))",
                [ids],
            ).fetchall()
        )
    assert [rows[i][0] for i in ids] == [s for _, s in statuses(third)]
    # each run ends when its outcome was known: the first collection's before the middle one loaded
    assert rows[ids[0]][1] <= rows[ids[1]][1] <= rows[ids[2]][1]
