"""The welfare landscape of audited items: welfare scores, quadrants, Pareto frontier, v*.

Joins :mod:`.welfare`'s item scores to an :class:`~.audit.ItemAudit`'s items and adds what the
paper's audit reports on them: the Pareto frontier in (w^auto, w^aug) with dominance counts, the
math-vs-general-knowledge comparison (first-order stochastic dominance, cluster bootstrap by
benchmark), and the optimal weights v* of Eq. 1 (:mod:`.optimal`; designer welfare w = w^auto by
default) beside the diagonal rule and the best uniform weights, over a sweep of risk aversions.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from evalhouse.analytics.items import compare as C
from evalhouse.analytics.items import optimal as O
from evalhouse.analytics.items import welfare as W
from evalhouse.analytics.items.audit import ItemAudit, cost_scenario
from evalhouse.errors import InputError

FRAMINGS = ("w_auto", "w_aug")
V_COLUMNS = ["v_star", "v_star_diagonal", "v_star_reason"]


def add_welfare(  # noqa: PLR0913 - the landscape's settings, keyword-only
    audit: ItemAudit,
    folder: Path,
    *,
    optimal: O.OptimalWeights | None = None,
    framing: str = "w_auto",
    n_boot: int = 200,
    seed_obs: pd.DataFrame | None = None,
) -> dict[str, Any]:
    """Score ``audit.items_`` with the welfare inputs in ``folder``; returns the landscape summary.

    ``optimal`` sets r, its unit, the sweep and Sigma for v* (default: r = r0, diagonal Sigma);
    its cost scenario is the audit's. ``seed_obs`` (``item_seeds_obs.sql`` rows) is needed for a
    full Sigma only.
    """
    if framing not in FRAMINGS:
        raise InputError(f"framing {framing!r}: choose w_auto or w_aug")
    ratings, task_gwa, ranks = W.read_inputs(folder)
    gwa = W.gwa_scores(ratings, task_gwa)
    scores = W.item_welfare(ranks, gwa)
    items = audit.items_.drop(columns=["w_auto", "w_aug", "quadrant", *V_COLUMNS], errors="ignore")
    items = items.merge(scores[["item_id", "w_auto", "w_aug", "quadrant"]], on="item_id", how="left")
    params = (optimal or O.OptimalWeights()).get_params()
    weights = O.OptimalWeights(**(params | {"kappa": cost_scenario(audit.cost_scenario)}))
    weights.fit(items, items.set_index("item_id")[framing], seed_obs=seed_obs)
    items = items.merge(weights.weights_, on="item_id", how="left")
    audit.items_ = items
    audit.optimal_ = weights
    scored = items.dropna(subset=["w_auto", "w_aug"])
    summary: dict[str, Any] = {
        "framing": framing,
        "v_star": weights.summary_,
        "n_scored": len(scored),
        "n_unscored": int(items["w_auto"].isna().sum()),
        "gwas": len(gwa),
        "quadrants": {k: int(v) for k, v in scored["quadrant"].value_counts().items()},
        "loading_mass_automation": W.loading_mass(ranks, gwa).to_dict(),
    }
    if len(scored):
        front = C.pareto(scored)
        summary["frontier"] = front.loc[front["on_frontier"], "item_id"].tolist()[:50]
        math = front[front["domain"] == "math"]
        general = front[front["domain"] == "general_knowledge"]
        summary["math_on_frontier"] = int(math["on_frontier"].sum())
        if len(math) and len(general) and math["benchmark"].nunique() and general["benchmark"].nunique():
            summary["fosd_general_over_math"] = C.fosd(math, general, framing, "benchmark", n_boot=n_boot)
        kept = scored.dropna(subset=["marginal_cost"])
        if len(kept) > 2:
            summary["mann_whitney_cost_by_axis"] = C.mann_whitney_by_group(kept, "marginal_cost", "cheapest_axis")
            summary["spearman_welfare_vs_cost"] = C.spearman(kept[framing], np.log(kept["marginal_cost"]))
    return summary


def welfare_frame(audit: ItemAudit) -> pd.DataFrame:
    return audit.items_.dropna(subset=["w_auto", "w_aug"]) if "w_auto" in audit.items_ else audit.items_.iloc[:0]
