"""Paper 000 reproduced from the pinned AA CSV: every printed quantity within tolerance.

Two printed values are artefacts of factor_analyzer 0.5.1 in the authors' code and are marked
strict xfail with the value we measure (see evalhouse.analytics.reproduce.paper000.NOT_REPRODUCIBLE).
"""

from __future__ import annotations

import json
from typing import Any

import numpy as np
import pytest

from evalhouse.analytics.reproduce.paper000 import NOT_REPRODUCIBLE, PAPER000_VALUES, PAPER_LOADINGS_DATE_ADJUSTED
from evalhouse.analytics.reproduce.paper000_results import paper000_payload

XFAIL_REASONS = {
    "phi_f2_f3": "measured 0.364 vs paper 0.72: " + NOT_REPRODUCIBLE["phi_f2_f3"],
    "uniqueness_terminal_bench_v2_1": "measured 0.101 vs paper -0.028: "
    + NOT_REPRODUCIBLE["uniqueness_terminal_bench_v2_1"],
}

pytestmark = pytest.mark.slow


def _params():
    for name in PAPER000_VALUES:
        marks = [pytest.mark.xfail(strict=True, reason=XFAIL_REASONS[name])] if name in XFAIL_REASONS else []
        yield pytest.param(name, marks=marks, id=name)


@pytest.mark.parametrize("name", list(_params()))
def test_quantity_within_tolerance(paper000_result: dict[str, Any], name: str):
    q = {row["name"]: row for row in paper000_result["quantities"]}[name]
    assert q["ok"], f"{name}: ours {q['ours']:.6g} vs paper {q['paper']:.6g} (tolerance {q['tolerance']})"


def test_every_paper_value_is_reported(paper000_result):
    names = [q["name"] for q in paper000_result["quantities"]]
    assert sorted(names) == sorted(PAPER000_VALUES)
    required = {
        "grid_retained",
        "grid_complete_case",
        "grid_dense",
        "grid_dedup",
        "pc1_share",
        "s1",
        "s1_date_adjusted",
        "r2_date_ols",
        "r2_date_logistic",
        "s1_dedup",
        "dmse_pooled",
        "dmse_pooled_ci_low",
        "dmse_pooled_ci_high",
    }
    assert required <= set(names)
    assert all(set(q) >= {"name", "ours", "paper", "tolerance", "ok"} for q in paper000_result["quantities"])


def test_date_adjusted_loadings_table(paper000_result):
    ours = paper000_result["loadings_date_adjusted"]
    assert list(ours.index) == list(PAPER_LOADINGS_DATE_ADJUSTED.index)
    # our factor order (by rotated SSL) is the paper's F1 agentic, F2 academic, F3 physics
    assert np.abs(ours.to_numpy() - PAPER_LOADINGS_DATE_ADJUSTED.to_numpy()).max() < 0.006


def test_dmse_values_match_the_authors_to_six_decimals(paper000_result):
    # The authors' notebook prints these rerun values with a 5e-4 tolerance; we match far closer.
    d = paper000_result["delta"].set_index(["baseline", "target"])["dmse"]
    expected = {
        "gdpval": 0.026285,
        "terminal_bench_v2_1": 0.028371,
        "tau3_banking": 0.056380,
        "tau2_bench": 0.038331,
        "pooled": 0.037342,
    }
    for target, value in expected.items():
        assert d[("ii", target)] == pytest.approx(value, abs=5e-6)


def test_r1_row_level_dedup_is_reported_as_robustness(paper000_result):
    row = paper000_result["robustness"]["dedup_best_row"]
    assert row["n"] == 86  # whole-row dedup loses GPT-5 mini, MiMo-V2-Flash, Nova 2.0 Lite
    assert 0.5 < row["s1"] < 1.0


def test_result_serialises_to_json(paper000_result):
    payload = json.loads(json.dumps(paper000_payload(paper000_result), allow_nan=False))
    assert len(payload["loadings_date_adjusted"]) == 12
    assert {row["name"] for row in payload["quantities"]} == set(PAPER000_VALUES)


def test_h4_is_stated_against_each_rung_and_over_split_seeds(paper000_result):
    """Rung (iii) is one ML factor fitted in each fold; H4's verdict is given against it and the mean index."""
    h4 = paper000_result["h4"]
    mean_index, one_factor = h4["against_mean_index"], h4["against_one_factor"]
    assert mean_index["dmse"] == pytest.approx(0.037, abs=0.01)  # the paper's pooled dMSE (chosen tolerance)
    assert mean_index["verdict"].startswith("holds")
    # One factor fitted in the fold predicts far better than the mean index; its gap to three factors is small.
    assert one_factor["dmse"] < mean_index["dmse"]
    for row in (mean_index, one_factor):
        assert row["ci_low"] <= row["dmse"] <= row["ci_high"]
        assert row["verdict"].split()[0] in {"holds", "not", "reversed"}
    seeds = h4["over_split_seeds"]
    assert seeds["n_seeds"] == 20 and seeds["min"] < seeds["max"]
    assert seeds["ci_low"] <= seeds["dmse_mean"] <= seeds["ci_high"]
    assert seeds["ci_low"] > 0  # measured: the split seeds move dMSE (ii)-(iv) but never below 0
