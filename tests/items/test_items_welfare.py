"""Welfare on an authored example (every number checked by hand), the audit's comparisons, v*, IRT."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.items import compare as C
from evalhouse.analytics.items import optimal as O
from evalhouse.analytics.items import welfare as W
from evalhouse.analytics.items.api import simulate_into
from evalhouse.analytics.items.audit import ItemAudit, cost_scenario
from evalhouse.analytics.items.engine import DuckDBEngine
from evalhouse.analytics.items.irt import AnchorSubset, TwoPL
from evalhouse.analytics.items.simulate import PanelSpec
from evalhouse.warehouse.db import Warehouse

AUTHORED = Path(__file__).parent / "data" / "authored_welfare"  # authored by hand, see its README


def test_gwa_scores_threshold_rule_and_min_tasks() -> None:
    ratings, task_gwa, _ = W.read_inputs(AUTHORED)
    g = W.gwa_scores(ratings, task_gwa).set_index("gwa_id")
    assert list(g.index) == ["G1", "G2", "G3"]  # G4 has 2 rated tasks: dropped
    assert g.loc["G1", ["auto", "aug"]].tolist() == [1.0, 0.4]
    assert g.loc["G2", ["auto", "aug"]].tolist() == [0.2, 1.0]
    assert g.loc["G3", ["auto", "aug"]].tolist() == [0.0, 0.0]
    means = W.gwa_scores(ratings, task_gwa, rule="mean").set_index("gwa_id")
    assert means.loc["G1", "auto"] == pytest.approx((4 + 5 + 4 + 3.5 + 4) / 5)


def test_item_welfare_quadrants_pareto_and_loading_mass() -> None:
    ratings, task_gwa, ranks = W.read_inputs(AUTHORED)
    gwa = W.gwa_scores(ratings, task_gwa)
    items = W.item_welfare(ranks, gwa).set_index("item_id")
    assert items.loc["itemA", "w_auto_raw"] == pytest.approx(1.0 + 0.2 / 2)
    assert items.loc["itemC", "w_auto_raw"] == pytest.approx(0.2 + 1.0 / 3)  # G4 dropped: rank 2 adds nothing
    assert items.loc["itemC", "n_auto"] == 2
    assert items["w_auto"].tolist() == pytest.approx([5.0, 1.0, 1.6])
    assert items["w_aug"].tolist() == pytest.approx([5.0, 1.0, 3.2])
    assert items["quadrant"].tolist() == ["green_light", "red_light", "augmentation_only"]
    front = C.pareto(items.reset_index()).set_index("item_id")
    assert front["dominated_by"].tolist() == [0, 2, 1]
    assert front["on_frontier"].tolist() == [True, False, False]
    mass = W.loading_mass(ranks, gwa)
    assert mass["green_light"] == pytest.approx((1.5 + 0.5 + 1 / 3 + 1 + 1 / 3) / 5)
    assert mass["red_light"] == pytest.approx((1 / 3 + 1) / 5)
    assert mass.sum() == pytest.approx(1.0)


def test_ranking_agreement_metrics() -> None:
    ref = ["a", "b", "c", "d", "e"]
    assert C.agreement(ref, ref) == pytest.approx(
        {"ndcg5_linear": 1, "ndcg5_binary": 1, "p4": 1, "r4": 1, "jaccard5": 1, "rbo": 1}
    )
    other = ["e", "d", "x", "y", "z"]
    got = C.agreement(other, ref)
    assert got["jaccard5"] == pytest.approx(2 / 8)
    assert got["p4"] == pytest.approx(1 / 4) and got["r4"] == pytest.approx(1 / 4)  # d in top 4 of both
    assert 0 < got["ndcg5_linear"] < got["ndcg5_binary"] < 1
    assert C.rbo(["a", "b"], ["c", "d"]) == 0.0
    # RBO at depth 1 with identical heads: (1-p)/p * p = 1-p + extrapolation of the overlap
    assert C.rbo(["a"], ["a"], p=0.7) == pytest.approx(1.0)


def test_fosd_and_mann_whitney() -> None:
    rng = np.random.default_rng(0)
    low = pd.DataFrame({"w": rng.normal(2, 0.5, 300), "cluster": rng.integers(0, 10, 300)})
    high = pd.DataFrame({"w": rng.normal(3, 0.5, 300), "cluster": rng.integers(0, 10, 300)})
    res = C.fosd(low, high, "w", "cluster", n_boot=200)
    assert res["dominates"] and res["share_dominant"] > 0.9
    assert not C.fosd(high, low, "w", "cluster", n_boot=50)["dominates"]
    frame = pd.concat([low.assign(g="x"), high.assign(g="y")])
    (mw,) = C.mann_whitney_by_group(frame, "w", "g")
    assert mw["p"] < 1e-10 and mw["median_ratio"] < 1


def test_v_star_closed_forms() -> None:
    rng = np.random.default_rng(1)
    m = np.diag(rng.uniform(0.5, 2, 5))
    s = np.diag(rng.uniform(0.1, 1, 5))
    w = rng.uniform(0, 1, 5)
    assert O.v_star(m, s, w, 2.0) == pytest.approx(O.v_star_diagonal(np.diag(m), np.diag(s), w, 2.0))
    a = rng.normal(size=(5, 3))
    full_m = a @ a.T + 0.1 * np.eye(5)
    full_s = np.cov(rng.normal(size=(5, 40)))
    v = O.v_star(full_m, full_s, w, 1.5)
    base = O.welfare(v, full_m, full_s, w, 1.5)
    for _ in range(20):  # v* maximises W: any perturbation lowers it
        assert O.welfare(v + rng.normal(scale=0.05, size=5), full_m, full_s, w, 1.5) < base
    assert O.v_star_diagonal(np.array([1.0]), np.array([0.0]), np.array([0.7]), 3.0) == pytest.approx([0.7])


def test_v_star_recovers_more_welfare_than_uniform_weights(tmp_path: Path) -> None:
    """On a simulated panel: v* from the audit's estimates, scored with the true M and Sigma."""
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        _, panel = simulate_into(wh, PanelSpec(n_items=400, random_state=3))
        audit = ItemAudit(n_boot=20).fit(DuckDBEngine(wh.con))
    kappa = cost_scenario(None)
    est = audit.items_.set_index("item_id").loc[panel.truth["item_id"]]
    m_hat = O.improvability_matrix_diagonal(est, kappa)
    s_hat = np.nan_to_num(est["sigma2"].to_numpy())
    m_true = O.improvability_matrix_diagonal(panel.truth, kappa)
    s_true = panel.truth["sigma2"].to_numpy()
    w = np.random.default_rng(0).uniform(1, 5, len(m_true))  # the designer's item welfare
    r = float(np.median(m_true / s_true))
    sweep = O.sweep(m_hat, s_hat, w, [0.1 * r, r, 10 * r], truth=(m_true, s_true))
    assert (sweep["share_v_star"] > sweep["share_uniform"]).all()
    assert (sweep["share_v_star"] > 0.8).all()


def test_two_pl_recovers_parameters_and_anchors_beat_random() -> None:
    """A panel drawn from a 2PL (seeded here): parameters recovered; 100 anchors estimate held-out
    checkpoints' benchmark means better than 100 random items."""
    rng = np.random.default_rng(5)
    n_ckpt, n_items = 120, 1500
    theta = rng.normal(size=n_ckpt)
    a = np.exp(rng.normal(0, 0.4, n_items))
    b = rng.normal(0, 1, n_items)
    p = 1 / (1 + np.exp(-a[None, :] * (theta[:, None] - b[None, :])))
    y = (rng.random(p.shape) < p).astype(float)
    frame = pd.DataFrame(y, index=[f"c{i}" for i in range(n_ckpt)], columns=[f"i{j}" for j in range(n_items)])
    irt = TwoPL().fit(frame.iloc[:80])
    assert np.corrcoef(irt.items_["b"], b)[0, 1] > 0.9
    assert np.corrcoef(irt.items_["a"], a)[0, 1] > 0.5
    errors = [AnchorSubset(n_anchors=100, random_state=s).fit(frame.iloc[:80]).evaluate(frame.iloc[80:])
              for s in range(3)]  # fmt: skip
    assert np.mean([e["mae_anchors"] for e in errors]) < np.mean([e["mae_random"] for e in errors])
    assert all(e["n_test_checkpoints"] == 40 for e in errors)


def test_two_pl_on_the_item_response_table(tmp_path: Path) -> None:
    """The 2PL fitted on the warehouse's item_response rows (a simulated seed panel): checkpoint
    abilities order the checkpoints as their mean correctness does."""
    from scipy.stats import spearmanr

    from evalhouse.analytics.items.irt import response_matrix

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        simulate_into(wh, PanelSpec(n_items=300, random_state=8))
        rows = wh.con.execute(
            "SELECT r.checkpoint_id, r.item_id, r.p_correct FROM item_response r"
            " JOIN checkpoint c USING (checkpoint_id) WHERE c.suite = 'sim-seeds'"
        ).df()
    matrix = response_matrix(rows)
    assert matrix.shape == (80, 300)
    irt = TwoPL().fit(matrix)
    assert spearmanr(irt.theta_, matrix.mean(axis=1)).statistic > 0.95
    assert irt.record_.kind == "irt_2pl" and irt.record_.input_shape == [80, 300]
