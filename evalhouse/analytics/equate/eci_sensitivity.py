"""How much the capabilities index depends on choices the data do not make: ``analyze eci --sensitivity``.

Every variant refits the same screened cells (:class:`~evalhouse.analytics.equate.eci_data.EciCells`)
with one setting changed and maps the abilities to the ECI scale with the same two scale anchors:

* the penalty λ (Epoch's units) over :data:`PENALTIES`, which spans the stable region (λ ≤ 1e-3)
  and Epoch's published λ = 0.1;
* the slope penalty: ``log α`` (towards α = 1, evalhouse) or ``α`` (towards 0, Epoch's code), at
  the default λ and at Epoch's;
* the anchor benchmark fixed at ``D = 0, α = 1``: the registry's (Winogrande) and the two benchmarks
  with the most fitted groups (under a penalty the anchor decides what "shrunk" means).

Each variant is compared with the baseline (the run's own settings): Spearman correlation of the
ECIs, the largest and mean absolute ECI difference, the largest rank change, the overlap of the
top 10, and the capability-over-time slope — ECI points per year by OLS of ECI on release date
over all fitted groups, and over the frontier (groups whose ECI exceeds every earlier-released
group's) — with its ratio to the baseline's.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import spearmanr

from evalhouse.analytics.equate.eci import EPOCH_PENALTY, STABLE_PENALTY, CapabilitiesIndex
from evalhouse.analytics.equate.eci_data import EciCells
from evalhouse.common import progress

#: λ values (Epoch's units) every sensitivity report fits.
PENALTIES: tuple[float, ...] = (1e-5, 1e-4, STABLE_PENALTY, 1e-2, EPOCH_PENALTY, 1.0)
TOP = 10


def time_slopes(eci: pd.Series, dates: pd.Series) -> dict[str, float | int | None]:
    """ECI points per year: OLS over every dated group, and over the frontier (a running maximum)."""
    frame = pd.DataFrame({"eci": eci, "date": dates.reindex(eci.index)}).dropna()
    out: dict[str, float | int | None] = {"slope_per_year": None, "frontier_slope_per_year": None, "n_frontier": 0}
    if len(frame) < 3 or frame["date"].nunique() < 2:
        return out
    years = (frame["date"] - pd.Timestamp("2023-01-01")).dt.days.to_numpy() / 365.25
    out["slope_per_year"] = float(np.polyfit(years, frame["eci"].to_numpy(), 1)[0])
    ordered = frame.assign(years=years).sort_values(["date", "eci"], ascending=[True, False])
    best, rows = -np.inf, []
    for _, day in ordered.groupby("date", sort=True):
        top = day["eci"].max()
        if top > best:
            rows.append((float(day["years"].iloc[0]), float(top)))
            best = top
    out["n_frontier"] = len(rows)
    if len(rows) >= 3:
        xs, ys = np.array(rows).T
        out["frontier_slope_per_year"] = float(np.polyfit(xs, ys, 1)[0])
    return out


def _variants(base: dict[str, Any], cells: EciCells, anchor: str) -> list[dict[str, Any]]:
    base_lambda, base_alpha = base["penalty"], base["alpha_penalty"]
    variants: list[dict[str, Any]] = []
    for lam in PENALTIES:
        note = {STABLE_PENALTY: " (largest of the stable region)", EPOCH_PENALTY: " (Epoch's published λ)"}
        variants.append({"kind": "penalty", "label": f"λ = {lam:g}{note.get(lam, '')}", "penalty": lam})
    other = "raw" if base_alpha == "log" else "log"
    for lam in sorted({base_lambda, EPOCH_PENALTY}):
        epoch = " (Epoch's code as published)" if (lam, other) == (EPOCH_PENALTY, "raw") else ""
        variants.append(
            {"kind": "alpha", "label": f"{other} α penalty, λ = {lam:g}{epoch}", "penalty": lam, "alpha_penalty": other}
        )
    counts = cells.cells.groupby("benchmark")["group"].nunique().drop(anchor, errors="ignore")
    for bench in counts.sort_values(ascending=False, kind="stable").index[:2]:
        variants.append({"kind": "anchor", "label": f"anchor benchmark {bench}", "anchor": str(bench)})
    for v in variants:
        v.setdefault("penalty", base_lambda)
        v.setdefault("alpha_penalty", base_alpha)
        v.setdefault("anchor", anchor)
    return variants


def _compare(eci: pd.Series, base: pd.Series) -> dict[str, Any]:
    both = pd.concat([eci.rename("v"), base.rename("b")], axis=1).dropna()
    diff = (both["v"] - both["b"]).abs()
    rank_v, rank_b = both["v"].rank(ascending=False), both["b"].rank(ascending=False)
    top_v, top_b = set(both["v"].nlargest(TOP).index), set(both["b"].nlargest(TOP).index)
    return {
        "spearman": float(spearmanr(both["v"], both["b"]).statistic),
        "max_abs_diff": float(diff.max()),
        "mean_abs_diff": float(diff.mean()),
        "max_rank_shift": int((rank_v - rank_b).abs().max()),
        f"top{TOP}_overlap": len(top_v & top_b),
    }


def sensitivity(
    cells: EciCells, fit: CapabilitiesIndex, *, anchor: str, scale_anchors: dict[str, float]
) -> dict[str, Any]:
    """The sensitivity report of ``fit`` (a fitted index on ``cells``): see the module docstring."""
    base = {
        "label": f"this run: λ = {fit.penalty_:g}, {fit.alpha_penalty_} α penalty, anchor {anchor}",
        "penalty": float(fit.penalty_),
        "alpha_penalty": fit.alpha_penalty_,
        "anchor": anchor,
        **time_slopes(fit.eci_, cells.dates),
    }
    variants = _variants(base, cells, anchor)
    table = pd.DataFrame({"baseline": fit.eci_})
    rows = []
    with progress.task("ECI: sensitivity fits", total=len(variants)) as step:
        for v in variants:
            step.note(v["label"])
            refit = CapabilitiesIndex(
                "stable",
                penalty=v["penalty"],
                alpha_penalty=v["alpha_penalty"],
                n_bootstrap=0,
                heldout_folds=0,
                xtol=1e-8,
                random_state=fit.random_state,
            ).fit(cells.cells, anchor=v["anchor"], scale_anchors=scale_anchors)
            table[v["label"]] = refit.eci_
            slopes = time_slopes(refit.eci_, cells.dates)
            row = {**v, **_compare(refit.eci_, fit.eci_), **slopes}
            for key in ("slope_per_year", "frontier_slope_per_year"):
                ref = base[key]
                row[key.replace("_per_year", "_ratio")] = (
                    None if ref in (None, 0) or slopes[key] is None else float(slopes[key] / ref)
                )
            rows.append(row)
            step.advance()
    ranks = table.rank(ascending=False, method="min")
    models = [
        {
            "group": str(g),
            "eci": {c: float(table.at[g, c]) for c in table.columns},
            "rank": {c: int(ranks.at[g, c]) for c in table.columns},
            "eci_range": float(table.loc[g].max() - table.loc[g].min()),
        }
        for g in table.sort_values("baseline", ascending=False).index
    ]
    return {"baseline": base, "variants": rows, "models": models}
