"""Factor-analysis commands: ``analyze efa``, ``analyze factor-grid``, ``reproduce paper-000``.

Each parses its options, calls one :mod:`evalhouse.analytics.runs` function and prints the result
(a rich table, or ``--json``); the rules for input, pin, recording and exit codes are in
:mod:`evalhouse.cli._analysis`.
"""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.table import Table

from evalhouse.cli._analysis import RecordFlag, num, print_kept, run, split, target, with_rules
from evalhouse.cli._common import DbOption, JsonFlag, SnapshotOption, console, out

_num = num


def _quantity_cells(q: dict[str, Any]) -> list[str]:
    exact = q["tolerance"] == 0
    ours = "—" if q["ours"] is None else (f"{q['ours']:.0f}" if exact else f"{q['ours']:.4f}")
    paper = f"{q['paper']:.0f}" if exact else f"{q['paper']:g}"
    tol = "exact" if exact else f"± {q['tolerance']:g}"
    status = "[green]ok[/]" if q["ok"] else "[bold red]FAIL[/]"
    if not q["reproducible"]:
        status = "[yellow]artefact[/]"
    return [q["name"], ours, paper, tol, status, q["source"]]


def _print_paper000(payload: dict[str, Any]) -> None:
    table = Table(title="paper 000 — ours vs the paper")
    for col in ("quantity", "ours", "paper", "tolerance", "ok", "printed in"):
        table.add_column(
            col, justify="left" if col in {"quantity", "ok", "printed in"} else "right", no_wrap=col != "printed in"
        )
    for q in payload["quantities"]:
        table.add_row(*_quantity_cells(q))
    out.print(table)
    print_kept(payload.get("kept_fit"), "rows")

    loadings = Table(title="date-adjusted three-factor oblimin loadings (paper 000, Table 3): ours (paper)")
    rows = payload["loadings_date_adjusted"]
    factors = [k for k in rows[0] if k != "item" and not k.startswith("paper_")] if rows else []
    loadings.add_column("benchmark")
    for f in factors:
        loadings.add_column(f, justify="right")
    for row in rows:
        loadings.add_row(row["item"], *[f"{_num(row[f], 2)} ({_num(row[f'paper_{f}'], 2)})" for f in factors])
    out.print(loadings)

    for q in payload["quantities"]:
        if not q["reproducible"]:
            out.print(
                f"[yellow]{q['name']}[/]: ours {q['ours']:.3f}, paper {q['paper']:g} — not reproducible: {q['note']}",
                highlight=False,
            )
    h4 = payload.get("h4") or {}
    for label, text in (("mean_index", "the mean index (ii)"), ("one_factor", "one ML factor (iii)")):
        row = h4.get(f"against_{label}")
        if row:
            out.print(
                f"H4, three factors (iv) vs {text}: dMSE {row['dmse']:+.3f} "
                f"[{row['ci_low']:+.3f}, {row['ci_high']:+.3f}] over models: {row['verdict']}",
                highlight=False,
            )
    seeds = h4.get("over_split_seeds")
    if seeds:
        out.print(
            f"H4 vs the mean index over {seeds['n_seeds']} outer split seeds: dMSE {seeds['dmse_mean']:+.3f} "
            f"[{seeds['ci_low']:+.3f}, {seeds['ci_high']:+.3f}] (range {seeds['min']:+.3f} to {seeds['max']:+.3f}); "
            "the bootstrap over models above is conditional on one split",
            highlight=False,
        )
    ok = [q for q in payload["quantities"] if q["reproducible"]]
    failed = [q["name"] for q in ok if not q["ok"]]
    if failed:
        out.print(f"[bold red]not reproduced[/]: {', '.join(failed)} outside the tolerance", highlight=False)
    else:
        artefacts = len(payload["quantities"]) - len(ok)
        out.print(
            f"[green]reproduced[/]: {len(ok)} of {len(payload['quantities'])} quantities within tolerance; the "
            f"other {artefacts} are documented artefacts of the paper's code (above)",
            highlight=False,
        )


@with_rules(csv=True, reproduction=True)
def paper_000(
    ctx: typer.Context,
    input_path: Annotated[
        Path | None,
        typer.Option(
            "--input",
            exists=True,
            dir_okay=False,
            readable=True,
            help="The AA snapshot CSV (../shared/datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv), "
            "ingested through the real parser, curation and checkpoint into a scratch warehouse.",
        ),
    ] = None,
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    learners: Annotated[
        str,
        typer.Option(
            "--learners",
            help="Comma-separated ladder learners: ridge (required; the paper's dMSE contrast), elasticnet, "
            "random_forest, gradient_boosting. Ridge alone takes seconds; all four ~10 min on 2 cores.",
        ),
    ] = "ridge",
    n_jobs: Annotated[int | None, typer.Option("--n-jobs", help="Ladder targets fitted in parallel.")] = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Reproduce paper 000's headline numbers from the Artificial Analysis snapshot, next to the paper's.

    Paper 000: "One Capability or Many? Testing the Economic Validity of Frontier AI Evaluation".
    The pipeline: inclusion floors (12 primary benchmarks), the retained / complete-case / dense /
    deduplicated grids, KMO, PCA and parallel analysis, the three-factor ML oblimin EFA and its
    dominance s1, date adjustment (s1 and the date R2 of the factor scores), the
    leave-one-benchmark-out prediction ladder with the bootstrap dMSE of k factors over the single
    index, the k sweep and the deduplicated re-run. Each quantity is printed with ours, the paper's
    value, the tolerance (the paper's printed values and the chosen tolerances are in
    evalhouse/analytics/reproduce/paper000.yaml) and where the paper prints it, then the
    date-adjusted loadings (Table 3). Recorded: analysis_run, analysis_quantity, analysis_loading.

    Two printed values are artefacts of factor_analyzer 0.5.1 in the authors' code (the F2-F3
    factor correlation and the Terminal-Bench v2.1 uniqueness); they are shown with the
    explanation and do not fail the command; any other quantity out of tolerance exits 1.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    chosen = split(learners)
    console.print(f"running the paper-000 pipeline (learners: {', '.join(chosen)})…", highlight=False)
    run(
        lambda: runs.reproduce_paper000(
            db=read, input_path=input_path, snapshot=snapshot, record_into=into, learners=chosen, n_jobs=n_jobs
        ),
        _print_paper000,
        json_out,
    )


# --------------------------------------------------------------------------- analyze factor-grid


_SHORT = {"n_neighbors": "nn", "n_estimators": "trees"}


def _print_grid(payload: dict[str, Any]) -> None:
    m = payload["matrix"]
    title = (
        f"factor grid (paper 002, Table 3) on {payload['dataset']}: {m['n_models']} x {m['n_benchmarks']}, "
        f"density {m['density']:.1%}"
    )
    table = Table(title=title)
    for col in ("data", "imputer", "n x p", "k_pa", "rank", "k", "AVE", "ω_h", "φ_avg", "R²", "chosen"):
        table.add_column(
            col, justify="left" if col in {"data", "imputer", "chosen"} else "right", no_wrap=col != "chosen"
        )
    for r in payload["cells"]:
        chosen = ", ".join(f"{_SHORT.get(k, k)}={v}" for k, v in r["params"].items())
        if r["heldout_r2"] is None and "fit:" in r["note"]:
            chosen = "[red]failed on this matrix[/] (--json: note)"
        elif not r["factored"]:
            chosen = "[yellow]not factored[/]"
        elif r["k"] is None:
            chosen = "[red]no solution[/]"
        table.add_row(
            r["densifier"],
            r["imputer"],
            f"{r['n_models']}x{r['n_benchmarks']}",
            _num(r["k_parallel"]),
            ("[yellow]" + _num(r["imputer_rank"]) + " = k_pa[/]")
            if r["k_parallel_is_imputer_rank"]
            else _num(r["imputer_rank"]),
            _num(r["k"]),
            "—" if r["ave"] is None else f"{r['ave']:.1%}",
            _num(r["omega_h"]),
            _num(r["phi_avg"]),
            _num(r["heldout_r2"]),
            chosen,
        )
    out.print(table)
    out.print(
        f"density per cell, chosen parameters and notes: --json; not factored = held-out R² below "
        f"{payload['params']['gate']} (paper 002); R² is scored on an outer mask, parameters chosen on an inner "
        "one; k_pa = factors by parallel analysis, rank = SoftImpute's (flagged when equal)",
        highlight=False,
    )


@with_rules()
def factor_grid(
    ctx: typer.Context,
    snapshot: SnapshotOption = None,
    source: Annotated[
        str,
        typer.Option(
            "--source",
            help="Whose benchmarks and models make the matrix: a source key, or all (every source in the warehouse).",
        ),
    ] = "epoch-benchmarks",
    level: Annotated[
        str,
        typer.Option(
            "--level",
            help="Rows: configuration, base_model (cells aggregated over configurations), or paper 002's name "
            "collapses std (variant level) and aggr (family level), each cell the mean over the names collapsed.",
        ),
    ] = "configuration",
    aggregate: Annotated[
        str, typer.Option("--aggregate", help="base_model level: mean or max over the source's configurations.")
    ] = "mean",
    densifiers: Annotated[
        str, typer.Option("--densifiers", help="Comma-separated: raw, C, R, S (or all).")
    ] = "raw,C,R,S",
    imputers: Annotated[
        str,
        typer.Option(
            "--imputers",
            help="Comma-separated, or all: softimpute, knn, missforest, corr_zero (zero fill), corr_mean (mean "
            "fill), corr_softimpute (SoftImpute on the correlations), osmc (one-sided matrix completion), usvt.",
        ),
    ] = "all",
    target_density: Annotated[float, typer.Option("--target-density", help="Densifier target τ.")] = 0.10,
    min_obs: Annotated[int, typer.Option("--min-obs", help="Observations floor per kept row/column (C, R, S).")] = 3,
    max_rank: Annotated[
        int,
        typer.Option("--max-rank", help="Ranks 1..N of SoftImpute, SoftImpute (corr.) and OSMC (paper 002: 10)."),
    ] = 10,
    max_neighbors: Annotated[int, typer.Option("--max-neighbors", help="kNN k 1..N tried (paper 002: 10).")] = 10,
    trees: Annotated[
        str, typer.Option("--trees", help="missForest forest sizes tried (paper 002: 50,100,200,400).")
    ] = "50,100,200,400",
    n_simulations: Annotated[int, typer.Option("--n-simulations", help="Parallel-analysis simulations.")] = 100,
    random_state: Annotated[int, typer.Option("--random-state", help="Seed of masks, imputers, simulations.")] = 0,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Paper 002's densifier x imputer x factor-analysis grid (its Table 3) on the warehouse's matrix.

    Paper 002: "Large-scale factor analysis shows machine intelligence is only partially
    interpretable". The matrix: the benchmarks --source has current rows for (all: every source),
    composite indices (the Epoch Capabilities Index) excluded, and the configurations scored on them
    - or their base models, or the paper's Std / Aggr name collapses; cells are the warehouse's
    canonical higher-is-better values. Densifiers: raw (as is), C column-, R row-, S symmetric peel
    to density τ. Imputers (the paper's Tables A2-A3): SoftImpute, kNN, missForest, and at the
    correlation level zero fill, mean fill, SoftImpute on the correlation matrix, one-sided matrix
    completion and USVT. Each cell: swept parameters chosen by held-out R2 on an inner mask of the
    training cells, R2 reported on an outer mask; every threshold (SoftImpute's λ, the correlation
    repair's eigenvalue floor) chosen on training cells only; cells with R2 < 0.2 are not factored;
    otherwise parallel analysis picks k (at least 2), MINRES + promax, then Schmid-Leiman gives AVE
    (variance per factor), ω_h (general-factor saturation) and φ_avg (mean factor correlation). A cell
    whose imputer fails on its matrix is kept with the error. Recorded: analysis_run and one
    analysis_factor_grid row per cell.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    console.print(f"factor grid on {source} ({level})…", highlight=False)
    try:
        forest_sizes = tuple(int(t) for t in split(trees))
    except ValueError:
        forest_sizes = ()
    run(
        lambda: runs.factor_grid(
            db=read,
            snapshot=snapshot,
            record_into=into,
            source=source,
            level=level,
            aggregate=aggregate,
            densifiers=split(densifiers),
            imputers=split(imputers),
            target_density=target_density,
            min_obs=min_obs,
            max_rank=max_rank,
            max_neighbors=max_neighbors,
            trees=forest_sizes,
            n_simulations=n_simulations,
            random_state=random_state,
        ),
        _print_grid,
        json_out,
    )


# --------------------------------------------------------------------------- analyze efa


def _print_efa(summary: dict[str, Any], path: Path, omega: bool) -> None:
    k = summary["n_factors"]
    factors = [f"F{m + 1}" for m in range(k)]
    how = "given" if summary["n_factors_parallel"] is None else "by parallel analysis"
    dropped = f", {summary['n_rows_dropped']} incomplete rows left out" if summary["n_rows_dropped"] else ""
    table = Table(
        title=f"EFA of {path.name}: {summary['n_models']} models x {len(summary['items'])} benchmarks{dropped}; "
        f"k = {k} ({how}), {summary['method']}, {summary['rotation']}"
    )
    table.add_column("benchmark")
    for f in factors:
        table.add_column(f, justify="right")
    table.add_column("uniqueness", justify="right")
    for item, row, u in zip(summary["items"], summary["loadings"], summary["uniquenesses"], strict=True):
        table.add_row(item, *[_num(v, 2) for v in row], _num(u, 3))
    table.add_row("[bold]SSL[/]", *[_num(v, 2) for v in summary["ssl"]], "")
    out.print(table)
    if k > 1:
        phi = Table(title="factor correlations φ")
        phi.add_column("")
        for f in factors:
            phi.add_column(f, justify="right")
        for f, row in zip(factors, summary["phi"], strict=True):
            phi.add_row(f, *[_num(v, 2) for v in row])
        out.print(phi)
    if omega:
        sl = Table(title="Schmid-Leiman loadings")
        sl.add_column("benchmark")
        groups = ["g", *[f"G{m + 1}" for m in range(len(summary["sl_loadings"][0]) - 1)]]
        for g in groups:
            sl.add_column(g, justify="right")
        for item, row in zip(summary["items"], summary["sl_loadings"], strict=True):
            sl.add_row(item, *[_num(v, 2) for v in row])
        out.print(sl)
    out.print(
        f"s1 = {summary['s1']:.3f}   ω_h = {summary['omega_h']:.3f}   ω_total = {summary['omega_total']:.3f}",
        highlight=False,
    )
    if summary["start"] == "unity":
        console.print(
            "[yellow]note:[/] the correlation matrix is singular (collinear columns); "
            "the SMC start is refused as in R and the fit was retried from a unity diagonal (paper 002, Appendix I.1)",
            highlight=False,
        )
    if not summary["converged"]:
        console.print("[yellow]warning:[/] the optimiser did not report convergence", highlight=False)
    if summary["heywood"]:
        console.print(f"[yellow]warning:[/] Heywood case(s) at the uniqueness bound: {summary['heywood']}")


@with_rules(csv_only=True)
def efa(
    ctx: typer.Context,
    input_path: Annotated[
        Path,
        typer.Option(
            "--input",
            exists=True,
            dir_okay=False,
            readable=True,
            help="CSV: first column the model id, one column per benchmark, empty cells missing.",
        ),
    ],
    factors: Annotated[
        int | None, typer.Option("--factors", "-k", help="Number of factors; default: parallel analysis.")
    ] = None,
    method: Annotated[str, typer.Option("--method", help="minres or ml (ML needs more rows than columns).")] = (
        "minres"
    ),
    rotation: Annotated[str, typer.Option("--rotation", help="oblimin, promax or none.")] = "oblimin",
    omega: Annotated[
        bool, typer.Option("--omega", help="Also print the Schmid-Leiman loadings (always in --json).")
    ] = False,
    n_simulations: Annotated[int, typer.Option("--n-simulations", help="Parallel-analysis simulations.")] = 2000,
    random_state: Annotated[int, typer.Option("--random-state", help="Seed of parallel analysis.")] = 0,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Exploratory factor analysis of a models x benchmarks CSV, with omega.

    Fits the complete rows (rows with a missing cell are left out and counted): Pearson
    correlations, MINRES or ML (factor_analyzer, uniquenesses bounded to [0.005, 1]), rotated by
    direct oblimin (quartimin), promax or none; factors sorted by rotated SSL and oriented to
    correlate positively with the mean score (paper 000, Appendix C). A singular correlation
    matrix is fitted by MINRES from a unity diagonal after the SMC start is refused (paper 002,
    Appendix I.1); ML refuses it. The Schmid-Leiman transformation gives the general-factor
    loadings and ω_h (paper 002).

    JSON: items (input column order), loadings (k values per item), uniquenesses, ssl, phi,
    s1, omega_h, omega_total, sl_loadings (g then the group factors, per item), start
    ("unity" after the retry), n_models, n_rows_dropped.

    Bad input exits 2 naming what to fix: an unreadable file, a non-numeric cell, a row or
    column with no value, duplicate ids, a constant column, no more complete rows than columns,
    ML on a singular correlation matrix.
    """
    from evalhouse.analytics import runs

    _, into = target(ctx, db, record)
    run(
        lambda: runs.efa(
            input_path,
            db=into,
            n_factors=factors,
            method=method,
            rotation=rotation,
            n_simulations=n_simulations,
            random_state=random_state,
        ),
        lambda payload: _print_efa(payload, input_path, omega),
        json_out,
    )


def register(analyze: typer.Typer, reproduce: typer.Typer, app: typer.Typer) -> None:
    """Add ``analyze efa``, ``analyze factor-grid`` and ``reproduce paper-000``."""
    analyze.command("efa")(efa)
    analyze.command("factor-grid")(factor_grid)
    reproduce.command("paper-000")(paper_000)
