"""The capabilities index on the real Epoch hub export, checked against Epoch's published ECI.

The warehouse is built from the hub's CSVs through the real ``epoch-benchmarks`` source; the
published ``epoch_capabilities_index.csv`` is read only as the reference here (the fit never sees
it: composites are excluded from the cells). Acceptance (issue "Equating that beats Epoch's ECI
pipeline"): Spearman >= 0.98 and MAE <= 2 ECI points over >= 120 models, 90% CIs covering the
published value for >= 80% of them, and a held-out-cell RMSE below Epoch's plain objective's in the
same run. These are the issue's thresholds, not a precision the published file states.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.equate.eci import CapabilitiesIndex, Problem, fit_problem, predict
from evalhouse.analytics.equate.eci_data import hub_cells, normalise, prepare, registry
from evalhouse.analytics.equate.eci_pipeline import compare_with_published
from evalhouse.analytics.runs import eci
from evalhouse.ingest.pinned import epoch_zip
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore

pytestmark = pytest.mark.slow


@pytest.fixture(scope="module")
def hub_db(tmp_path_factory, epoch_dir: Path) -> Path:
    root = tmp_path_factory.mktemp("eci")
    zip_path = root / "benchmark_data.zip"
    zip_path.write_bytes(epoch_zip(epoch_dir))
    with Warehouse.open(root / "w.duckdb") as wh:
        assert ingest_file(wh, RawStore(root / "raw"), "epoch-benchmarks", str(zip_path)).status in (
            "completed",
            "partial",
        )
    return root / "w.duckdb"


@pytest.fixture(scope="module")
def published(epoch_dir: Path) -> pd.Series:
    frame = pd.read_csv(epoch_dir / "epoch_capabilities_index.csv").dropna(subset=["ECI Score"])
    return frame.set_index("Model version")["ECI Score"]


@pytest.fixture(scope="module")
def outcome(hub_db: Path):
    return eci(db=hub_db, record_into=hub_db, n_bootstrap=100, random_state=0)


def test_agrees_with_the_published_eci(outcome, published: pd.Series) -> None:
    agreement = compare_with_published(outcome.payload["models"], published)
    assert agreement["n"] >= 120
    assert agreement["spearman"] >= 0.98  # measured 0.996
    assert agreement["mae"] <= 2.0  # measured 1.07 ECI points
    assert agreement["coverage"] >= 0.80  # measured 1.00


def test_beats_epochs_plain_objective_held_out(outcome) -> None:
    rmse = {(c["objective"], c["grouping"]): c["heldout_rmse"] for c in outcome.extra["comparison"]}
    ours, epoch = rmse[("cv", "configuration")], rmse[("epoch", "configuration")]
    assert ours == outcome.payload["heldout_rmse"]
    assert ours < epoch  # measured 0.1149 vs 0.1156 (the issue: Epoch's objective scores about 0.113)
    assert 0.09 < epoch < 0.13
    # On the other cell set (the best score per base model) the cross-validated penalties win too.
    assert rmse[("cv", "base_model")] < rmse[("epoch", "base_model")]


def test_json_shape_anchors_and_record(outcome, hub_db: Path) -> None:
    payload = outcome.payload
    assert set(payload) == {"models", "benchmarks", "heldout_rmse", "iterations"}
    json.dumps(payload, allow_nan=False)
    assert set(payload["models"][0]) == {"model", "group", "eci", "ci_low", "ci_high", "n_benchmarks"}
    assert set(payload["benchmarks"][0]) == {"benchmark", "edi", "slope"}
    by_name = {m["model"]: m for m in payload["models"]}
    assert by_name["claude-3-5-sonnet-20240620"]["eci"] == pytest.approx(130.0)
    assert by_name["gpt-5-2025-08-07_medium"]["eci"] == pytest.approx(150.0)
    assert all(
        m["n_benchmarks"] >= 4 and m["ci_low"] <= m["eci"] + 1e-9 <= m["ci_high"] + 2e-9 for m in payload["models"]
    )
    edi = {b["benchmark"]: b for b in payload["benchmarks"]}
    assert "webdev_arena" not in edi and "epoch_capabilities_index" not in edi
    assert payload["iterations"] > 0 and outcome.extra["final_change"] < 1e-2
    con = duckdb.connect(str(hub_db), read_only=True)
    try:
        kind, pin = con.execute(
            "SELECT kind, snapshot_id FROM analysis_run WHERE analysis_id = ?", [outcome.analysis_id]
        ).fetchone()
        n_rows = con.execute(
            "SELECT count(*) FROM analysis_eci WHERE analysis_id = ?", [outcome.analysis_id]
        ).fetchone()[0]
        n_bench = con.execute(
            "SELECT count(*) FROM analysis_eci_benchmark WHERE analysis_id = ?", [outcome.analysis_id]
        ).fetchone()[0]
    finally:
        con.close()
    assert kind == "capabilities_index" and pin.startswith("warehouse-state:")
    assert n_rows == len(payload["models"]) and n_bench == len(payload["benchmarks"])


def test_only_hub_cells_enter(hub_db: Path, aa_csv: Path, tmp_path: Path) -> None:
    """With the AA snapshot loaded too, the hub cells are unchanged: AA's GPQA never leaks in."""
    both = tmp_path / "both.duckdb"
    shutil.copy(hub_db, both)
    with Warehouse.open(both) as wh:
        assert ingest_file(wh, RawStore(tmp_path / "raw"), "artificial-analysis", str(aa_csv)).status == "completed"
    with Warehouse.open(hub_db, read_only=True) as wh:
        alone = hub_cells(wh.con)
    with Warehouse.open(both, read_only=True) as wh:
        mixed = hub_cells(wh.con)
        aa_gpqa = wh.scalar(
            "SELECT count(*) FROM v_score_current "
            "WHERE source_key = 'artificial-analysis' AND benchmark_id = 'gpqa_diamond'"
        )
    assert aa_gpqa > 100
    cols = ["config_id", "benchmark_id", "value"]
    pd.testing.assert_frame_equal(alone[cols].reset_index(drop=True), mixed[cols].reset_index(drop=True))


def test_registry_normalisation_and_screening(hub_db: Path) -> None:
    reg = registry()["benchmarks"]
    assert all(e.get("source") for e in reg.values())  # every entry cites where its values come from
    np.testing.assert_allclose(normalise([0.25, 0.625, 1.0, 0.1], reg["gpqa_diamond"]), [0.0, 0.5, 1.0, 0.0])
    log = normalise([0.01, 1.0, 10000.0, 1e6], reg["metr_time_horizons"])
    np.testing.assert_allclose(log, [0.0, 1 / 3, 1.0, 1.0])
    with Warehouse.open(hub_db, read_only=True) as wh:
        cells = prepare(hub_cells(wh.con))
    per_group = cells.cells.groupby("group")["benchmark"].nunique()
    per_bench = cells.cells.groupby("benchmark")["group"].nunique()
    assert per_group.min() >= 4 and per_bench.min() >= 5
    assert cells.cells["p"].between(0, 1).all()
    assert cells.dropped["rows_released_before"] > 0 and "webdev_arena" in cells.dropped["benchmarks_excluded"]


def test_supersession_drops_the_older_benchmark_for_groups_with_the_newer(monkeypatch) -> None:
    reg = {**registry()}
    reg["benchmarks"] = {
        **reg["benchmarks"],
        "frontiermath_tier_4": {**reg["benchmarks"]["frontiermath_tier_4"], "supersedes": ["frontiermath"]},
    }
    monkeypatch.setattr("evalhouse.analytics.equate.eci_data.registry", lambda: reg)
    rows = [
        {
            "config_id": g,
            "base_model_id": g,
            "source_models": [g],
            "release_date": pd.Timestamp("2024-01-01"),
            "benchmark_id": b,
            "value": v,
        }
        for g in [f"m{i}" for i in range(6)]
        for b, v in (
            ("frontiermath", 0.1),
            ("frontiermath_tier_4", 0.05),
            ("gpqa_diamond", 0.5),
            ("mmlu", 0.6),
            ("winogrande", 0.7),
        )
    ]
    cells = prepare(pd.DataFrame(rows))
    assert "frontiermath" not in set(cells.cells["benchmark"]) and cells.dropped["superseded_cells"] == 6


def test_recovers_a_planted_index() -> None:
    """Synthetic 2PL cells: the fit recovers the planted abilities (up to the anchor's scale)."""
    rng = np.random.default_rng(0)
    n_g, n_b = 60, 12
    C, D, A = rng.normal(0, 1, n_g), np.r_[0.0, rng.normal(0, 1, n_b - 1)], np.r_[0.0, rng.normal(0, 0.3, n_b - 1)]
    g, b = np.meshgrid(np.arange(n_g), np.arange(n_b), indexing="ij")
    keep = rng.random(g.shape) < 0.7
    g, b = g[keep], b[keep]
    p = 1 / (1 + np.exp(-np.exp(A[b]) * (C[g] - D[b]))) + rng.normal(0, 0.02, len(g))
    pr = Problem(g, b, np.clip(p, 0, 1), n_g, n_b, 0)
    x, iterations, change = fit_problem(pr, (1e-4, 1e-4), False)
    assert np.corrcoef(x[:n_g], C)[0, 1] > 0.98 and iterations < 500 and change < 1e-6
    assert np.sqrt(np.mean((predict(x, pr, False) - pr.p) ** 2)) < 0.03
    with pytest.raises(ValueError, match="objective"):
        CapabilitiesIndex("bayes").fit(
            pd.DataFrame({"group": ["a"], "benchmark": ["b"], "p": [0.5]}), anchor="b", scale_anchors={}
        )
