"""Item-level commands: ``simulate-panel`` and ``analyze items`` (paper 003's benchmark-item audit)."""

import math
from pathlib import Path
from typing import Annotated

import typer
from rich.table import Table

from evalhouse.cli._common import JsonFlag, SnapshotOption, db_path, emit_json, guard, out

Engine = Annotated[
    str,
    typer.Option(
        "--engine", help="duckdb (default, in process) or spark (local mode; the same SQL, sqlglot-transpiled)."
    ),
]


SUMMARY_COLUMNS = ("p_hat", "sigma_hat", "z", "cheapest_pt", "cheapest_sft", "cheapest_rl")  # Table 4 medians


def simulate_panel(
    ctx: typer.Context,
    items: Annotated[int, typer.Option("--items", help="Number of items.")] = 2000,
    seeds: Annotated[int, typer.Option("--seeds", help="Seeds of the seed suite (S).")] = 8,
    checkpoints: Annotated[int, typer.Option("--checkpoints", help="Checkpoints per seed (K).")] = 10,
    noise: Annotated[float, typer.Option("--noise", help="Noise sd of the axes suite.")] = 0.02,
    random_state: Annotated[int, typer.Option("--random-state", help="Seed of the generator.")] = 0,
    prefix: Annotated[str, typer.Option("--prefix", help="Suite name prefix (<prefix>-axes, <prefix>-seeds).")] = "sim",
    truth: Annotated[Path | None, typer.Option("--truth", help="Write the ground truth per item to this CSV.")] = None,
    json_out: JsonFlag = False,
) -> None:
    """Generate a training panel with known ground truth and load it like a harness log.

    Two suites: '<prefix>-axes' (EvoLM-like: PT 3, SFT 9, RL 9 checkpoints, one seed) and
    '<prefix>-seeds' (PolyPythias-like: S seeds x K checkpoints). Items carry a true slope per axis,
    a true seed variance and a base difficulty; '--truth' writes them out. The same spec and
    '--random-state' give the same panel. Then run 'evalhouse analyze items'.
    """
    from evalhouse.analytics import runs

    spec = {"n_items": items, "seeds": seeds, "seed_checkpoints": checkpoints, "noise_sd": noise}
    with guard():
        done = runs.simulate_panel(db=db_path(ctx), truth=truth, random_state=random_state, prefix=prefix, **spec)
    payload = done.as_dict()
    if json_out:
        emit_json(payload)
    else:
        suites = payload["suites"]
        out.print(
            f"{payload['status']}: {payload['loaded']:,} responses of {items:,} items loaded "
            f"(suites {suites['improvability']}, {suites['noise']})"
        )
    if not done.ok:
        raise typer.Exit(1)


def analyze_items(
    ctx: typer.Context,
    engine: Engine = "duckdb",
    output: Annotated[Path | None, typer.Option("--out", help="Write DIR/items.csv and DIR/benchmarks.csv.")] = None,
    snapshot: SnapshotOption = None,
    parquet: Annotated[
        Path | None,
        typer.Option("--parquet", help="Spark: read these <dir>/<table>/*.parquet files (a snapshot works)."),
    ] = None,
    cost: Annotated[str | None, typer.Option("--cost-scenario", help="kappa scenario (default paper-4.2).")] = None,
    n_boot: Annotated[
        int,
        typer.Option(
            "--n-boot",
            help="Replicates for the rank CIs (t / chi-square draws; the bootstraps with --intervals bootstrap).",
        ),
    ] = 1000,
    random_state: Annotated[int, typer.Option("--random-state")] = 0,
    welfare: Annotated[
        Path | None,
        typer.Option(
            "--welfare", help="Folder with task_ratings.csv, task_gwa.csv, item_gwa_rankings.csv (WORKBank format)."
        ),
    ] = None,
    exclusion: Annotated[
        str,
        typer.Option(
            "--improvability-exclusion",
            help="no-positive (default): drop an item when no axis has a positive slope; any-negative: the paper's "
            "'beta_ik < 0' read literally, drop an item with a negative slope on any axis.",
        ),
    ] = "no-positive",
    intervals: Annotated[
        str,
        typer.Option(
            "--intervals",
            help="t (default): t-intervals for slopes, chi-square for sigma2 (exact under the normal model, right "
            "with 3 checkpoints); bootstrap: the paper's percentile intervals (cover below nominal, see the docs).",
        ),
    ] = "t",
    framing: Annotated[
        str, typer.Option("--framing", help="The welfare score that is w in Eq. 1: w_auto (default) or w_aug.")
    ] = "w_auto",
    r: Annotated[
        float, typer.Option("--r", help="Lab risk aversion for v*, in --r-unit (default 1 x r0).", min=0.0)
    ] = 1.0,
    r_unit: Annotated[
        str,
        typer.Option(
            "--r-unit",
            help="r0 (default): --r and --r-sweep are multiples of r0 = median M_ii / sigma2_i; per-dollar: absolute "
            "CARA coefficients per dollar of lab payoff.",
        ),
    ] = "r0",
    r_sweep: Annotated[
        str, typer.Option("--r-sweep", help="Comma-separated r values (in --r-unit) for the welfare table.")
    ] = "0.1,1,10,100",
    sigma: Annotated[
        str,
        typer.Option(
            "--sigma",
            help="diagonal (default): Sigma = seed variance; full: the sample covariance of the seed deviations "
            "(only when the weighted items are fewer than N - |PP|).",
        ),
    ] = "diagonal",
    json_out: JsonFlag = False,
) -> None:
    """The benchmark-item audit (paper 003): improvability, marginal cost, seed noise, exclusions.

    Per item: OLS slope, intercept and SE per training axis (PT/SFT/RL), marginal cost kappa/beta
    and the cheapest axis, seed variance sigma2 (denominator N - |PP|) and Z, margins (median), the
    named exclusion rules, slope and sigma2 intervals (--intervals) and rank CIs (--n-boot draws
    from the intervals' distributions, or the paper's residual and across-seed bootstraps). Per
    benchmark: paper 003's Table 4 (n and the medians of p-hat, sigma-hat, Z; items with a margin,
    their median margin, r(margin, Z)).
    Results go to analysis_item / analysis_item_benchmark; --out also writes items.csv.

    With --welfare: item welfare w^auto / w^aug, quadrants, the Pareto frontier, math vs general
    knowledge (FOSD), and the optimal weights of paper 003's Eq. 1, v* = (M + r Sigma)^-1 M w with
    M = A C^-1 A' (A the slopes, C = diag(kappa) of the cost scenario). Excluded items and items
    without a welfare score get v = 0; negative weights are allowed and counted. For each r of
    --r-sweep the welfare of Eq. 1, of the diagonal rule M_ii w_i / (M_ii + r sigma2_i) and of the
    best uniform weights is printed as a share of the attainable welfare, with the modelling
    assumptions (C from linear prices, r's units).
    """
    from evalhouse.analytics import runs
    from evalhouse.errors import InputError

    path = db_path(ctx)
    with guard():
        try:
            sweep = tuple(float(x) for x in r_sweep.split(",") if x.strip())
        except ValueError:
            raise InputError(f"--r-sweep {r_sweep!r}: give comma-separated numbers, e.g. 0.1,1,10,100") from None
        summary = runs.analyze_items(
            db=path,
            snapshot=snapshot,
            record_into=path if snapshot is None else None,  # a snapshot's audit is not recorded
            engine=engine,
            out=output,
            parquet=parquet,
            welfare=welfare,
            framing=framing,
            cost_scenario=cost,
            n_boot=n_boot,
            random_state=random_state,
            improvability_exclusion=exclusion,
            intervals=intervals,
            r=r,
            r_unit=r_unit,
            r_sweep=sweep,
            sigma=sigma,
        ).as_dict()
    if json_out:
        emit_json(summary)
        return
    table = Table(title=f"item audit ({summary['engine']}, {summary['n_items']:,} items; Table 4 columns are medians)")
    columns = ("benchmark", "n", "noise kept", "p-hat", "sigma-hat", "Z", "n won", "margin", "r(m,Z)")
    for col in (*columns, "PT", "SFT", "RL"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for b in summary["benchmarks"]:
        table.add_row(
            b["benchmark"], str(b["n_items"]), str(b["n_noise_items"]),
            *(_num(b[k]) for k in SUMMARY_COLUMNS[:3]), str(b["n_won"]),
            *(_num(b[k]) for k in ("margin", "r_margin_z", *SUMMARY_COLUMNS[3:])),
        )  # fmt: skip
    out.print(table)
    for line in _exclusion_lines(summary):
        out.print(line, highlight=False)
    if summary.get("welfare"):
        w = summary["welfare"]
        out.print(
            f"  welfare: {w['n_scored']:,} items scored; quadrants {w['quadrants']}; "
            f"math items on the Pareto frontier: {w.get('math_on_frontier', 0)}"
        )
        _print_v_star(w["v_star"], w["framing"])
    for name, path in summary["files"].items():
        out.print(f"  wrote {name}: {path}")


def _exclusion_lines(summary: dict) -> list[str]:
    """What each rule kept and excluded, counted over every item, in the table's terms: 'noise kept'
    is what the noise rule keeps (p-hat to margin are over those items), PT / SFT / RL are over what
    the improvability rule keeps; an item may fail both."""
    n = summary["n_items"]
    by_rule = summary["excluded_by_rule"]
    gone = {rule: sum(reasons.values()) for rule, reasons in by_rule.items()}
    lines = [
        f"  the noise rule keeps {n - gone['noise']:,} of {n:,} items ('noise kept'; p-hat to margin are over them);"
        f" the improvability rule keeps {n - gone['improvability']:,} of {n:,} (PT, SFT and RL are over them)"
    ]
    for rule in ("noise", "improvability"):
        for reason, count in by_rule[rule].items():
            lines.append(f"  excluded by the {rule} rule: {count:,} — {reason}")
    either = sum(summary["excluded"].values())
    lines.append(f"  excluded by either rule: {either:,} of {n:,} items")
    return lines


def _num(x: float | None) -> str:
    return "-" if x is None or math.isnan(x) else f"{x:.3f}"


def _print_v_star(v: dict, framing: str) -> None:
    """Eq. 1's weights: r and its units, who is weighted, negative weights, the sweep, the assumptions."""
    say = lambda text: out.print(text, highlight=False)  # noqa: E731
    n_off = ", ".join(f"{n:,} {why}" for why, n in v["n_unweighted"].items()) or "none"
    wt = v["weights"]
    say(
        f"  v* (Eq. 1, w = {framing}, Sigma {v['sigma']}, axes {'/'.join(v['axes'])}): r = {v['r_over_r0']:g} x r0 = "
        f"{v['r_per_dollar']:.3g} per $ (r0 = median M_ii/sigma2_i = {v['r0_per_dollar']:.3g} per $); "
        f"{v['n_weighted']:,} items weighted, v = 0 for {n_off}"
    )
    say(
        f"  negative weights: {wt['n_negative']:,} of {wt['n']:,} ({wt['negative_mass_share']:.1%} of the weight mass; "
        f"min {wt['min']:.3g}, max {wt['max']:.3g}); M's top eigenvalue is "
        f"{v['m_top_eigenvalue_over_median_m_ii']:,.0f} x the median M_ii (shared training axes)"
    )
    table = Table(title="welfare as a share of the attainable W(v*) (scored under the estimated M and Sigma)")
    for col in ("r / r0", "r per $", "Eq. 1", "diagonal rule", "best uniform", "W(v*) / first best"):
        table.add_column(col, justify="right")
    for row in v["sweep"]:
        table.add_row(
            f"{row['r_over_r0']:g}", f"{row['r']:.3g}", f"{row['share_eq1']:.4f}", f"{row['share_diagonal']:.4f}",
            f"{row['share_uniform']:.4f}", f"{row['attainable_of_first_best']:.4f}",
        )  # fmt: skip
    out.print(table)
    say("  assumptions:")
    for a in v["assumptions"]:
        say(f"    - {a}")


def register(app: typer.Typer) -> None:
    app.command("simulate-panel")(simulate_panel)
    for group in app.registered_groups:
        if group.name == "analyze" and group.typer_instance is not None:
            group.typer_instance.command("items")(analyze_items)
            return
    analyze = typer.Typer(help="Run an analysis on the warehouse, a snapshot or a CSV.", no_args_is_help=True)
    analyze.command("items")(analyze_items)
    app.add_typer(analyze, name="analyze")
