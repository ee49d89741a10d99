"""Score ids come from content: a reparse of unchanged bytes keeps every id, `audit score` still
finds them, and `snapshot diff` between before and after shows no cell change (both pinned
sources, loaded through the real refresh over loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.pipeline.reparse import reparse
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.diff import diff_snapshots
from evalhouse.warehouse.snapshot.freeze import create_snapshot

runner = CliRunner()
#: What a reparse may change on a score row: the run that wrote it and when.
RUN_COLUMNS = {"run_id", "loaded_at"}


@pytest.fixture(scope="module")
def states(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """A copy of the session's warehouse (both pinned sources through the real refresh over
    loopback), snapshotted, both sources reparsed from their stored bytes, snapshotted again."""
    from realwarehouse import copy_warehouse

    root = tmp_path_factory.mktemp("reparse")
    db = copy_warehouse(real_warehouse, root)
    store = RawStore(db.with_suffix(".raw"))
    with Warehouse.open(db) as wh:
        before = dict(wh.con.execute("SELECT score_id, fingerprint FROM score").fetchall())
        create_snapshot(wh, root / "before", store, name="before")
        results = [reparse(wh, store, key) for key in ("epoch-benchmarks", "artificial-analysis")]
        after = dict(wh.con.execute("SELECT score_id, fingerprint FROM score").fetchall())
        create_snapshot(wh, root / "after", store, name="after")
    return {"db": db, "before": before, "after": after, "results": results, "root": root}


def test_a_reparse_keeps_every_score_id(states: dict) -> None:
    assert all(r.status in {"completed", "partial"} for r in states["results"])
    assert len(states["before"]) > 10_000
    assert states["after"] == states["before"], "the same bytes give the same ids and fingerprints"


def test_audit_score_finds_an_id_from_before_the_reparse_and_its_fingerprint_prefix(states: dict) -> None:
    score_id, fingerprint = next(iter(states["before"].items()))
    by_id = runner.invoke(app, ["--db", str(states["db"]), "audit", "score", str(score_id), "--json"])
    assert by_id.exit_code == 0, by_id.output
    by_prefix = runner.invoke(app, ["--db", str(states["db"]), "audit", "score", fingerprint[:10], "--json"])
    assert by_prefix.exit_code == 0, by_prefix.output
    assert (
        json.loads(by_id.stdout)["score"]["score_id"] == json.loads(by_prefix.stdout)["score"]["score_id"] == score_id
    )
    missing = runner.invoke(app, ["--db", str(states["db"]), "audit", "score", "123"])
    assert missing.exit_code != 0 and "no score with id 123" in missing.output


def test_snapshot_diff_after_a_no_change_reparse_is_empty(states: dict) -> None:
    result = diff_snapshots(states["root"] / "before", states["root"] / "after")
    cells = result.cells
    assert (cells.n_added, cells.n_removed, cells.n_changed) == (0, 0, 0) and cells.shared > 9_000
    assert result.verdict.startswith("A = B")
    tables = {t.name: t for t in result.tables}
    score = tables["score_value"]
    assert (score.added, score.removed) == (0, 0)
    assert set(score.changed_columns) <= RUN_COLUMNS, score.changed_columns
    evaluation = tables["evaluation"]
    assert (evaluation.added, evaluation.removed) == (0, 0)
    assert set(evaluation.changed_columns) <= RUN_COLUMNS | {"record"}, evaluation.changed_columns
