"""The welfare landscape of audited items: welfare scores, quadrants, Pareto frontier, v*.

Joins :mod:`.welfare`'s item scores to an :class:`~.audit.ItemAudit`'s items and adds what the
paper's audit reports on them: the Pareto frontier in (w^auto, w^aug) with dominance counts, the
math-vs-general-knowledge comparison (first-order stochastic dominance, cluster bootstrap by
benchmark), and the diagonal v* weights (designer welfare w = w^auto by default).
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


def add_welfare(
    audit: ItemAudit, folder: Path, *, risk_aversion: float = 1.0, framing: str = "w_auto", n_boot: int = 200
) -> dict[str, Any]:
    """Score ``audit.items_`` with the welfare inputs in ``folder``; returns the landscape summary."""
    ratings, task_gwa, ranks = W.read_inputs(folder)
    gwa = W.gwa_scores(ratings, task_gwa)
    scores = W.item_welfare(ranks, gwa)
    items = audit.items_.drop(columns=["w_auto", "w_aug", "quadrant", "v_star"], errors="ignore")
    items = items.merge(scores[["item_id", "w_auto", "w_aug", "quadrant"]], on="item_id", how="left")
    m = O.improvability_matrix_diagonal(items, cost_scenario(audit.cost_scenario))
    sigma2 = items["sigma2"].to_numpy(dtype=float)
    w = items[framing].to_numpy(dtype=float)
    items["v_star"] = O.v_star_diagonal(m, sigma2, w, risk_aversion)
    audit.items_ = items
    scored = items.dropna(subset=["w_auto", "w_aug"])
    summary: dict[str, Any] = {
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
