"""``evalhouse analyze eci``: the hub's cells to a capabilities index on Epoch's scale, in one run.

The main fit (:class:`~evalhouse.analytics.equate.eci.CapabilitiesIndex`, the stable-region penalty,
configurations as models) gives each model group its ECI with a 90% bootstrap interval and each
benchmark its EDI and slope; the groups the inclusion rule keeps out
(:mod:`~evalhouse.analytics.equate.eci_data`) are read off the fitted curves and shown apart. In the
same run the held-out-cell RMSE is computed the same way (5 folds over cells, seeded) for Epoch's
objective as published and for the alternatives, so the comparison is one table. ``sensitivity``
adds the report of :mod:`~evalhouse.analytics.equate.eci_sensitivity`.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import duckdb
import numpy as np
import pandas as pd

from evalhouse.analytics.base import AnalysisRecord, Timer, make_record
from evalhouse.analytics.equate.eci import CapabilitiesIndex
from evalhouse.analytics.equate.eci_data import EciCells, hub_cells, prepare, registry
from evalhouse.analytics.equate.eci_sensitivity import sensitivity as sensitivity_report
from evalhouse.analytics.equate.eci_sensitivity import time_slopes
from evalhouse.analytics.kept_fits import kept_fit
from evalhouse.common import progress
from evalhouse.errors import InputError

# (label, objective, grouping): the held-out comparison the run prints next to its main fit.
# Two cell sets: each configuration (setting) its own model, or the best score per base model
# (Epoch's grouping); RMSEs compare objectives within a cell set, not across them.
VARIANTS: tuple[tuple[str, str, str], ...] = (
    ("Epoch's objective as published (λ = 0.1, raw α), configurations as models", "epoch", "configuration"),
    ("λ by cross-validation + hierarchical shrinkage, configurations", "cv_hierarchical", "configuration"),
    ("λ by cross-validation, configurations", "cv", "configuration"),
    ("stable-region λ = 1e-3, configurations (evalhouse default)", "stable", "configuration"),
    ("Epoch's objective as published, best score per base model", "epoch", "base_model"),
    ("stable-region λ = 1e-3, best score per base model", "stable", "base_model"),
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
        if group not in fit.eci_.index:
            continue
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


def _apart_rows(cells: EciCells, fit: CapabilitiesIndex) -> list[dict[str, Any]]:
    """The groups kept out by the inclusion rule (one row per source name), each read off the fitted
    curves when it has at least ``min_benchmarks_per_model`` of the fitted benchmarks (else None)."""
    if cells.apart.empty:
        return []
    n_min = int(registry()["min_benchmarks_per_model"])
    placed = fit.place(cells.apart).set_index("group")
    placed.loc[placed["n_benchmarks"] < n_min, "eci"] = np.nan  # too few benchmarks to be read off
    reason = cells.apart.groupby("group")["reason"].first()
    rows = []
    for name, group in zip(cells.names["source_model"], cells.names["group"], strict=True):
        if group not in placed.index:
            continue
        eci = placed.at[group, "eci"]
        rows.append(
            {
                "model": str(name),
                "group": str(group),
                "eci_placed": None if not np.isfinite(eci) else float(eci),
                "n_benchmarks": int(placed.at[group, "n_benchmarks"]),
                "reason": str(reason[group]),
            }
        )
    return sorted(rows, key=lambda r: (r["eci_placed"] is None, -(r["eci_placed"] or 0.0)))


def _fit_and_compare(
    long: pd.DataFrame, main: EciCells, params: dict[str, Any], n_bootstrap: int, compare: bool
) -> tuple[CapabilitiesIndex, list[dict[str, Any]]]:
    """The main fit and, with ``compare``, the held-out RMSE of every variant: a pure function of the cells."""
    fit = fit_index(main, n_bootstrap=n_bootstrap, **params)
    comparison: list[dict[str, Any]] = []
    if not compare:
        return fit, comparison
    with progress.task("ECI: held-out comparison", total=len(VARIANTS)) as step:
        for label, variant, grouping in VARIANTS:
            step.note(label)
            if (variant, grouping) == (params["objective"], "configuration") and params["penalty"] is None:
                rmse, n_cells = fit.heldout_rmse_, len(main.cells)
            else:
                cells = main if grouping == "configuration" else prepare(long, grouping=grouping)
                other = fit_index(cells, objective=variant, n_bootstrap=0, random_state=params["random_state"])
                rmse, n_cells = other.heldout_rmse_, len(cells.cells)
            comparison.append({"variant": label, "objective": variant, "grouping": grouping})
            comparison[-1] |= {"heldout_rmse": rmse, "n_cells": n_cells}
            step.advance()
    return fit, comparison


def capabilities_index(  # noqa: PLR0913 - keyword-only settings of one run
    con: duckdb.DuckDBPyConnection,
    *,
    source: str = "epoch-benchmarks",
    n_bootstrap: int = 100,
    random_state: int = 0,
    compare: bool = True,
    sensitivity: bool = False,
    objective: str = "stable",
    penalty: float | None = None,
) -> EciRun:
    """Fit the index on ``source``'s own cells; ``compare`` adds the held-out table of the variants,
    ``sensitivity`` the report of :func:`~evalhouse.analytics.equate.eci_sensitivity.sensitivity`."""
    timer = Timer()
    long = hub_cells(con, source)
    main = prepare(long, grouping="configuration")
    params: dict[str, Any] = {"objective": objective, "penalty": penalty, "random_state": random_state}
    settings = {**params, "n_bootstrap": n_bootstrap, "compare": compare}
    (fit, comparison), kept = kept_fit(
        "capabilities_index", [long], settings, lambda: _fit_and_compare(long, main, params, n_bootstrap, compare)
    )
    models = _model_rows(main, fit)
    n_models = main.cells.groupby("benchmark")["group"].nunique()
    benchmarks = [
        {"benchmark": str(b), "edi": float(fit.edi_[b]), "slope": float(fit.slope_[b])} for b in fit.benchmarks_
    ]
    payload: dict[str, Any] = {"models": models, "apart": _apart_rows(main, fit), "benchmarks": benchmarks}
    payload["heldout_rmse"] = fit.heldout_rmse_
    payload["iterations"] = fit.iterations_
    payload["time_slopes"] = time_slopes(fit.eci_, main.dates)
    if sensitivity:
        anchor = registry()["anchor"]["benchmark"]
        payload["sensitivity"] = sensitivity_report(main, fit, anchor=anchor, scale_anchors=_anchors(main))
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
            "inclusion": registry()["inclusion"],
            "apart": {r["group"]: r["reason"] for r in payload["apart"]},
            "penalty": fit.penalty_,
            "alpha_penalty": fit.alpha_penalty_,
            "comparison": comparison,
        }
        | ({"kept_fit": kept.as_dict()} if kept else {}),
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
