"""The report's factor section: paper 000 on the warehouse's Artificial Analysis snapshot.

Reads the ``artificial-analysis`` rows with :func:`~evalhouse.analytics.data.aa.aa_frames`, runs the
paper-000 pipeline with the ridge ladder (seconds; the dMSE contrast the paper reports is ridge on
both rungs) and draws the scree with the parallel-analysis cut-offs, the three-factor loadings raw
vs date-adjusted, the first-factor score against release date and the dMSE forest plot, followed by
every headline quantity next to the paper's value. The fit's record goes with the section.
"""

from __future__ import annotations

import html
from typing import Any

import duckdb
import numpy as np

from evalhouse.analytics.data.aa import aa_frames
from evalhouse.analytics.factor.efa import FactorFitError
from evalhouse.analytics.report.plots_factor import (
    heywood_cells,
    plot_dmse_forest,
    plot_loadings_heatmap,
    plot_score_vs_date,
    plot_scree,
)
from evalhouse.analytics.report.section import ReportSection
from evalhouse.analytics.reproduce.paper000_results import (
    paper000_loadings_table,
    paper000_quantities,
    paper000_reproduced,
    paper000_results,
    run_paper000,
)
from evalhouse.errors import DataMissing

TITLE = "Factor structure of the Artificial Analysis snapshot (paper 000)"
NO_DATA = (
    "No artificial-analysis records in this warehouse. Load the pinned snapshot with "
    "'evalhouse ingest artificial-analysis ../shared/datasets/artificial-analysis-2026-07-06/"
    "aa_models_raw_parsed.csv' (or 'evalhouse refresh --source artificial-analysis'), then rerun the report."
)


def _intro(result: dict[str, Any], analysis_id: str, snapshot_id: str | None) -> str:

    q = {row["name"]: row for row in paper000_quantities(result)}
    grids = {name: len(ids) for name, ids in result["grids"].items()}
    reproducible = [row for row in q.values() if row["reproducible"]]
    within = sum(row["ok"] for row in reproducible)
    verdict = (
        f"all {len(reproducible)} reproducible quantities are within the paper's tolerance"
        if paper000_reproduced(result)
        else f"{within} of {len(reproducible)} reproducible quantities are within the paper's tolerance"
    )
    text = (
        "Paper 000 (\u201cOne Capability or Many? Testing the Economic Validity of Frontier AI Evaluation\u201d) "
        f"asks whether one general factor explains the benchmarks. On the {grids['complete_case']} "
        f"configurations scored on all {q['n_primary_benchmarks']['ours']:.0f} primary benchmarks "
        f"(of {grids['retained']} retained), the first principal component takes "
        f"{q['pc1_share']['ours']:.1%} of the variance and the first of three ML factors "
        f"s1 = {q['s1']['ours']:.1%} of the common variance; residualising the scores on release date "
        f"lowers s1 to {q['s1_date_adjusted']['ours']:.1%}. Three factors predict the held-out economic "
        f"benchmarks better than the single mean index: dMSE = {q['dmse_pooled']['ours']:.3f} z-units² "
        f"(95% CI {q['dmse_pooled_ci_low']['ours']:.3f} to {q['dmse_pooled_ci_high']['ours']:.3f}). "
        f"Against the paper: {verdict}; the two documented artefacts of the authors' code are marked. "
        f"Analysis {analysis_id}" + (f", input {snapshot_id}" if snapshot_id else "") + "."
    )
    return html.escape(text)


def _quantity_rows(result: dict[str, Any]) -> list[dict[str, Any]]:
    rows = []
    for q in paper000_quantities(result):
        status = ("ok" if q["ok"] else "FAIL") if q["reproducible"] else "artefact (see note)"
        rows.append(
            {
                "quantity": q["name"],
                "ours": q["ours"],
                "paper": q["paper"],
                "tolerance": q["tolerance"],
                "ok": status,
                "printed in": q["source"],
            }
        )
    return rows


def _benchmark_names(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """Display names of the benchmarks the input knows (ids where it has none)."""
    try:
        rows = con.execute("SELECT benchmark_id, display_name FROM benchmark WHERE display_name IS NOT NULL").fetchall()
    except duckdb.Error:
        return {}
    return {str(b): str(name) for b, name in rows}


def section(con: duckdb.DuckDBPyConnection) -> ReportSection:
    """The paper-000 section; a status instead of figures when the AA data is not there."""
    s = ReportSection(title=TITLE, status="ok")
    try:
        wide, meta = aa_frames(con)
    except DataMissing:
        s.status = NO_DATA
        return s
    except duckdb.Error as exc:
        s.status = f"cannot read the Artificial Analysis rows: {exc}"
        return s
    try:
        result, record = run_paper000(wide, meta)
    except (ValueError, KeyError, FactorFitError, np.linalg.LinAlgError) as exc:
        s.status = f"the paper-000 pipeline cannot run on this warehouse's Artificial Analysis data: {exc}"
        return s

    s.records.append((record, paper000_results(result), None))
    s.intro = _intro(result, record.run_id, record.snapshot_id)

    pa = result["parallel"]
    n_parallel = next(int(q["ours"]) for q in result["quantities"] if q["name"] == "n_factors_parallel")
    s.figure(
        plot_scree(pa["observed"], pa["threshold"]),
        "Eigenvalues of the complete-case correlation matrix against the 95th percentile of "
        f"{record.params['n_simulations']} random matrices of the same shape (parallel analysis: "
        f"{n_parallel} factor(s) above chance).",
    )
    raw, adjusted = result["loadings_raw"], result["loadings_date_adjusted"]
    beyond = heywood_cells(raw) + heywood_cells(adjusted)
    s.figure(
        plot_loadings_heatmap(raw, adjusted, labels=_benchmark_names(con)),
        "Three-factor ML oblimin pattern loadings on the raw scores and on the scores residualised on "
        "release date (paper 000, Table 3: F1 agentic, F2 academic, F3 physics). "
        + (
            f"{len(beyond)} loading(s) beyond ±1 (outlined, marked !): "
            + ", ".join(f"{b} on {f} = {v:.2f}" for b, f, v in beyond)
            + " — a Heywood case; read that factor with care."
            if beyond
            else "No loading is beyond ±1."
        ),
    )
    s.figure(
        plot_score_vs_date(result["factor_scores"]["F1"], result["release_dates"]),
        "First-factor score (raw three-factor solution) against release date, with the OLS line and the "
        "four-parameter logistic fit.",
    )
    s.figure(
        plot_dmse_forest(result["delta"]),
        "dMSE = MSE(mean index, rung ii) - MSE(three factors, rung iv), ridge, out of fold, per economic "
        "benchmark and pooled, with paired-bootstrap 95% intervals; right of zero = the factors help.",
    )
    s.table(_quantity_rows(result), "Every headline quantity next to the paper's printed value.")
    s.table(
        paper000_loadings_table(result),
        "Date-adjusted three-factor loadings (ours F1-F3, the paper's Table 3 as paper_F1-F3).",
    )
    notes = "; ".join(f"{name}: {why}" for name, why in result["not_reproducible"].items())
    s.blocks.append(f"<p class='meta'>Not reproducible by construction: {html.escape(notes)}.</p>")
    return s
