"""The HTML report's item-level section: cost/noise plots and the welfare landscape (paper 003).

The section reads the newest stored item audit (``analysis_item``, written by 'evalhouse analyze
items'); when there is none but the warehouse holds item responses it fits one (200 bootstrap
replicates) and stores it when the warehouse is writable, else carries the fit's record for the
report's run to store. Without item-level data it says how to get some instead of failing the report.
"""

from __future__ import annotations

from functools import partial
from pathlib import Path
from typing import Any

import duckdb
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from evalhouse.analytics.data.pin import pin_of
from evalhouse.analytics.items.compare import pareto
from evalhouse.analytics.report.log_scale import log_axis, log_note, loggable
from evalhouse.analytics.report.section import ReportSection

TITLE = "Benchmark items: improvability, noise and welfare (paper 003)"
AXIS_COLOURS = {"PT": "#1f77b4", "SFT": "#2ca02c", "RL": "#d62728"}


def _latest(con: duckdb.DuckDBPyConnection) -> pd.DataFrame:
    try:
        return con.execute(
            "SELECT a.* FROM analysis_item a WHERE a.analysis_id = (SELECT r.analysis_id FROM analysis_run r"
            " WHERE r.kind = 'item_audit' ORDER BY r.created_at DESC LIMIT 1)"
        ).df()
    except duckdb.CatalogException:
        return pd.DataFrame()


def _has_responses(con: duckdb.DuckDBPyConnection) -> bool:
    try:
        return bool(con.execute("SELECT count(*) FROM (SELECT 1 FROM item_response LIMIT 1)").fetchall()[0][0])
    except duckdb.CatalogException:
        return False


def _store(wcon: duckdb.DuckDBPyConnection, audit: Any) -> None:
    from evalhouse.analytics.items.store import store_audit  # noqa: PLC0415 - as in section()

    store_audit(wcon, audit)


def section(con: duckdb.DuckDBPyConnection, writable: Any, welfare: Path | None = None) -> ReportSection:
    """The item section of ``con``: the newest stored audit, else one fitted here (stored into
    ``writable`` when given). ``welfare`` (a WORKBank-format folder, as for 'analyze items
    --welfare') scores the items for the welfare landscape; an audit is then fitted here."""
    items = pd.DataFrame() if welfare is not None else _latest(con)
    fitted = None  # an audit fitted here and stored by no one yet
    if items.empty and _has_responses(con):
        from evalhouse.analytics.items.audit import ItemAudit  # noqa: PLC0415 - the report section loads the audit only when drawn
        from evalhouse.analytics.items.engine import DuckDBEngine  # noqa: PLC0415 - the report section loads the audit only when drawn
        from evalhouse.analytics.items.landscape import add_welfare  # noqa: PLC0415 - the report section loads the audit only when drawn
        from evalhouse.analytics.items.store import store_audit  # noqa: PLC0415 - the report section loads the audit only when drawn

        audit = ItemAudit(n_boot=200).fit(DuckDBEngine(con), snapshot_id=pin_of(con))
        if welfare is not None:
            add_welfare(audit, welfare)
        if writable is not None:
            with writable.transaction() as wcon:
                store_audit(wcon, audit)
        else:
            fitted = audit
        items = audit.items_
    if items.empty:
        return ReportSection(
            TITLE,
            "no item-level data: ingest harness logs ('evalhouse ingest lm-eval DIR', helm-run, inspect-log, "
            "eee-instances, panel-csv) or run 'evalhouse simulate-panel', then 'evalhouse analyze items'",
        )
    s = ReportSection(TITLE, "ok", intro=_intro(items))
    if fitted is not None:
        s.records.append((fitted.record_, {}, partial(_store, audit=fitted)))
    caption = "Marginal cost on the cheapest axis vs seed variance (kept items)"
    drawable = loggable(_kept(items)["marginal_cost"])
    note = log_note(int(drawable.sum()), int((~drawable).sum()), "item(s)")
    s.figure(cost_noise_figure(items), f"{caption}; {note}" if note else caption)
    s.figure(cheapest_axis_figure(items), "Cheapest training axis per benchmark (share of kept items)")
    if "w_auto" in items and items["w_auto"].notna().any():
        s.figure(welfare_figure(items), "Welfare landscape: w^auto vs w^aug, Pareto frontier outlined")
    rows = (
        items.groupby("benchmark")
        .agg(n=("item_id", "size"), p_mean=("p_mean", "median"), sigma2=("sigma2", "median"), z=("z", "median"))
        .reset_index()
        .to_dict("records")
    )
    s.table(rows, "Per benchmark: items, median p, median seed variance, median Z (paper 003 Table 4 uses medians)")
    return s


def _intro(items: pd.DataFrame) -> str:
    excluded = items["excluded"].notna().sum()
    return (
        f"{len(items):,} items; {excluded:,} excluded by a named rule (p bounds, the slope rule, "
        "too little seed variance). Costs use the stored cost scenario (kappa per unit of effort)."
    )


def _kept(items: pd.DataFrame) -> pd.DataFrame:
    """The items the cost/noise figure is about: not excluded by a rule."""
    return items[items["excluded"].isna()]


def cost_noise_figure(items: pd.DataFrame) -> Figure:
    """Seed variance against marginal cost on a log axis; items whose cost a log axis cannot show
    (0, negative, missing) are left out and counted in the figure."""
    fig = Figure(figsize=(6.5, 4.2))
    ax = fig.subplots()
    kept = _kept(items)
    drawn = kept[loggable(kept["marginal_cost"])]
    for axis, colour in AXIS_COLOURS.items():
        sub = drawn[drawn["cheapest_axis"] == axis]
        if len(sub):
            ax.scatter(sub["marginal_cost"], sub["sigma2"], s=6, alpha=0.5, color=colour, label=f"cheapest: {axis}")
    log_axis(ax, "x", len(drawn), len(kept) - len(drawn), "item(s)")
    ax.set_xlabel("marginal cost c = kappa / beta ($ per unit of p)")
    ax.set_ylabel("seed variance sigma^2")
    if len(drawn):
        ax.legend(fontsize=8)
    return fig


def cheapest_axis_figure(items: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(6.5, 3.6))
    ax = fig.subplots()
    kept = items[items["excluded_improvability"].isna()]
    shares = pd.crosstab(kept["benchmark"], kept["cheapest_axis"], normalize="index")
    bottom = np.zeros(len(shares))
    for axis, colour in AXIS_COLOURS.items():
        vals = shares[axis].to_numpy() if axis in shares else np.zeros(len(shares))
        ax.bar(shares.index.astype(str), vals, bottom=bottom, color=colour, label=axis)
        bottom += vals
    ax.set_ylabel("share of items")
    ax.tick_params(axis="x", labelrotation=30, labelsize=8)
    ax.legend(fontsize=8)
    return fig


def welfare_figure(items: pd.DataFrame) -> Figure:
    fig = Figure(figsize=(5.5, 5.0))
    ax = fig.subplots()
    scored = pareto(items.dropna(subset=["w_auto", "w_aug"]))
    for domain, sub in scored.groupby(scored["domain"].fillna("unlabelled")):
        ax.scatter(sub["w_auto"], sub["w_aug"], s=8, alpha=0.6, label=str(domain))
    front = scored[scored["on_frontier"]].sort_values("w_auto")
    ax.plot(front["w_auto"], front["w_aug"], color="black", lw=1, marker="o", ms=4, label="Pareto frontier")
    ax.axvline(3, color="#999", lw=0.6)
    ax.axhline(3, color="#999", lw=0.6)
    ax.set_xlabel("w^auto (1-5)")
    ax.set_ylabel("w^aug (1-5)")
    ax.legend(fontsize=8)
    return fig
