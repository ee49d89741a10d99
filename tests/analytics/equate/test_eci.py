"""The capabilities index: Epoch's objective checked against an independent least-squares fit, the
inclusion rule on a UNICORN-like case, the interval construction, and the index on the real hub.

The hub tests read the session's ``real_warehouse`` (the Epoch export and the AA snapshot loaded by
the real refresh over loopback); the published ``epoch_capabilities_index.csv`` is read only as the
reference here (the fit never sees it: composites are excluded from the cells). Tolerances are
chosen ones unless said otherwise: the published file states no precision.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import duckdb
import numpy as np
import pandas as pd
import pytest
from scipy.optimize import least_squares, minimize_scalar

from evalhouse.analytics.equate.eci import (
    CapabilitiesIndex,
    Problem,
    _damped_step,
    _normal_equations,
    fit_problem,
    predict,
)
from evalhouse.analytics.equate.eci_data import hub_cells, normalise, prepare, registry
from evalhouse.analytics.equate.eci_pipeline import capabilities_index, compare_with_published, fit_index
from evalhouse.analytics.equate.eci_sensitivity import PENALTIES, time_slopes
from evalhouse.analytics.runs import eci
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore


# --------------------------------------------------------------------------- small planted problems
def planted(n_g: int = 40, n_b: int = 8, seed: int = 0, keep: float = 0.7, noise: float = 0.02):
    rng = np.random.default_rng(seed)
    C, D = rng.normal(0, 1, n_g), np.r_[0.0, rng.normal(0, 1, n_b - 1)]
    A = np.r_[0.0, rng.normal(0, 0.3, n_b - 1)]
    g, b = np.meshgrid(np.arange(n_g), np.arange(n_b), indexing="ij")
    mask = rng.random(g.shape) < keep
    mask[:, 0] = True  # every group is observed on the anchor benchmark
    g, b = g[mask], b[mask]
    p = 1 / (1 + np.exp(-np.exp(A[b]) * (C[g] - D[b]))) + rng.normal(0, noise, len(g))
    return Problem(g, b, np.clip(p, 0, 1), n_g, n_b, 0), C


def epoch_residuals(theta: np.ndarray, pr: Problem, lam: float, raw: bool) -> np.ndarray:
    """Epoch's objective written from its definition, independently of the estimator: cell residuals
    plus one penalty residual sqrt(λ mean(θ²)) over the free parameters (α as log α or α itself)."""
    C = theta[: pr.n_g]
    D = np.r_[0.0, theta[pr.n_g : pr.n_g + pr.n_b - 1]]
    logs = np.r_[0.0, theta[pr.n_g + pr.n_b - 1 :]]
    pred = 1 / (1 + np.exp(-np.exp(logs[pr.b]) * (C[pr.g] - D[pr.b])))
    slopes = np.exp(logs[1:]) if raw else logs[1:]
    params = np.r_[C, D[1:], slopes]
    return np.r_[pred - pr.p, np.sqrt(lam * np.mean(params**2))]


@pytest.mark.parametrize(("lam", "raw"), [(1e-3, False), (0.1, True), (1.0, False)])
def test_the_fit_minimises_epochs_objective(lam: float, raw: bool) -> None:
    """Our Levenberg-Marquardt optimum equals scipy's least_squares on Epoch's objective (<= 1e-5)."""
    pr, _ = planted(n_g=15, n_b=5, seed=1, keep=0.8)
    x, _, _ = fit_problem(pr, lam, raw_alpha=raw)
    theta0 = np.r_[x[: pr.n_g], x[pr.n_g + 1 : pr.n_g + pr.n_b], x[pr.n_g + pr.n_b + 1 :]]
    ref = least_squares(epoch_residuals, theta0 + 0.05, args=(pr, lam, raw), xtol=1e-12, ftol=1e-12, gtol=1e-12)
    assert np.max(np.abs(ref.x - theta0)) < 1e-5
    ours = float(np.sum(epoch_residuals(theta0, pr, lam, raw) ** 2))
    assert ours <= float(np.sum(ref.fun**2)) + 1e-12


def test_damped_step_is_the_direct_solve() -> None:
    pr, _ = planted(seed=2)
    x = np.random.default_rng(0).normal(0, 0.3, pr.n_g + 2 * pr.n_b)
    _, grad, H = _normal_equations(x, pr, 0.01, False)
    direct = -np.linalg.solve(H + 1e-3 * np.diag(np.maximum(np.diag(H), 1e-12)), grad)
    np.testing.assert_allclose(_damped_step(H, grad, 1e-3, pr.n_g), direct, atol=1e-10)


def test_recovers_a_planted_index() -> None:
    pr, C = planted(n_g=60, n_b=12)
    x, iterations, change = fit_problem(pr, 1e-3)
    assert np.corrcoef(x[: pr.n_g], C)[0, 1] > 0.98 and iterations < 500 and change < 1e-6
    assert np.sqrt(np.mean((predict(x, pr) - pr.p) ** 2)) < 0.03
    with pytest.raises(ValueError, match="objective"):
        CapabilitiesIndex("bayes").fit(
            pd.DataFrame({"group": ["a"], "benchmark": ["b"], "p": [0.5]}), anchor="b", scale_anchors={}
        )


def _cells(pr: Problem) -> pd.DataFrame:
    return pd.DataFrame({"group": [f"m{g:02d}" for g in pr.g], "benchmark": [f"b{b}" for b in pr.b], "p": pr.p})


def test_intervals_are_the_resamples_percentiles_and_the_anchors_defined() -> None:
    pr, _ = planted(seed=3)
    fit = CapabilitiesIndex(n_bootstrap=30, heldout_folds=0).fit(
        _cells(pr), anchor="b0", scale_anchors={"m00": 130.0, "m01": 150.0}
    )
    assert fit.eci_["m00"] == pytest.approx(130.0) and fit.eci_["m01"] == pytest.approx(150.0)
    # the 5th and 95th percentiles of the re-anchored resamples
    draws = fit.bootstrap_eci_
    assert draws.shape == (30, pr.n_g)
    np.testing.assert_allclose(draws[:, 0], 130.0) and np.testing.assert_allclose(draws[:, 1], 150.0)
    lo, hi = np.percentile(draws, [5, 95], axis=0)
    np.testing.assert_allclose(fit.ci_low_.to_numpy(), lo) and np.testing.assert_allclose(fit.ci_high_.to_numpy(), hi)
    assert (fit.ci_high_ - fit.ci_low_)[["m00", "m01"]].max() < 1e-9  # exact by definition
    others = fit.ci_high_.drop(["m00", "m01"]) - fit.ci_low_.drop(["m00", "m01"])
    assert (others > 0).all()
    assert set(fit.anchor_position_) == {"m00", "m01"}
    assert all(lo < hi for lo, hi in fit.anchor_position_.values())


def test_placing_a_group_reads_it_off_the_fitted_curves() -> None:
    pr, _ = planted(seed=4)
    fit = CapabilitiesIndex(n_bootstrap=0, heldout_folds=0).fit(
        _cells(pr), anchor="b0", scale_anchors={"m00": 130.0, "m01": 150.0}
    )
    new = pd.DataFrame(
        {"group": ["x", "x", "x", "y"], "benchmark": ["b0", "b2", "zz", "b3"], "p": [0.9, 0.7, 0.1, 0.2]}
    )
    placed = fit.place(new).set_index("group")
    assert placed.loc["x", "n_benchmarks"] == 2  # zz is not a fitted benchmark
    # independently: minimise the squared residuals on the fitted curves + the fit's penalty on C
    a, s = fit.scale_
    d = (fit.edi_[["b0", "b2"]].to_numpy() - a) / s
    alpha = fit.slope_[["b0", "b2"]].to_numpy() * s
    w = fit.penalty_ / fit.problem_.n_free

    def loss(c: float) -> float:
        return float(np.sum((1 / (1 + np.exp(-alpha * (c - d))) - [0.9, 0.7]) ** 2) + w * c * c)

    c = minimize_scalar(loss, bounds=(-20, 20), method="bounded", options={"xatol": 1e-10}).x
    assert placed.loc["x", "eci"] == pytest.approx(a + s * c, abs=1e-4)


def _long(rows: list[tuple[str, str | None, str, float]]) -> pd.DataFrame:
    return pd.DataFrame(
        [
            {
                "config_id": g,
                "base_model_id": g,
                "source_models": [g],
                "release_date": pd.Timestamp(date) if date else pd.NaT,
                "benchmark_id": bench,
                "value": value,
            }
            for g, date, bench, value in rows
        ]
    )


BENCHES = ("winogrande", "hellaswag", "piqa", "mmlu", "gpqa_diamond")


def test_the_inclusion_rule_keeps_an_undated_saturated_model_out() -> None:
    """A UNICORN-like group (no release date, four near-saturated commonsense scores) is kept out
    before the fit and listed apart; dated groups with >= 4 benchmarks are fitted; a dated group
    with 3 benchmarks is listed apart with its reason."""
    rng = np.random.default_rng(0)
    rows = [
        (f"m{i}", "2024-01-01", bench, float(v))
        for i in range(8)
        for bench, v in zip(BENCHES, rng.uniform(0.55, 0.9, len(BENCHES)), strict=True)
    ]
    rows += [("unicorn", None, b, 0.97) for b in ("winogrande", "hellaswag", "piqa", "mmlu")]
    rows += [("short", "2024-05-01", b, 0.8) for b in ("winogrande", "hellaswag", "piqa")]
    rows += [("old", "2021-06-01", b, 0.99) for b in BENCHES]  # released before 2023: rows dropped
    cells = prepare(_long(rows))
    fitted = set(cells.cells["group"])
    assert fitted == {f"m{i}" for i in range(8)}
    reasons = cells.apart.groupby("group")["reason"].first().to_dict()
    assert reasons == {"unicorn": "release date unknown", "short": "fewer than 4 benchmarks with enough models"}
    assert cells.dropped["groups_undated"] == 1 and cells.dropped["rows_released_before"] == 5
    assert cells.dates["unicorn"] is pd.NaT and cells.dates["m0"] == pd.Timestamp("2024-01-01")
    # the rule is applied before the fit: the kept-out group changes nothing
    alone = prepare(_long([r for r in rows if r[0] != "unicorn"]))
    pd.testing.assert_frame_equal(cells.cells, alone.cells)


def test_supersession_drops_the_older_benchmark_for_groups_with_the_newer(monkeypatch) -> None:
    reg = {**registry()}
    reg["benchmarks"] = {
        **reg["benchmarks"],
        "frontiermath_tier_4": {**reg["benchmarks"]["frontiermath_tier_4"], "supersedes": ["frontiermath"]},
    }
    monkeypatch.setattr("evalhouse.analytics.equate.eci_data.registry", lambda: reg)
    rows = [
        (f"m{i}", "2024-01-01", b, v)
        for i in range(6)
        for b, v in (
            ("frontiermath", 0.1),
            ("frontiermath_tier_4", 0.05),
            ("gpqa_diamond", 0.5),
            ("mmlu", 0.6),
            ("winogrande", 0.7),
        )
    ]
    cells = prepare(_long(rows))
    assert "frontiermath" not in set(cells.cells["benchmark"]) and cells.dropped["superseded_cells"] == 6


def test_time_slopes_by_hand() -> None:
    dates = pd.Series(pd.to_datetime(["2023-01-01", "2024-01-01", "2024-01-01", "2025-01-01", "2025-07-02"]))
    eci = pd.Series([100.0, 110.0, 90.0, 105.0, 130.0])
    out = time_slopes(eci, dates)
    years = (dates - pd.Timestamp("2023-01-01")).dt.days / 365.25
    assert out["slope_per_year"] == pytest.approx(np.polyfit(years, eci, 1)[0])
    # frontier: 100 (2023), 110 (2024), 130 (2025-07); 105 in 2025-01 is below the running maximum
    assert out["n_frontier"] == 3
    assert out["frontier_slope_per_year"] == pytest.approx(np.polyfit(years[[0, 1, 4]], eci[[0, 1, 4]], 1)[0])


# --------------------------------------------------------------------------- the real hub
@pytest.fixture(scope="module")
def published(epoch_dir: Path) -> pd.Series:
    frame = pd.read_csv(epoch_dir / "epoch_capabilities_index.csv").dropna(subset=["ECI Score"])
    return frame.set_index("Model version")["ECI Score"]


@pytest.fixture(scope="module")
def hub(real_warehouse: Path):
    with Warehouse.open(real_warehouse, read_only=True) as wh:
        long = hub_cells(wh.con)
    return long, prepare(long)


@pytest.fixture(scope="module")
def outcome(real_warehouse: Path, tmp_path_factory):
    from realwarehouse import copy_warehouse

    db = copy_warehouse(real_warehouse, tmp_path_factory.mktemp("eci-record"))
    return eci(db=real_warehouse, record_into=db, n_bootstrap=20, compare=False, sensitivity=True), db


def test_unicorn_is_kept_out_of_the_hub_fit_and_shown_apart(outcome) -> None:
    run, _ = outcome
    fitted = {m["model"] for m in run.payload["models"]}
    apart = {a["model"]: a for a in run.payload["apart"]}
    assert "UNICORN" not in fitted
    assert apart["UNICORN"]["reason"] == "release date unknown" and apart["UNICORN"]["n_benchmarks"] == 4
    assert apart["UNICORN"]["eci_placed"] is not None  # read off the curves, shown apart
    assert all(a["eci_placed"] is None for a in apart.values() if a["n_benchmarks"] < 4)
    assert len(fitted) >= 120 and all(m["n_benchmarks"] >= 4 for m in run.payload["models"])


def test_sensitivity_on_the_hub(outcome, hub) -> None:
    run, _ = outcome
    long, cells = hub
    sens = run.payload["sensitivity"]
    variants = {v["label"]: v for v in sens["variants"]}
    penalties = {v["penalty"] for v in sens["variants"] if v["kind"] == "penalty"}
    assert penalties == set(PENALTIES) and {1e-3, 0.1} <= penalties
    assert any(v["kind"] == "alpha" and v["alpha_penalty"] == "raw" and v["penalty"] == 0.1 for v in variants.values())
    assert {v["anchor"] for v in variants.values() if v["kind"] == "anchor"} <= set(cells.cells["benchmark"])
    assert len([v for v in variants.values() if v["kind"] == "anchor"]) == 2
    # the variant with the run's own settings reproduces the run
    same = variants["λ = 0.001 (largest of the stable region)"]
    assert same["max_abs_diff"] < 1e-3 and same["max_rank_shift"] == 0 and same["slope_ratio"] == pytest.approx(1.0)
    # the baseline's slope is the OLS slope of the printed ECIs on the release dates, computed here
    dates = long.assign(group=long["config_id"].astype(str)).groupby("group")["release_date"].min()
    eci_by_group = {m["group"]: m["eci"] for m in run.payload["models"]}
    frame = pd.DataFrame({"eci": pd.Series(eci_by_group), "date": dates}).dropna()
    years = (frame["date"] - pd.Timestamp("2023-01-01")).dt.days / 365.25
    slope = np.polyfit(years, frame["eci"], 1)[0]
    assert sens["baseline"]["slope_per_year"] == pytest.approx(slope, rel=1e-9)
    assert run.payload["time_slopes"]["slope_per_year"] == pytest.approx(slope, rel=1e-9)
    # ranks and ECIs per model under every variant
    model = sens["models"][0]
    assert set(model["eci"]) == {"baseline", *variants} and model["rank"]["baseline"] == 1
    assert model["eci"]["baseline"] == pytest.approx(max(eci_by_group.values()))
    # a strong penalty moves the index: λ = 1 is not in the stable region
    assert variants["λ = 1"]["max_abs_diff"] > 1.0


def test_json_shape_anchors_and_record(outcome) -> None:
    run, db = outcome
    payload = run.payload
    assert set(payload) == {"models", "apart", "benchmarks", "heldout_rmse", "iterations", "time_slopes", "sensitivity"}
    json.dumps(payload, allow_nan=False)
    assert set(payload["models"][0]) == {"model", "group", "eci", "ci_low", "ci_high", "n_benchmarks"}
    assert set(payload["benchmarks"][0]) == {"benchmark", "edi", "slope"}
    by_name = {m["model"]: m for m in payload["models"]}
    for name, value in (("claude-3-5-sonnet-20240620", 130.0), ("gpt-5-2025-08-07_medium", 150.0)):
        assert by_name[name]["eci"] == pytest.approx(value)
        assert by_name[name]["ci_high"] - by_name[name]["ci_low"] == pytest.approx(0.0, abs=1e-9)
        lo, hi = run.extra["anchor_position"][by_name[name]["group"]]
        assert lo < hi
    assert all(m["ci_low"] <= m["ci_high"] for m in payload["models"])
    inside = [m["ci_low"] - 1e-9 <= m["eci"] <= m["ci_high"] + 1e-9 for m in payload["models"]]
    assert np.mean(inside) >= 0.9
    edi = {b["benchmark"]: b for b in payload["benchmarks"]}
    assert "webdev_arena" not in edi and "epoch_capabilities_index" not in edi
    assert payload["iterations"] > 0 and run.extra["final_change"] < 1e-2
    con = duckdb.connect(str(db), read_only=True)
    try:
        kind, pin, params = con.execute(
            "SELECT kind, snapshot_id, params FROM analysis_run WHERE analysis_id = ?", [run.analysis_id]
        ).fetchone()
        n_rows = con.execute("SELECT count(*) FROM analysis_eci WHERE analysis_id = ?", [run.analysis_id]).fetchone()[0]
    finally:
        con.close()
    assert kind == "capabilities_index" and pin.startswith("warehouse-state:")
    assert json.loads(params)["objective"] == "stable"
    assert n_rows == len(payload["models"])


def test_epochs_objective_reproduces_the_published_eci(hub, published: pd.Series) -> None:
    """Epoch's code as published (λ = 0.1, raw α) on the hub's cells against Epoch's file; the
    default (stable λ) ranks the same models the same way but shrinks less."""
    from evalhouse.analytics.equate.eci_pipeline import _model_rows

    _, cells = hub
    epoch = fit_index(cells, objective="epoch", n_bootstrap=0, heldout_folds=0)
    agreement = compare_with_published(_model_rows(cells, epoch), published)
    assert agreement["n"] >= 120
    assert agreement["spearman"] >= 0.99  # measured 0.998
    assert agreement["mae"] <= 1.5  # measured 1.05 ECI points
    stable = fit_index(cells, n_bootstrap=0, heldout_folds=0)
    agreement = compare_with_published(_model_rows(cells, stable), published)
    assert agreement["spearman"] >= 0.99 and agreement["mae"] <= 4.0  # measured 0.997, 2.99


@pytest.mark.slow  # ~35 s on a shared 2-core machine: 5-fold cross-validation inside 5 outer folds, twice
def test_the_heldout_comparison_names_epochs_objective(real_warehouse: Path) -> None:
    with Warehouse.open(real_warehouse, read_only=True) as wh:
        run = capabilities_index(wh.con)  # the defaults: the report's section reads this fit back
    rmse = {(c["objective"], c["grouping"]): c["heldout_rmse"] for c in run.comparison}
    assert set(rmse) == {
        ("epoch", "configuration"),
        ("cv_hierarchical", "configuration"),
        ("cv", "configuration"),
        ("stable", "configuration"),
        ("epoch", "base_model"),
        ("stable", "base_model"),
    }
    assert rmse[("stable", "configuration")] == run.payload["heldout_rmse"]
    # every objective predicts held-out cells about equally well (measured 0.1093-0.1107)
    config = [v for (_, grouping), v in rmse.items() if grouping == "configuration"]
    assert min(config) > 0.09 and max(config) - min(config) < 0.005


def test_registry_normalisation_and_screening(hub) -> None:
    reg = registry()["benchmarks"]
    assert all(e.get("source") for e in reg.values())  # every entry cites where its values come from
    np.testing.assert_allclose(normalise([0.25, 0.625, 1.0, 0.1], reg["gpqa_diamond"]), [0.0, 0.5, 1.0, 0.0])
    log = normalise([0.01, 1.0, 10000.0, 1e6], reg["metr_time_horizons"])
    np.testing.assert_allclose(log, [0.0, 1 / 3, 1.0, 1.0])
    _, cells = hub
    per_group = cells.cells.groupby("group")["benchmark"].nunique()
    per_bench = cells.cells.groupby("benchmark")["group"].nunique()
    assert per_group.min() >= 4 and per_bench.min() >= 5
    assert cells.cells["p"].between(0, 1).all()
    assert cells.dates.reindex(per_group.index).notna().all()  # every fitted group is dated
    assert cells.dropped["rows_released_before"] > 0 and "webdev_arena" in cells.dropped["benchmarks_excluded"]


@pytest.mark.slow
def test_only_hub_cells_enter(epoch_dir: Path, aa_csv: Path, tmp_path: Path) -> None:
    """With the AA snapshot loaded too, the hub cells are unchanged: AA's GPQA never leaks in."""
    from evalhouse.ingest.pinned import epoch_zip

    zip_path = tmp_path / "benchmark_data.zip"
    zip_path.write_bytes(epoch_zip(epoch_dir))
    hub_db = tmp_path / "hub.duckdb"
    with Warehouse.open(hub_db) as wh:
        ingest_file(wh, RawStore(tmp_path / "raw"), "epoch-benchmarks", str(zip_path))
    both = tmp_path / "both.duckdb"
    shutil.copy(hub_db, both)
    with Warehouse.open(both) as wh:
        assert ingest_file(wh, RawStore(tmp_path / "raw2"), "artificial-analysis", str(aa_csv)).status == "completed"
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
