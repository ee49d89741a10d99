"""The report section of paper 004: the Epoch hub on one ability scale, and a task comparison.

``section(con)`` equates the Epoch AI Benchmarking Hub
(:func:`~evalhouse.analytics.equate.hub.equate_hub`, configuration level), and shows θ against
release date (with the running frontier), the characteristic curves of the most-observed
benchmarks, and θ against Epoch's own Capabilities Index. If the Artificial Analysis snapshot is
in the warehouse it adds a small task-comparison example (paper 004 §L.6's software-engineering
agent query, BoB-Support). The fits' records go with the section. Missing data gives
a status line, never an exception.
"""

from __future__ import annotations

import html
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalhouse.analytics.bob.compare import compare_models
from evalhouse.analytics.bob.encoders import EncoderUnavailableError
from evalhouse.analytics.bob.texts import store_texts
from evalhouse.analytics.equate.curves import curve_rows, theta_rows
from evalhouse.analytics.equate.eci_pipeline import capabilities_index
from evalhouse.analytics.equate.hub import equate_hub, hub_release_dates
from evalhouse.analytics.equate.io import EquatingInputError
from evalhouse.analytics.report.plots_equate import plot_characteristic_curves, plot_theta_by_release
from evalhouse.analytics.report.section import ReportSection
from evalhouse.errors import DataMissing, InputError

TITLE = "Equated ability scale and task comparison (paper 004, Balance of Benchmarks)"
EXAMPLE_QUERY = "software_engineering_agent"
N_CURVES = 8
N_TOP = 10


def section(con: duckdb.DuckDBPyConnection) -> ReportSection:
    """Build the section from a read-only connection (a warehouse or a snapshot)."""
    s = ReportSection(title=TITLE, status="ok")
    s.intro = (
        "Each benchmark's scores are min-max normalised and fitted with a two-parameter characteristic "
        "curve f(&theta;) = 1/(1+exp(-a(&theta;-b))); every model gets one standardised ability &theta; from "
        "all the benchmarks it was scored on, so models evaluated on different subsets share one scale "
        "(paper 004 &sect;3.1). Models with fewer than three fitted benchmarks have no &theta;."
    )
    missing: list[str] = []
    hub_note = _hub_part(con, s)
    if hub_note:
        missing.append(hub_note)
    eci_note = _eci_part(con, s)
    if eci_note:
        missing.append(eci_note)
    aa_note = _task_part(con, s)
    if aa_note:
        missing.append(aa_note)
    if missing:
        s.status = "; ".join(missing)
    return s


def _hub_part(con: duckdb.DuckDBPyConnection, s: ReportSection) -> str | None:
    try:
        hub = equate_hub(con)
    except DataMissing as exc:
        return f"Epoch hub: {exc}"
    except (EquatingInputError, duckdb.CatalogException) as exc:
        return f"Epoch hub: cannot be equated here ({exc})"
    analysis_id = hub.record.run_id
    s.records.append((hub.record, {"theta": theta_rows(hub.equating), "curve": curve_rows(hub.equating)}, None))
    eq = hub.equating
    fitted = hub.theta.dropna()
    cmp = hub.comparison
    s.blocks.append(
        "<p>"
        + html.escape(
            f"Epoch AI Benchmarking Hub: {len(fitted)} of {len(hub.theta)} configurations equated on "
            f"{len(eq.benchmarks_)} non-composite benchmarks" + f" (analysis {analysis_id})" + "."
        )
        + "</p>"
    )
    top = list(fitted.nlargest(5).index)
    dates = hub_release_dates(con, hub)
    try:
        fig = plot_theta_by_release(
            fitted,
            dates,
            labels=hub.names,
            highlight=top,
            title="Epoch hub: equated ability by release date",
            se=eq.theta_se_,
            counts=eq.n_observed_,
        )
        s.figure(
            fig,
            "θ of each Epoch hub configuration against its release date with 90% intervals (±1.645 SE); "
            "marker size: benchmarks observed; red: best θ released so far.",
        )
    except ValueError as exc:
        s.blocks.append(f"<p class='status'>{html.escape(f'no θ-by-release figure: {exc}')}</p>")
    counts = eq.scores_.notna().sum().sort_values(ascending=False, kind="stable")
    shown = list(counts.index[:N_CURVES])
    s.figure(
        plot_characteristic_curves(eq, shown),
        f"Characteristic curves of the {len(shown)} most-observed benchmarks (grey: normalised scores of the "
        "fitted models; titles: discrimination a, difficulty b, residual scale σ).",
    )
    if cmp["spearman"] is not None:
        s.figure(
            _theta_vs_reference(fitted, hub.reference, cmp),
            "θ against Epoch's Capabilities Index, itself a published equating of these benchmarks.",
        )
    s.table(
        [
            {
                "reference": cmp["reference"],
                "models with both": cmp["n"],
                "Spearman": cmp["spearman"],
                "Kendall": cmp["kendall"],
            }
        ],
        "Agreement of θ with Epoch's Capabilities Index",
    )
    rows = []
    for model in fitted.nlargest(N_TOP).index:
        ref = hub.reference.get(model, np.nan)
        released = dates.get(model)
        rows.append(
            {
                "configuration": hub.names.get(model, model),
                "θ": float(fitted[model]),
                "benchmarks": int(eq.n_observed_[model]),
                "ECI": None if not np.isfinite(ref) else float(ref),
                "released": None if released is None or pd.isna(released) else str(pd.Timestamp(released).date()),
            }
        )
    s.table(rows, f"Highest θ on the Epoch hub (top {len(rows)})")
    return None


def _theta_vs_reference(theta: Any, reference: Any, cmp: dict[str, Any]) -> Figure:
    both = theta.to_frame("theta").join(reference.rename("ref")).dropna()
    fig = Figure(figsize=(5.5, 4.2), constrained_layout=True)
    ax = fig.add_subplot()
    ax.scatter(both["ref"], both["theta"], s=12, alpha=0.6, color="tab:blue")
    ax.set_xlabel(f"{cmp['reference']} (Epoch)")
    ax.set_ylabel("θ (standardised)")
    ax.set_title(f"θ vs ECI: Spearman {cmp['spearman']:.3f} over {cmp['n']} configurations", fontsize=9)
    ax.grid(alpha=0.3)
    return fig


def _eci_part(con: duckdb.DuckDBPyConnection, s: ReportSection) -> str | None:
    """The capabilities index on Epoch's scale, and the held-out comparison with Epoch's objective."""
    try:
        run = capabilities_index(con)
    except DataMissing as exc:
        return f"capabilities index: {exc}"
    except (InputError, duckdb.CatalogException) as exc:
        return f"capabilities index: cannot be fitted here ({exc})"
    s.records.append((run.record, run.results, None))
    fit = run.fit
    s.blocks.append(
        "<p>"
        + html.escape(
            f"Capabilities index on Epoch's scale (analysis {run.record.run_id}): {len(run.payload['models'])} "
            f"models on {len(fit.benchmarks_)} benchmarks from the hub's own cells, {fit.iterations_} iterations "
            f"(final change {fit.final_change_:.1e} ECI points), 90% intervals from {fit.n_bootstrap} bootstrap "
            "resamples of the cells. Reproduce with evalhouse analyze eci."
        )
        + "</p>"
    )
    s.table(
        [
            {"objective": c["variant"], "held-out RMSE": c["heldout_rmse"], "cells": c["n_cells"]}
            for c in run.comparison
        ],
        "Held-out RMSE on proportions (5 folds over cells, the same folds for every objective)",
    )
    s.table(
        [
            {
                "model": m["model"],
                "ECI": m["eci"],
                "90% CI": f"{m['ci_low']:.1f}-{m['ci_high']:.1f}",
                "benchmarks": m["n_benchmarks"],
            }
            for m in run.payload["models"][:N_TOP]
        ],
        f"Highest capabilities index (top {N_TOP})",
    )
    return None


def _task_part(con: duckdb.DuckDBPyConnection, s: ReportSection) -> str | None:
    try:
        run = compare_models(con, EXAMPLE_QUERY, top=5)
    except DataMissing as exc:
        return f"task comparison: {exc}"
    except (EquatingInputError, EncoderUnavailableError, duckdb.CatalogException) as exc:
        return f"task comparison: cannot be run here ({exc})"
    r = run.payload

    def also(wcon: duckdb.DuckDBPyConnection) -> None:
        store_texts(wcon, run.texts)
        run.cache.write_pending(wcon)

    s.records.append((run.record, run.results, also))
    near = ", ".join(f"{b['benchmark']} ({b['distance']:.2f})" for b in r["nearest_benchmarks"][:3])
    s.blocks.append(
        "<p>"
        + html.escape(
            f"Task comparison example (Artificial Analysis, {r['population']['n_fitted']} configurations × "
            f"{len(r['population']['benchmarks'])} benchmarks; encoder {r['encoder']['encoder']} "
            f"rev {r['encoder']['revision']}): “{r['query']}” Nearest benchmarks: {near}. "
            "Reproduce with evalhouse compare --task software_engineering_agent."
        )
        + "</p>"
    )
    s.table(
        [
            {
                "rank": row["rank_task"],
                "configuration": row["name"],
                "task score": row["task_score"],
                "θ": row["theta"],
                "θ rank": row["rank_theta"],
                "support": row["support"],
            }
            for row in r["ranking"]
        ],
        "Top configurations for an autonomous software-engineering agent (BoB-Support)",
    )
    return None


__all__ = ["section"]
