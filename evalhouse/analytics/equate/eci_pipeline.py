"""``evalhouse analyze eci``: the hub's cells to a capabilities index on Epoch's scale, in one run.

The main fit (:class:`~evalhouse.analytics.equate.eci.CapabilitiesIndex`, cross-validated penalties,
configurations as models) gives each model group its ECI with a 90% bootstrap interval and each
benchmark its EDI and slope. In the same run the held-out-cell RMSE is computed the same way
(5 folds over cells, seeded) for Epoch's plain objective and for the alternatives evalhouse tried,
so the comparison is one table; only what lowered the held-out RMSE is the default.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import pandas as pd

from evalhouse.analytics.base import AnalysisRecord, Timer, make_record
from evalhouse.analytics.equate.eci import CapabilitiesIndex
from evalhouse.analytics.equate.eci_data import EciCells, hub_cells, prepare, registry
from evalhouse.errors import InputError

# (label, objective, grouping): the held-out comparison the run prints next to its main fit.
# Two cell sets: each configuration (setting) its own model, or the best score per base model
# (Epoch's grouping); RMSEs compare objectives within a cell set, not across them.
VARIANTS: tuple[tuple[str, str, str], ...] = (
    ("Epoch's plain objective, configurations as models", "epoch", "configuration"),
    ("cross-validated penalties + hierarchical shrinkage, configurations", "cv_hierarchical", "configuration"),
    ("cross-validated penalties, configurations (evalhouse default)", "cv", "configuration"),
    ("Epoch's plain objective, best score per base model", "epoch", "base_model"),
    ("cross-validated penalties, best score per base model", "cv", "base_model"),
)


@dataclass
class EciRun:
    """One ``analyze eci``: the JSON payload, the record, the result rows, the comparison table."""

    payload: dict[str, Any]
    record: AnalysisRecord
    results: dict[str, list[dict[str, Any]]]
    comparison: list[dict[str, Any]]
    fit: CapabilitiesIndex
    cells: EciCells


def _anchors(cells: EciCells) -> dict[str, float]:
    group_of = dict(zip(cells.names["source_model"], cells.names["group"], strict=True))
    out: dict[str, float] = {}
    for a in registry()["scale_anchors"]:
        if a["model"] not in group_of:
            raise InputError(f"the scale anchor {a['model']!r} has no fitted group (is it in the hub data?)")
        out[group_of[a["model"]]] = float(a["eci"])
    return out


def fit_index(cells: EciCells, **params: Any) -> CapabilitiesIndex:
    """A :class:`CapabilitiesIndex` fitted on screened cells with the registry's anchors."""
    anchor = registry()["anchor"]["benchmark"]
    return CapabilitiesIndex(**params).fit(cells.cells, anchor=anchor, scale_anchors=_anchors(cells))


def _model_rows(cells: EciCells, fit: CapabilitiesIndex) -> list[dict[str, Any]]:
    rows = []
    for name, group in zip(cells.names["source_model"], cells.names["group"], strict=True):
        rows.append(
            {
                "model": str(name),
                "group": str(group),
                "eci": float(fit.eci_[group]),
                "ci_low": float(fit.ci_low_[group]),
                "ci_high": float(fit.ci_high_[group]),
                "n_benchmarks": int(fit.n_benchmarks_[group]),
            }
        )
    return sorted(rows, key=lambda r: -r["eci"])


def capabilities_index(
    con: duckdb.DuckDBPyConnection,
    *,
    source: str = "epoch-benchmarks",
    n_bootstrap: int = 100,
    random_state: int = 0,
    compare: bool = True,
) -> EciRun:
    """Fit the index on ``source``'s own cells; ``compare`` adds the held-out table of the variants."""
    timer = Timer()
    long = hub_cells(con, source)
    main = prepare(long, grouping="configuration")
    fit = fit_index(main, objective="cv", n_bootstrap=n_bootstrap, random_state=random_state)
    comparison = []
    if compare:
        for label, objective, grouping in VARIANTS:
            if (objective, grouping) == ("cv", "configuration"):
                rmse, n_cells = fit.heldout_rmse_, len(main.cells)
            else:
                cells = main if grouping == "configuration" else prepare(long, grouping=grouping)
                other = fit_index(cells, objective=objective, n_bootstrap=0, random_state=random_state)
                rmse, n_cells = other.heldout_rmse_, len(cells.cells)
            comparison.append({"variant": label, "objective": objective, "grouping": grouping})
            comparison[-1] |= {"heldout_rmse": rmse, "n_cells": n_cells}
    models = _model_rows(main, fit)
    n_models = main.cells.groupby("benchmark")["group"].nunique()
    benchmarks = [
        {"benchmark": str(b), "edi": float(fit.edi_[b]), "slope": float(fit.slope_[b])} for b in fit.benchmarks_
    ]
    payload = {"models": models, "benchmarks": benchmarks, "heldout_rmse": fit.heldout_rmse_}
    payload["iterations"] = fit.iterations_
    record = make_record(
        kind="capabilities_index",
        estimator="evalhouse.analytics.equate.eci.CapabilitiesIndex",
        params={**fit.get_params(), "source": source, "grouping": main.grouping, "registry": registry()["version"]},
        inputs=[main.cells.pivot(index="group", columns="benchmark", values="p")],
        timer=timer,
        snapshot_id=long.attrs.get("snapshot_id"),
        diagnostics={
            **fit.record_.diagnostics,
            "dropped": main.dropped,
            "penalty": list(fit.penalty_),
            "comparison": comparison,
        },
    )
    results = {
        "eci": [
            {**{k: r[k] for k in ("model", "eci", "ci_low", "ci_high", "n_benchmarks")}, "model_group": r["group"]}
            for r in models
        ],
        "eci_benchmark": [
            {
                "benchmark_id": b["benchmark"],
                "edi": b["edi"],
                "slope": b["slope"],
                "n_models": int(n_models[b["benchmark"]]),
            }
            for b in benchmarks
        ],
        "quantity": [
            {"name": f"heldout_rmse:{c['objective']}:{c['grouping']}", "ours": c["heldout_rmse"], "note": c["variant"]}
            for c in comparison
        ]
        + [
            {
                "name": "iterations",
                "ours": float(fit.iterations_),
                "note": f"final change {fit.final_change_:.2e} ECI points",
            },
        ],
    }
    return EciRun(payload, record, results, comparison, fit, main)


def compare_with_published(models: list[dict[str, Any]], published: pd.Series) -> dict[str, float]:
    """Spearman, MAE and 90% CI coverage against a published ECI (``Model version`` -> score)."""
    from scipy.stats import spearmanr  # noqa: PLC0415 - only the check against a reference needs it

    frame = pd.DataFrame(models).set_index("model").join(published.rename("published"), how="inner")
    frame = frame.dropna(subset=["eci", "published"])
    covered = (frame["ci_low"] <= frame["published"]) & (frame["published"] <= frame["ci_high"])
    return {
        "n": len(frame),
        "spearman": float(spearmanr(frame["eci"], frame["published"]).statistic),
        "mae": float((frame["eci"] - frame["published"]).abs().mean()),
        "coverage": float(covered.mean()),
    }
