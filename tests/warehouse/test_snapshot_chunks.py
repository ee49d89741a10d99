"""Snapshots written in chunks (bounded memory) hold exactly what the warehouse holds, reproducibly,
and a diff that skips the files two snapshots share gives what a full comparison gives."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from realwarehouse import copy_warehouse
from test_snapshot import freeze

from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.snapshot import diff as snapshot_diff
from evalhouse.warehouse.snapshot import write as sw
from evalhouse.warehouse.snapshot.diff import diff_snapshots
from evalhouse.warehouse.snapshot.format import MANIFEST
from evalhouse.warehouse.snapshot.reader import open_snapshot
from evalhouse.warehouse.snapshot.verify import verify_snapshot

COMPARED = (
    "score",
    "score_value",
    "evaluation",
    "v_scores_canonical",
    "v_matrix_long",
    "v_scores_by_family",
    "v_benchmark_setup",
)


def rows_of(con: duckdb.DuckDBPyConnection, name: str) -> list[tuple[Any, ...]]:
    return con.execute(f"SELECT * FROM {name} ORDER BY ALL").fetchall()


def small_chunks(monkeypatch: pytest.MonkeyPatch, db: Path, pieces: int = 4) -> int:
    """Make CHUNK_ROWS a quarter of the scores, so every large relation is written in pieces."""
    with Warehouse.open(db, read_only=True) as wh:
        n = int(wh.scalar("SELECT count(*) FROM score"))
    assert n > 100, "the real warehouse is expected to hold real scores"
    monkeypatch.setattr(sw, "CHUNK_ROWS", n // pieces + 1)
    return n


@pytest.fixture(scope="module")
def real_copy(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    return copy_warehouse(real_warehouse, tmp_path_factory.mktemp("chunks"))


def test_a_chunked_snapshot_holds_exactly_the_warehouse(
    real_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    n = small_chunks(monkeypatch, real_copy)
    created = freeze(real_copy, tmp_path / "chunked")
    files = created.manifest["tables"]
    canonical = files["v_scores_canonical"]["files"]
    assert canonical == [f"v_scores_canonical/data_{j}.parquet" for j in range(len(canonical))]
    assert len(canonical) >= 3, canonical  # computed per range of model configurations
    values = files["score_value"]["files"]
    assert len(values) > len({f.split("/")[1] for f in values})  # chunks per source
    assert files["score_value"]["rows"] == n and files["v_scores_by_family"].get("derived") is True
    assert verify_snapshot(created.path).ok
    con = open_snapshot(created.path)
    with Warehouse.open(real_copy, read_only=True) as wh:
        for name in COMPARED:
            live = rows_of(wh.con, name)
            assert live, name
            assert rows_of(con, name) == live, name
    con.close()
    # the same state again, from a reopened warehouse: the same id and the same bytes
    again = freeze(real_copy, tmp_path / "again")
    assert again.snapshot_id == created.snapshot_id
    for rel in created.manifest["files"]:
        assert (again.path / rel).read_bytes() == (created.path / rel).read_bytes(), rel


def test_a_source_row_shared_by_two_configurations_is_computed_whole(
    real_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Chunking by configuration would split that supersession; the check sees it and writes one piece."""
    db = copy_warehouse(real_copy, tmp_path / "w")
    small_chunks(monkeypatch, db)
    con = duckdb.connect(str(db))
    (first,) = con.execute("SELECT score_id FROM score ORDER BY config_id, score_id LIMIT 1").fetchone()
    con.execute(
        "UPDATE score_value SET source_row_key = "
        "(SELECT source_row_key FROM score ORDER BY config_id DESC, score_id LIMIT 1) WHERE score_id = ?",
        [first],
    )
    con.execute(  # the record's observation time: every score of that record is newer than the rest
        "UPDATE evaluation SET observed_at = TIMESTAMP '2100-01-01' "
        "WHERE evaluation_id = (SELECT evaluation_id FROM score_value WHERE score_id = ?)",
        [first],
    )
    con.close()
    created = freeze(db, tmp_path / "whole")
    assert created.manifest["tables"]["v_scores_canonical"]["files"] == ["v_scores_canonical/data_0.parquet"]
    snap = open_snapshot(created.path)
    with Warehouse.open(db, read_only=True) as wh:
        assert rows_of(snap, "v_scores_canonical") == rows_of(wh.con, "v_scores_canonical")
    snap.close()


def test_a_diff_reads_only_the_files_that_differ_and_gives_the_full_answer(
    real_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db = copy_warehouse(real_copy, tmp_path / "w")
    small_chunks(monkeypatch, db)
    before = freeze(db, tmp_path / "before")
    con = duckdb.connect(str(db))
    (changed,) = con.execute("SELECT max(score_id) FROM score_value").fetchone()
    con.execute("UPDATE score_value SET value = value / 2 WHERE score_id = ?", [changed])
    con.execute("DELETE FROM score_value WHERE score_id = (SELECT min(score_id) FROM score_value)")
    con.close()
    after = freeze(db, tmp_path / "after")
    fa, fb = (json.loads((s.path / MANIFEST).read_text())["files"] for s in (before, after))
    unchanged = [f for f in fa if f.startswith("score_value/") and fb.get(f, {}).get("sha256") == fa[f]["sha256"]]
    assert unchanged, "the other chunks of score_value are byte-identical"
    skipping = diff_snapshots(before.path, after.path, limit=None).as_dict()
    monkeypatch.setattr(snapshot_diff, "_shared_files", lambda *args: set())
    full = diff_snapshots(before.path, after.path, limit=None).as_dict()
    assert skipping == full
    score = full["tables"]["score_value"]
    assert (score["removed"], score["changed"], score["changed_columns"]) == (1, 1, {"value": 1})
    assert full["cells"]["n_changed"] + full["cells"]["n_removed"] >= 1 and not full["subset_holds"]


@pytest.mark.parametrize("rows", [0, 1, 10])
def test_range_predicates_cover_every_row_once(rows: int, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(sw, "CHUNK_ROWS", 3)
    con = duckdb.connect()
    con.execute(f"CREATE TABLE t AS SELECT (i * 7) % 11 AS k, 'x' || i AS s FROM range({rows}) r(i)")
    for column in ("k", "s"):
        predicates = sw.range_predicates(con, "t", column, rows)
        assert len(predicates) == max(1, -(-rows // 3))
        seen = [con.execute(f"SELECT count(*) FROM t WHERE {p}").fetchone()[0] for p in predicates]
        assert sum(seen) == rows and (rows == 0 or all(seen)), (column, predicates, seen)


def test_nothing_is_left_of_the_scratch_folders(
    real_copy: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    small_chunks(monkeypatch, real_copy)
    created = freeze(real_copy, tmp_path / "s")
    on_disk = sorted(p.relative_to(created.path).as_posix() for p in created.path.rglob("*") if p.is_file())
    assert on_disk == sorted([*created.manifest["files"], MANIFEST])
    assert not [p for p in created.path.rglob(".*")]
    shutil.rmtree(created.path)
