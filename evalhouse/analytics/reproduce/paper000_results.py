"""A paper-000 reproduction as rows: quantities next to the paper's, loadings, the JSON payload."""

from __future__ import annotations

from typing import Any

import pandas as pd

from evalhouse.analytics.base import AnalysisRecord, Timer, frame_records, make_record
from evalhouse.analytics.data.defaults import finite
from evalhouse.analytics.kept_fits import kept_fit
from evalhouse.analytics.reproduce.paper000 import NOT_REPRODUCIBLE, PAPER_LOADINGS_DATE_ADJUSTED, reproduce_paper000


def paper000_reproduced(result: dict[str, Any]) -> bool:
    """True when every quantity the paper states reproducibly is within its tolerance.

    The two documented artefacts of the authors' code (:data:`~evalhouse.analytics.reproduce.paper000.NOT_REPRODUCIBLE`)
    are reported but do not count.
    """
    return all(q["ok"] for q in result["quantities"] if q["name"] not in NOT_REPRODUCIBLE)


def paper000_quantities(result: dict[str, Any]) -> list[dict[str, Any]]:
    """Every headline quantity: ``name, ours, paper, tolerance, ok, reproducible, source, note``."""
    rows = []
    for q in result["quantities"]:
        note = NOT_REPRODUCIBLE.get(q["name"])
        rows.append(
            {
                "name": q["name"],
                "ours": finite(q["ours"]),
                "paper": float(q["paper"]),
                "tolerance": float(q["tolerance"]),
                "ok": bool(q["ok"]),
                "reproducible": note is None,
                "source": q["source"],
                "note": note,
            }
        )
    return rows


def _loading_rows(frame: pd.DataFrame, solution: str) -> list[dict[str, Any]]:
    return [
        {"solution": solution, "item": str(item), "factor": str(factor), "loading": finite(value)}
        for item, row in frame.iterrows()
        for factor, value in row.items()
    ]


def paper000_loadings_table(result: dict[str, Any]) -> list[dict[str, Any]]:
    """The date-adjusted three-factor loadings (paper 000, Table 3) next to the paper's."""
    ours = result["loadings_date_adjusted"]
    rows = []
    for item in ours.index:
        row: dict[str, Any] = {"item": str(item)}
        for factor in ours.columns:
            row[factor] = finite(ours.loc[item, factor])
        for factor in ours.columns:
            paper = (
                PAPER_LOADINGS_DATE_ADJUSTED.loc[item, factor] if item in PAPER_LOADINGS_DATE_ADJUSTED.index else None
            )
            row[f"paper_{factor}"] = finite(paper)
        rows.append(row)
    return rows


def paper000_results(result: dict[str, Any]) -> dict[str, list[dict[str, Any]]]:
    """Result rows: quantities vs the paper (``quantity``), raw and date-adjusted loadings (``loading``)."""
    quantities = [
        {
            "name": q["name"],
            "ours": q["ours"],
            "paper": q["paper"],
            "tolerance": q["tolerance"],
            "ok": q["ok"],
            "note": f"paper {q['source']}" + (f"; not reproducible: {q['note']}" if q["note"] else ""),
        }
        for q in paper000_quantities(result)
    ]
    h4 = result.get("h4", {})
    for label in ("mean_index", "one_factor"):
        row = h4.get(f"against_{label}")
        if row:
            quantities.append({"name": f"h4_dmse_vs_{label}", "ours": row["dmse"], "note": row["verdict"]})
            quantities.append({"name": f"h4_dmse_vs_{label}_ci_low", "ours": row["ci_low"], "note": "over models"})
            quantities.append({"name": f"h4_dmse_vs_{label}_ci_high", "ours": row["ci_high"], "note": "over models"})
    seeds = h4.get("over_split_seeds")
    if seeds:
        note = f"pooled dMSE (ii)-(iv) over {seeds['n_seeds']} outer split seeds"
        quantities.append({"name": "h4_dmse_split_seeds_ci_low", "ours": seeds["ci_low"], "note": note})
        quantities.append({"name": "h4_dmse_split_seeds_ci_high", "ours": seeds["ci_high"], "note": note})
    loadings = _loading_rows(result["loadings_raw"], "raw") + _loading_rows(
        result["loadings_date_adjusted"], "date_adjusted"
    )
    return {"quantity": quantities, "loading": loadings}


def paper000_payload(result: dict[str, Any]) -> dict[str, Any]:
    """The JSON of a reproduction (what ``reproduce paper-000 --json`` prints)."""
    return {
        "reproduced": paper000_reproduced(result),
        "quantities": paper000_quantities(result),
        "loadings_date_adjusted": paper000_loadings_table(result),
        "loadings_raw": frame_records(result["loadings_raw"]),
        "phi_date_adjusted": frame_records(result["phi_date_adjusted"]),
        "delta": frame_records(result["delta"]),
        "k_sweep": frame_records(result["k_sweep"]),
        "robustness": result["robustness"],
        "h4": result.get("h4", {}),
        "grids": {name: len(ids) for name, ids in result["grids"].items()},
        "not_reproducible": dict(result["not_reproducible"]),
    }


def run_paper000(
    wide: Any, meta: Any, *, learners: tuple[str, ...] = ("ridge",), **params: Any
) -> tuple[dict[str, Any], AnalysisRecord]:
    """The paper-000 pipeline on ``aa_frames`` output, with its record (no warehouse involved)."""
    timer = Timer()
    settings = {"learners": list(learners), "random_state": 0, "bootstrap_random_state": 42}
    settings |= {"parallel_random_state": 42, "n_simulations": 2000, "n_bootstrap": 2000} | params
    n_jobs = settings.pop("n_jobs", None)  # how many processes: never the result
    inputs = [wide, meta.select_dtypes("number")]
    result, kept = kept_fit(
        "paper000",
        [wide, meta],
        settings,
        lambda: reproduce_paper000(wide, meta, **{**settings, "learners": tuple(learners)}, n_jobs=n_jobs),
    )
    quantities = result["quantities"]
    rec = make_record(
        kind="paper000_reproduction",
        estimator="evalhouse.analytics.reproduce.paper000.reproduce_paper000",
        params=settings,
        inputs=inputs,
        timer=timer,
        diagnostics={
            "n_quantities": len(quantities),
            "n_ok": sum(q["ok"] for q in quantities),
            "reproduced": paper000_reproduced(result),
            "grids": {name: len(ids) for name, ids in result["grids"].items()},
        }
        | ({"kept_fit": kept.as_dict()} if kept else {}),
    )
    return result, rec
