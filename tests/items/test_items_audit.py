"""The item audit on simulated panels with known truth, and DuckDB vs Spark on the same Parquet files."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from scipy.stats import spearmanr

from evalhouse.analytics.items.audit import ItemAudit, benchmark_summary, cost_scenario
from evalhouse.analytics.items.engine import DuckDBEngine, SparkEngine, export_parquet
from evalhouse.analytics.items.simulate import PanelSpec, simulate_panel
from evalhouse.analytics.runs.items import fit_items as analyze_items
from evalhouse.analytics.runs.items import make_engine, simulate_into
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse

AXES = ("pt", "sft", "rl")


def _fit(tmp_path: Path, spec: PanelSpec, **params) -> tuple[ItemAudit, pd.DataFrame, Warehouse]:
    wh = Warehouse.open(tmp_path / f"w{spec.random_state}.duckdb")
    result, panel = simulate_into(wh, spec)
    assert result.status == "completed"
    assert result.counts["loaded"] == panel.batch.n_responses
    audit = ItemAudit(random_state=spec.random_state, **params).fit(DuckDBEngine(wh.con))
    merged = audit.items_.merge(panel.truth, on="item_id", suffixes=("", "_true"))
    return audit, merged, wh


def test_simulator_is_deterministic() -> None:
    a, b = simulate_panel(PanelSpec(n_items=50, random_state=4)), simulate_panel(PanelSpec(n_items=50, random_state=4))
    assert a.batch.responses.equals(b.batch.responses)
    assert a.truth.equals(b.truth)
    assert not a.batch.responses.equals(simulate_panel(PanelSpec(n_items=50, random_state=5)).batch.responses)


def test_estimated_ranks_recover_the_truth(tmp_path: Path) -> None:
    """Spearman >= 0.9 between estimated and true improvability (per axis) and noise, default noise."""
    audit, m, wh = _fit(tmp_path, PanelSpec(n_items=800, random_state=11), n_boot=200)
    with wh:
        for axis in AXES:
            assert spearmanr(m[f"slope_{axis}"], m[f"slope_{axis}_true"]).statistic >= 0.9
        assert spearmanr(m["sigma2"], m["sigma2_true"]).statistic >= 0.9
        assert audit.suites_ == {"improvability": ["sim-axes"], "noise": ["sim-seeds"]}
        # Items that truly decline on every axis are excluded unless noise shows a rise on one of the
        # three axes (a decline of 0.01-0.08 under noise sd 0.02 is misread on some axis for ~1 in 5);
        # items that truly improve are (almost) never excluded by that rule.
        rule = m["excluded_improvability"] == "improvability: no axis with a positive slope"
        assert rule[m["negative"]].mean() > 0.7
        assert rule[~m["negative"]].mean() < 0.02


def test_intervals_cover_at_their_nominal_rate(tmp_path: Path) -> None:
    """95% intervals over three simulated panels (3 x 500 items), the default intervals="t".

    t-intervals for the slopes are exact under the simulator's normal noise, also on PT with its
    3 checkpoints (one residual degree of freedom), where the paper's residual bootstrap covers
    ~0.63 (benchmarks/items_intervals.py); the chi-square interval for sigma2 likewise. The
    rank CIs come from t / chi-square draws and are scored against the true ranks.
    """
    hits: dict[str, list[float]] = {k: [] for k in ("pt", "sft", "rl", "sigma2", "rank")}
    kappa = cost_scenario(None)
    for seed in (21, 22, 23):
        _, m, wh = _fit(tmp_path, PanelSpec(n_items=500, random_state=seed), n_boot=200)
        wh.close()
        for axis in AXES:
            t = m[f"slope_{axis}_true"]
            hits[axis].append(float(((m[f"slope_{axis}_lo"] <= t) & (t <= m[f"slope_{axis}_hi"])).mean()))
        t = m["sigma2_true"]
        hits["sigma2"].append(float(((m["sigma2_lo"] <= t) & (t <= m["sigma2_hi"])).mean()))
        kept = m[m["improvability_rank"].notna()]
        true_cost = np.fmin.reduce(
            [np.where(kept[f"slope_{a}_true"] > 0, kappa[a.upper()] / kept[f"slope_{a}_true"], np.inf) for a in AXES]
        )
        true_rank = pd.Series(true_cost).rank(method="min").to_numpy()
        inside = (kept["improvability_rank_lo"] <= true_rank) & (true_rank <= kept["improvability_rank_hi"])
        hits["rank"].append(float(inside.mean()))
    for key in ("pt", "sft", "rl", "sigma2"):
        assert 0.93 <= np.mean(hits[key]) <= 0.97, (key, hits[key])
    assert 0.90 <= np.mean(hits["rank"]) <= 0.98, hits["rank"]


def test_percentile_bootstrap_is_kept_as_an_option_and_undercovers_pt(tmp_path: Path) -> None:
    """intervals="bootstrap" gives the paper's residual-bootstrap percentile intervals: on PT (3
    checkpoints) they are far too narrow, which is why they are not the default."""
    _, m, wh = _fit(tmp_path, PanelSpec(n_items=400, random_state=24), n_boot=400, intervals="bootstrap")
    wh.close()
    t = m["slope_pt_true"]
    assert ((m["slope_pt_lo"] <= t) & (t <= m["slope_pt_hi"])).mean() < 0.8


def test_improvability_exclusion_rules(tmp_path: Path) -> None:
    """no-positive (default) drops an item when no slope is positive; any-negative (the paper's
    'beta_ik < 0' read literally) drops it when any slope is negative. Counted from the slopes here."""
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        simulate_into(wh, PanelSpec(n_items=300, random_state=6))
        default = ItemAudit(n_boot=20).fit(DuckDBEngine(wh.con)).items_
        literal = ItemAudit(n_boot=20, improvability_exclusion="any-negative").fit(DuckDBEngine(wh.con)).items_
        with pytest.raises(InputError, match="any-negative"):
            ItemAudit(improvability_exclusion="sometimes").fit(DuckDBEngine(wh.con))
    slopes = default[["slope_pt", "slope_sft", "slope_rl"]]
    in_bounds = default["p_improvability"].between(0.05, 0.95)
    no_positive = in_bounds & (slopes <= 0).all(axis=1)
    any_negative = in_bounds & (slopes < 0).any(axis=1)
    assert (
        default["excluded_improvability"] == "improvability: no axis with a positive slope"
    ).sum() == no_positive.sum()
    assert (
        literal["excluded_improvability"] == "improvability: a negative slope on some axis"
    ).sum() == any_negative.sum()
    assert any_negative.sum() > 3 * no_positive.sum() > 0


def test_margin_is_the_median_over_correct_responses(tmp_path: Path) -> None:
    """m_i (paper 003 App. E) is a median over the item's correct responses; the mean is kept beside it.

    The simulator writes no margins, so acc and margin are set here on the stored responses."""
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        simulate_into(wh, PanelSpec(n_items=40, random_state=12))
        wh.con.execute(
            "UPDATE item_response SET acc = CASE WHEN hash(line) % 3 = 0 THEN 0 ELSE 1 END,"
            " margin = (hash(line * 7) % 1000) / 1000.0 - 0.2"
        )
        rows = wh.con.execute("SELECT item_id, acc, margin FROM item_response").df()
        items = ItemAudit(n_boot=20).fit(DuckDBEngine(wh.con)).items_.set_index("item_id")
    correct = rows[rows["acc"] == 1].groupby("item_id")["margin"]
    assert items["margin_median"].to_numpy() == pytest.approx(correct.median().loc[items.index].to_numpy(), rel=1e-12)
    assert items["margin_mean"].to_numpy() == pytest.approx(correct.mean().loc[items.index].to_numpy(), rel=1e-12)
    assert (items["margin_median"] != items["margin_mean"]).all()


def test_table4_uses_medians() -> None:
    """Paper 003's Table 4 reports medians of p-hat, sigma-hat and Z, the median margin and r(m, Z)."""
    items = pd.DataFrame(
        {
            "benchmark": ["a"] * 5 + ["b"] * 3,
            "excluded_noise": [None, None, None, None, "noise: p outside [0.1, 0.9]", None, None, None],
            "excluded_improvability": [None] * 8,
            "cheapest_axis": ["SFT", "SFT", "RL", "PT", "SFT", "RL", "RL", "PT"],
            "p_hat": [0.2, 0.3, 0.9, 0.4, 0.99, 0.5, 0.6, 0.7],
            "sigma2": [0.01, 0.04, 0.09, 0.16, 0.25, 0.01, 0.04, 0.09],
            "z": [0.1, 0.2, 0.7, 0.3, 0.9, 0.2, 0.3, 0.4],
            "margin_median": [0.5, None, 0.1, 0.3, 0.2, None, None, None],
        }
    )
    table = benchmark_summary(items).set_index("benchmark")
    assert table.loc["a", "n_noise_items"] == 4
    assert table.loc["a", "p_hat"] == pytest.approx(0.35)  # median of 0.2, 0.3, 0.4, 0.9 (mean: 0.45)
    assert table.loc["a", "sigma_hat"] == pytest.approx(0.25)  # median of 0.1, 0.2, 0.3, 0.4
    assert table.loc["a", "z"] == pytest.approx(0.25)
    assert table.loc["a", "n_won"] == 3 and table.loc["a", "margin"] == pytest.approx(0.3)
    assert table.loc["a", "r_margin_z"] == pytest.approx(np.corrcoef([0.5, 0.1, 0.3], [0.1, 0.7, 0.3])[0, 1])
    assert table.loc["b", "n_won"] == 0 and np.isnan(table.loc["b", "margin"])
    assert table.loc["a", "cheapest_sft"] == pytest.approx(3 / 5)


def test_primitives_match_a_direct_computation(tmp_path: Path) -> None:
    """OLS slopes/SEs equal statsmodels' per-item fits; sigma2 uses the denominator N - |PP|."""
    sm = pytest.importorskip("statsmodels.api")
    _, m, wh = _fit(tmp_path, PanelSpec(n_items=30, random_state=5), n_boot=50)
    with wh:
        obs = wh.con.execute(
            "SELECT r.item_id, c.axis, c.effort, r.p_correct, c.suite, c.checkpoint FROM item_response r"
            " JOIN checkpoint c USING (checkpoint_id)"
        ).df()
    kappa = cost_scenario(None)
    for item_id in m["item_id"][:10]:
        row = m.set_index("item_id").loc[item_id]
        for axis in AXES:
            o = obs[(obs.item_id == item_id) & (obs.axis == axis.upper()) & (obs.suite == "sim-axes")]
            fit = sm.OLS(o["p_correct"], sm.add_constant(o["effort"])).fit()
            assert row[f"slope_{axis}"] == pytest.approx(fit.params["effort"], rel=1e-9, abs=1e-18)
            assert row[f"se_{axis}"] == pytest.approx(fit.bse["effort"], rel=1e-6)
            if fit.params["effort"] > 0:
                assert row[f"cost_{axis}"] == pytest.approx(kappa[axis.upper()] / fit.params["effort"], rel=1e-9)
        seeds = obs[(obs.item_id == item_id) & (obs.suite == "sim-seeds")]
        dev = seeds["p_correct"] - seeds.groupby("checkpoint")["p_correct"].transform("mean")
        n, k = len(seeds), seeds["checkpoint"].nunique()
        assert (n, k) == (80, 10)
        assert row["sigma2"] == pytest.approx((dev**2).sum() / (n - k), rel=1e-9)
        p = seeds["p_correct"].mean()
        assert row["z"] == pytest.approx(np.sqrt(row["sigma2"]) / np.sqrt(p * (1 - p)), rel=1e-9)


def test_results_are_stored_and_written(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        simulate_into(wh, PanelSpec(n_items=120, random_state=2))
        summary = analyze_items(wh.con, writable=wh, out=tmp_path / "out", audit=ItemAudit(n_boot=50))
        stored = wh.con.execute("SELECT count(*) FROM analysis_item WHERE analysis_id = ?", [summary["analysis_id"]])
        assert stored.fetchall()[0][0] == 120
        assert wh.con.execute("SELECT count(*) FROM analysis_item_benchmark").fetchall()[0][0] == 6
    csv = pd.read_csv(tmp_path / "out" / "items.csv")
    for col in ("item_id", "benchmark", "p_mean", "sigma2", "z", "slope_pt", "slope_sft", "slope_rl",
                "cheapest_axis", "marginal_cost", "excluded"):  # fmt: skip
        assert col in csv.columns
    assert len(csv) == 120
    assert set(csv["excluded"].dropna()) <= {
        "improvability: no axis with a positive slope",
        "improvability: p outside [0.05, 0.95]",
        "noise: p outside [0.1, 0.9]",
        "noise: sigma2 below 1e-06",
    }


def test_duckdb_and_spark_agree_on_the_same_parquet(tmp_path: Path, spark) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        simulate_into(wh, PanelSpec(n_items=150, random_state=9))
        root = export_parquet(wh.con, tmp_path / "parquet")
    duck = ItemAudit(n_boot=200).fit(DuckDBEngine.over_parquet(root))
    spk = ItemAudit(n_boot=200).fit(SparkEngine(spark, root))
    a, b = duck.items_, spk.items_
    assert list(a["item_id"]) == list(b["item_id"])
    for col in a.columns:
        if a[col].dtype.kind == "f":
            assert np.array_equal(a[col].isna(), b[col].isna()), col
            ok = a[col].notna()
            np.testing.assert_allclose(b[col][ok], a[col][ok], rtol=1e-9, atol=0, err_msg=col)
        else:
            assert list(a[col].fillna("")) == list(b[col].fillna("")), col
    pd.testing.assert_frame_equal(duck.benchmarks_, spk.benchmarks_, rtol=1e-9)
    # the JVM options given to local_spark (the fixture's lean JVM) are those the JVM it started runs
    # with (Spark adds its own to the setting; the -XX ones are the JVM's flags)
    asked = [
        o for o in spark.sparkContext.getConf().get("spark.driver.extraJavaOptions").split() if o.startswith("-XX:")
    ]
    jvm_args = list(spark._jvm.java.lang.management.ManagementFactory.getRuntimeMXBean().getInputArguments())
    assert "-XX:+UseSerialGC" in asked and set(asked) <= set(jvm_args), (asked, jvm_args)
    # the CLI's route: an engine made from the warehouse connection and the exported files
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        engine = make_engine(wh.con, "spark", root, spark)
        assert engine.name == "spark"
        assert engine.query("SELECT count(*) AS n FROM item_response")["n"][0] == 150 * 101
