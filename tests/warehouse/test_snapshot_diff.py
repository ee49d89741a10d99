"""Snapshot diff: per-table rows and per-cell values between snapshots of real warehouses."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from test_snapshot import BASE_MODELS, add_record, base_warehouse, cli_invoke, freeze, load, record

from evalhouse.warehouse.snapshot.diff import SUBSET, diff_snapshots
from evalhouse.warehouse.snapshot.format import MANIFEST

NEW_MODEL = {"bench_a": 0.81, "bench_b": 0.66}


@pytest.fixture(scope="module")
def snapshots(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    """``before``; ``added`` (one more model imported); ``corrected`` (alpha's bench_a re-reported)."""
    root = tmp_path_factory.mktemp("diff")
    db = base_warehouse(root)
    freeze(db, root / "before", name="before")
    add_record(root / "tree", record("org/delta", NEW_MODEL))
    load(db, root / "tree")
    freeze(db, root / "added", name="added")
    corrected = record("org/alpha", {"bench_a": 0.64, "bench_b": BASE_MODELS["org/alpha"]["bench_b"]}, version=2)
    add_record(root / "tree", corrected)
    load(db, root / "tree")
    freeze(db, root / "corrected", name="corrected")
    return {"before": root / "before", "added": root / "added", "corrected": root / "corrected"}


def test_a_snapshot_diffed_with_itself_has_no_changes(snapshots: dict[str, Path]) -> None:
    result = diff_snapshots(snapshots["before"], snapshots["before"])
    assert not [t.name for t in result.tables if t.differs]
    cells = result.cells
    assert (cells.n_added, cells.n_removed, cells.n_changed) == (0, 0, 0) and cells.shared == 5
    assert result.subset_holds and result.verdict.startswith("A = B")
    ran = cli_invoke(["snapshot", "diff", str(snapshots["before"]), str(snapshots["before"])])
    assert ran.exit_code == 0 and "A = B" in ran.output


def test_an_import_that_adds_one_model_adds_exactly_its_cells(snapshots: dict[str, Path]) -> None:
    result = diff_snapshots(snapshots["before"], snapshots["added"])
    cells = result.cells
    assert {(c["config_id"], c["benchmark_id"].rsplit(".", 1)[-1], c["value"]) for c in cells.added} == {
        ("org/delta", bench, value) for bench, value in NEW_MODEL.items()
    }
    assert (cells.n_added, cells.n_removed, cells.n_changed, cells.shared) == (2, 0, 0, 5)
    assert result.verdict == SUBSET == "A ⊂ B, all shared cells unchanged" and result.subset_holds
    tables = {t.name: t for t in result.tables}
    scores = tables["score_value"]
    assert (scores.added, scores.removed, scores.changed) == (2, 0, 0)
    assert (tables["evaluation"].added, tables["ingest_run"].added, tables["model_config"].added) == (1, 1, 1)
    ran = cli_invoke(["snapshot", "diff", str(snapshots["before"]), str(snapshots["added"]), "--json"])
    assert ran.exit_code == 0, ran.output
    data = json.loads(ran.stdout)
    assert data["verdict"] == SUBSET and data["cells"]["n_added"] == 2
    text = cli_invoke(["snapshot", "diff", str(snapshots["before"]), str(snapshots["added"])])
    assert text.output.endswith(SUBSET) and "+ org/delta" in text.output


def test_a_changed_score_is_reported_with_old_and_new_values(snapshots: dict[str, Path]) -> None:
    result = diff_snapshots(snapshots["added"], snapshots["corrected"])
    cells = result.cells
    assert (cells.n_added, cells.n_removed, cells.n_changed) == (0, 0, 1)
    (change,) = cells.changed
    assert change["config_id"] == "org/alpha" and change["benchmark_id"].endswith("bench_a")
    assert (change["old_value"], change["new_value"]) == (0.61, 0.64)
    assert "⊂" not in result.verdict and not result.subset_holds
    assert result.verdict == "A ⊄ B: 1 shared cell(s) changed value"
    score = next(t for t in result.tables if t.name == "score_value")
    assert (score.added, score.removed, score.changed) == (2, 0, 0)  # history is kept; the cell moved
    ran = cli_invoke(["snapshot", "diff", str(snapshots["added"]), str(snapshots["corrected"])])
    assert ran.exit_code == 1
    assert "0.61 → 0.64" in ran.output and ran.output.endswith("A ⊄ B: 1 shared cell(s) changed value")


def test_the_other_way_round_names_the_missing_cells(snapshots: dict[str, Path]) -> None:
    result = diff_snapshots(snapshots["added"], snapshots["before"], limit=1)
    assert result.cells.n_removed == 2 and len(result.cells.removed) == 1
    assert result.verdict == "A ⊄ B: 2 cell(s) of A are missing from B"
    ran = cli_invoke(["snapshot", "diff", str(snapshots["added"]), str(snapshots["before"])])
    assert ran.exit_code == 1


def test_diff_refuses_a_corrupted_snapshot(snapshots: dict[str, Path], tmp_path: Path) -> None:
    broken = tmp_path / "broken"
    shutil.copytree(snapshots["added"], broken)
    rel = next(p for p in json.loads((broken / MANIFEST).read_text())["files"] if p.startswith("score_value/"))
    (broken / rel).write_bytes(b"PAR1")
    ran = cli_invoke(["snapshot", "diff", str(snapshots["before"]), str(broken)])
    assert ran.exit_code == 2 and rel in ran.output and "failed verification" in ran.output
