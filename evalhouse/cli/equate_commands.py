"""Paper 004 commands: ``compare``, ``analyze equate``, ``analyze equate-hub``, ``reproduce paper-004``.

Each parses its options, calls one :mod:`evalhouse.analytics.runs` function and prints the result
(rich tables, or ``--json``); the rules for input, pin, recording and exit codes are in
:mod:`evalhouse.cli._analysis`.
"""

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.markup import escape
from rich.table import Table

from evalhouse.cli._analysis import RecordFlag, num, print_kept, run, target, with_rules
from evalhouse.cli._common import DbOption, JsonFlag, SnapshotOption, console, out

EncoderOpt = Annotated[
    str,
    typer.Option(
        "--encoder",
        help="Text encoder: wordllama (default; 256-d, loaded from its wheel, never downloads), tfidf "
        "(fitted on the benchmark texts) or sentence-transformers (optional extra, local weights only).",
    ),
]
_f = num


# ---------------------------------------------------------------------- compare
@with_rules()
def compare(
    ctx: typer.Context,
    task: Annotated[
        str,
        typer.Option(
            "--task",
            "-t",
            help="The task in words, e.g. 'agentic software engineering in a terminal', or a stored query name "
            "(software_engineering_agent, math_competition_coach, customer_support_automation, "
            "long_report_analysis, poetry_writing_partner).",
        ),
    ],
    top: Annotated[int, typer.Option("--top", min=1, help="Rows in the ranking, movers and nearest benchmarks.")] = 10,
    encoder: EncoderOpt = "wordllama",
    benchmarks: Annotated[
        str,
        typer.Option(
            "--benchmarks",
            help="all: every AA column with >= 15 configurations (14 in the 2026-07-06 snapshot); "
            "paper: only those among the paper's 14 (nine).",
        ),
    ] = "all",
    as_is: Annotated[
        bool, typer.Option("--as-is", help="Embed the task text as given instead of 'This task measures <task>.'")
    ] = False,
    bandwidth: Annotated[
        float, typer.Option("--bandwidth", help="Field scale h as a multiple of the median description distance.")
    ] = 0.45,
    information: Annotated[
        str,
        typer.Option(
            "--information",
            help="Information weights in the residual mean: mean (default; each benchmark's mean item "
            "information, the paper's), cell (each cell's own), normalised (cell / mean) or none.",
        ),
    ] = "mean",
    explain: Annotated[
        str | None,
        typer.Option(
            "--explain",
            help="A model id or name (or a unique part of one): print the benchmarks, weights and values that "
            "put it where it is, and its sibling configurations.",
        ),
    ] = None,
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Rank models for a task described in words (Balance of Benchmarks, paper 004).

    Each benchmark is placed in semantic space by its 40-80-word description (the curation
    registry merged with the frozen text store of paper 004 §L.4); benchmarks in crowded regions
    get less weight (inverse density, h_dens = 0.25 x median distance). Characteristic curves put
    every model on one ability scale theta; the task text is embedded like a description and each
    model's task score is theta plus its support-shrunk residual on the benchmarks near the task
    (BoB-Support, beta = P/(P+1)). The residual mean weights each benchmark by its relevance to
    the task, the cell's robust weight and the benchmark's mean item information (--information).

    --explain MODEL prints, for one configuration, every benchmark with its raw score, fitted
    curve value, standardised residual z, robust weight, information weight, relevance to the
    task, share of the residual mean and contribution to the task score (theta + contributions =
    task score), and the ranks of its sibling configurations (other efforts of the same model).

    Population: the Artificial Analysis configurations (the snapshot the method was designed on)
    with >= 5 of the benchmarks observed. Prints the ranking with theta, task score and support,
    the nearest benchmarks, and the biggest rank movers relative to theta. Recorded: analysis_run
    (kind task_comparison, with the encoder's name, revision and dimension), analysis_theta,
    analysis_curve, analysis_quantity, and the vectors in 'embedding'.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    run(
        lambda: runs.compare(
            task,
            db=read,
            snapshot=snapshot,
            record_into=into,
            top=top,
            encoder=encoder,
            benchmarks=benchmarks,
            as_is=as_is,
            bandwidth=bandwidth,
            information=information,
            explain=explain,
        ),
        _print_compare,
        json_out,
    )


def _print_compare(r: dict[str, Any]) -> None:
    enc = r["encoder"]
    pop = r["population"]
    out.print(f"task: {escape(r['task'])}", highlight=False)
    out.print(f"embedded as ({escape(r['query_form'])}): {escape(r['query'])}", highlight=False)
    out.print(
        f"population: {pop['n_fitted']} {pop['source']} configurations x {len(pop['benchmarks'])} benchmarks "
        f"({escape(pop['rule'])})",
        highlight=False,
    )
    out.print(
        f"encoder: {enc['encoder']} rev {enc['revision']} dim {enc['dim']}; bandwidth {r['bandwidth_multiple']} x "
        f"median distance (h = {r['h']:.3f}); median support {r['median_support']:.3f}, median beta "
        f"{r['median_beta']:.3f}",
        highlight=False,
    )
    table = Table(title="ranking for the task (BoB-Support)")
    for col, just in (("#", "right"), ("model", "left"), ("task score", "right"), ("theta", "right"),
                      ("theta rank", "right"), ("support", "right")):  # fmt: skip
        table.add_column(col, justify=just)
    for row in r["ranking"]:
        table.add_row(
            str(row["rank_task"]),
            escape(row["name"]),
            _f(row["task_score"]),
            _f(row["theta"]),
            str(row["rank_theta"]),
            _f(row["support"]),
        )
    out.print(table)
    near = Table(title="nearest benchmarks to the task")
    for col in ("benchmark", "angular distance", "relevance g", "density weight u"):
        near.add_column(col, justify="left" if col == "benchmark" else "right")
    for row in r["nearest_benchmarks"]:
        near.add_row(row["benchmark"], _f(row["distance"]), _f(row["relevance"]), _f(row["u"]))
    out.print(near)
    movers = Table(title="biggest movers relative to theta")
    for col in ("model", "theta rank", "task rank", "change", "theta", "task score"):
        movers.add_column(col, justify="left" if col == "model" else "right")
    for row in r["movers"]:
        change = row["rank_theta"] - row["rank_task"]
        movers.add_row(
            escape(row["name"]),
            str(row["rank_theta"]),
            str(row["rank_task"]),
            f"{change:+d}",
            _f(row["theta"]),
            _f(row["task_score"]),
        )
    out.print(movers)
    if "explain" in r:
        _print_explain(r["explain"])
    if r["far_from_all"]:
        nearest = r["nearest_benchmarks"][0]["distance"]
        console.print(
            f"[yellow]note:[/] the nearest benchmark is {nearest:.2f} rad from the task, "
            f"farther than any benchmark is from its nearest neighbour ({r['max_neighbour_distance']:.2f}): no "
            "benchmark is specifically about this task; read the ranking as theta adjusted by loosely "
            "related benchmarks"
        )


def _print_explain(x: dict[str, Any]) -> None:
    s = x["summary"]
    out.print(
        f"why {escape(s['name'])} ({escape(s['model'])}) ranks {s['rank_task']} of {s['n_models']} for the task "
        f"(theta rank {s['rank_theta']}): task score {s['task_score']:.3f} = theta {s['theta']:.3f} + beta "
        f"{s['beta']:.3f} x residual mean {s['residual_mean']:.3f} (support P {s['support']:.3f}, {s['n_observed']} "
        f"benchmarks observed; information weights: {s['information']})",
        highlight=False,
    )
    table = Table(title="its benchmarks, by share of the residual mean")
    cols = ("benchmark", "raw", "f(theta)", "score", "z", "robust w", "info I", "distance", "relevance g", "share",
            "contribution")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for b in x["benchmarks"]:
        if not b["observed"]:
            table.add_row(b["benchmark"], "-", _f(b["fitted"]), "-", "-", "-", "-", _f(b["distance"]),
                          _f(b["relevance"]), "-", "-", style="dim")  # fmt: skip
            continue
        table.add_row(
            b["benchmark"], _f(b["raw"]), _f(b["fitted"]), _f(b["score"]), _f(b["z"]), _f(b["robust_weight"]),
            _f(b["information"]), _f(b["distance"]), _f(b["relevance"]), f"{b['share']:.1%}",
            f"{b['contribution']:+.3f}",
        )  # fmt: skip
    out.print(table)
    out.print(f"reading: {escape(x['reading'])}; score and f(theta) on the min-max normalised scale", highlight=False)
    if len(x["siblings"]) > 1:
        sib = Table(title="sibling configurations (same model name)")
        for col in ("model", "task rank", "theta rank", "task score", "theta"):
            sib.add_column(col, justify="left" if col == "model" else "right")
        for m in x["siblings"]:
            sib.add_row(escape(m["name"]), str(m["rank_task"]), str(m["rank_theta"]), _f(m["task_score"]),
                        _f(m["theta"]))  # fmt: skip
        out.print(sib)


# ---------------------------------------------------------------------- analyze equate
@with_rules(csv_only=True)
def equate(
    ctx: typer.Context,
    input_path: Annotated[
        Path,
        typer.Option("--input", "-i", exists=True, dir_okay=False, help="Long CSV with columns model,benchmark,score."),
    ],
    min_observed: Annotated[
        int, typer.Option("--min-observed", min=1, help="Models with fewer fitted benchmarks get theta null.")
    ] = 4,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Equate benchmark scores onto one ability scale with characteristic curves (paper 004 §3.1).

    Input: a long CSV with columns model, benchmark, score; scores must already be oriented
    higher-is-better and may have any range. Each benchmark is min-max normalised over the observed
    scores of the fitted models (0 = lowest, 1 = highest observed), then every benchmark gets a
    two-parameter logistic curve f(theta) = 1/(1+exp(-a(theta-b))) with residual scale sigma and
    every model one standardised ability theta with its standard error, alternating curves and
    abilities until no theta moves by more than 0.001 (every benchmark weighs equally; a benchmark
    needs >= 5 models).

    Awkward input: a blank or NA score means not observed; a benchmark with one distinct value (or
    too few models) is left out and listed with the reason; a model with fewer than
    --min-observed fitted benchmarks is listed with theta null and the reason. Missing columns, a
    non-numeric score, duplicate model/benchmark rows or nothing left to fit exit 2.
    """
    from evalhouse.analytics import runs

    _, into = target(ctx, db, record)
    run(lambda: runs.equate_csv(input_path, db=into, min_observed=min_observed), _print_equate, json_out)


def _print_equate(result: dict[str, Any]) -> None:
    s = result["summary"]
    out.print(
        f"{s['n_fitted']} of {s['n_models']} models equated on {s['n_benchmarks']} benchmarks "
        f"(min observed {result['min_observed']})",
        highlight=False,
    )
    out.print(f"normalisation: {escape(result['normalisation'])}", highlight=False)
    models = Table(title="abilities (standardised theta)")
    for col in ("model", "theta", "observed", "reason"):
        models.add_column(col, justify="left" if col in {"model", "reason"} else "right")
    ordered = sorted(result["models"], key=lambda m: (m["theta"] is None, -(m["theta"] or 0.0)))
    for m in ordered:
        models.add_row(escape(m["model"]), _f(m["theta"]), str(m["n_observed"]), escape(m.get("reason", "")))
    out.print(models)
    bench = Table(title="characteristic curves")
    for col in ("benchmark", "a", "b", "sigma"):
        bench.add_column(col, justify="left" if col == "benchmark" else "right")
    for b in result["benchmarks"]:
        bench.add_row(escape(b["benchmark"]), _f(b["a"]), _f(b["b"]), _f(b["sigma"]))
    out.print(bench)
    for b in result["excluded_benchmarks"]:
        console.print(f"left out {escape(b['benchmark'])}: {escape(b['reason'])}", highlight=False)


@with_rules()
def equate_hub(
    ctx: typer.Context,
    source: Annotated[
        str, typer.Option("--source", help="The hub source whose models are equated.")
    ] = "epoch-benchmarks",
    level: Annotated[
        str, typer.Option("--level", help="configuration (one row per configuration) or base_model.")
    ] = "configuration",
    aggregate: Annotated[
        str,
        typer.Option(
            "--aggregate",
            help="base_model only: best_default (the configuration with most observed benchmarks), max or mean.",
        ),
    ] = "best_default",
    min_observed: Annotated[
        int, typer.Option("--min-observed", min=1, help="Models with fewer fitted benchmarks get theta null.")
    ] = 4,
    top: Annotated[int, typer.Option("--top", min=1, help="Models listed in the table (JSON lists all).")] = 20,
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Put every model of the Epoch AI Benchmarking Hub on one ability scale (paper 004 §3.1).

    Input cells: each configuration the source reported, on each non-composite benchmark the
    source reported. Scores are min-max normalised per benchmark; each benchmark gets a
    characteristic curve (a, b, sigma), each model a standardised theta. Models with fewer than
    --min-observed fitted benchmarks keep theta null with the reason. Epoch's own Capabilities
    Index (a published equating, so not an input) is compared with theta where both exist
    (Spearman, Kendall). Recorded: analysis_run, analysis_theta (every model), analysis_curve.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    run(
        lambda: runs.equate_hub(
            db=read,
            snapshot=snapshot,
            record_into=into,
            source=source,
            level=level,
            aggregate=aggregate,
            min_observed=min_observed,
        ),
        lambda r: _print_hub(r, top),
        json_out,
    )


def _print_hub(r: dict[str, Any], top: int) -> None:
    cmp = r["comparison"]
    level = r["level"] + (f" ({r['aggregate']})" if r["aggregate"] else "")
    out.print(
        f"{r['source']}: {r['n_fitted']} of {r['n_models']} models ({level}) equated on {r['n_benchmarks']} "
        f"benchmarks; {r['n_models'] - r['n_fitted']} below {r['min_observed']} observed benchmarks keep theta null",
        highlight=False,
    )
    out.print(f"normalisation: {escape(r['normalisation'])}", highlight=False)
    if cmp["spearman"] is not None:
        out.print(
            f"theta vs {cmp['reference']} (Epoch's published equating) over {cmp['n']} models: "
            f"Spearman {cmp['spearman']:.3f}, Kendall {cmp['kendall']:.3f}",
            highlight=False,
        )
    else:
        out.print(f"no comparison with {cmp['reference']}: {cmp['n']} models have both", highlight=False)
    ref = cmp["reference"]
    fitted = sorted((m for m in r["models"] if m["theta"] is not None), key=lambda m: -m["theta"])
    table = Table(title=f"highest theta (top {min(top, len(fitted))} of {len(fitted)})")
    for col in ("#", "model", "theta", "observed", "ECI"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for i, m in enumerate(fitted[:top], 1):
        table.add_row(str(i), escape(m["name"]), _f(m["theta"]), str(m["n_observed"]), _f(m.get(ref), 1))
    out.print(table)
    bench = Table(title="characteristic curves")
    for col in ("benchmark", "a", "b", "sigma", "models"):
        bench.add_column(col, justify="left" if col == "benchmark" else "right")
    for b in sorted(r["benchmarks"], key=lambda b: -b["n_observed"]):
        bench.add_row(b["benchmark"], _f(b["a"]), _f(b["b"]), _f(b["sigma"]), str(b["n_observed"]))
    out.print(bench)
    for b in r["excluded_benchmarks"]:
        console.print(f"left out {escape(b['benchmark'])}: {escape(b['reason'])}", highlight=False)


# ---------------------------------------------------------------------- reproduce paper-004
@with_rules(csv=True, reproduction=True)
def paper_004(
    ctx: typer.Context,
    input_path: Annotated[
        Path | None,
        typer.Option(
            "--input",
            "-i",
            exists=True,
            dir_okay=False,
            help="The AA parsed CSV (../shared/datasets/artificial-analysis-2026-07-06/…), ingested through the "
            "real parser, curation and checkpoint into a scratch warehouse.",
        ),
    ] = None,
    encoder: EncoderOpt = "wordllama",
    benchmarks: Annotated[
        str, typer.Option("--benchmarks", help="paper: the paper's benchmarks present in the CSV; all: every column.")
    ] = "paper",
    compare_all: Annotated[
        bool,
        typer.Option("--compare-all/--no-compare-all", help="With --benchmarks paper, also run every usable column."),
    ] = True,
    inner: Annotated[
        bool,
        typer.Option(
            "--inner/--fixed-bandwidth",
            help="Nested inner-fold selection of the bandwidth and the hard rules' k and radius (paper), or "
            "fixed 0.45, k = 3, radius 0.70.",
        ),
    ] = True,
    selection: Annotated[
        str,
        typer.Option(
            "--selection", help="Inner criterion for the bandwidth: level+profile (the paper's mean) or profile."
        ),
    ] = "level+profile",
    shuffles: Annotated[
        int, typer.Option("--shuffles", min=0, help="Shuffled-description draws (paper: 200); 0 skips.")
    ] = 20,
    copies: Annotated[
        int,
        typer.Option(
            "--copies", min=0, help="Copied listings per scenario of the copy-stress test (paper: 4); 0 skips it."
        ),
    ] = 4,
    population: Annotated[
        bool, typer.Option("--population-shift", help="Also run the population-addition stress test.")
    ] = False,
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """Reproduce paper 004's Artificial Analysis leave-one-benchmark-out comparison.

    For every benchmark held out, BoB-Support predicts it from the others' density-weighted curves
    and its description; level = Spearman with the held-out score, profile = the same after
    removing a quadratic in theta. Printed next to each baseline (theta alone, uniform mean,
    nearest benchmark, first PC, GLS weights, the published AA index), the controls (flat
    weights u = 1, other information weightings, top-k and radius rules with inner-selected sizes)
    and the paper's values (evalhouse/analytics/reproduce/paper004.yaml), with paired one-sided
    Wilcoxon tests over folds, Holm-adjusted. Then the copy-stress test (paper 4.3): each
    benchmark listed four more times in turn, the model refitted, and the mean over scenarios of
    the largest theta shift and rank displacement printed for BoB, flat weights and equal
    weighting beside the paper's (0.095 vs 0.963 SD; 16.0 vs 98.9 ranks).

    Exit 0 when the paper's two claims hold: BoB-Support's profile is above theta alone and above
    the uniform mean, and in the copy-stress test BoB's theta moves less than with flat weights and
    its ranking less than with flat weights and with equal weighting. Exit 1 otherwise. Flat weights
    barely change the profile in the paper too (0.474 vs 0.484, p = 0.108): that comparison is
    printed as a finding and does not decide the exit; neither does the level, compared with the
    paper's 0.904 at a chosen tolerance of 0.05.

    The snapshot's columns differ from the paper's 14 (nine are shared), it is the 2026-07-06 page
    rather than the 2026-09-03 API, and the encoder is WordLlama rather than Qwen3-Embedding-8B, so
    the ordering should reproduce, not every digit. Recorded: analysis_run (kind reproduction) and
    analysis_quantity.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    run(
        lambda: runs.reproduce_paper004(
            db=read,
            input_path=input_path,
            snapshot=snapshot,
            record_into=into,
            encoder=encoder,
            benchmarks=benchmarks,
            compare_all=compare_all,
            inner=inner,
            selection=selection,
            n_shuffles=shuffles,
            copies=copies,
            population_shift=population,
        ),
        _print_paper004,
        json_out,
    )


def _lobo_tables(lobo: dict[str, Any], paper: dict[str, Any], title: str) -> None:
    table = Table(title=title)
    for col in ("method", "level", "(se)", "profile", "(se)", "folds"):
        table.add_column(col, justify="left" if col == "method" else "right")
    for row in lobo["summary"]:
        style = "bold" if row["method"] == "BoB-Support" else ""
        table.add_row(
            row["method"],
            _f(row["level"]),
            _f(row["level_se"]),
            _f(row["profile"]),
            _f(row["profile_se"]),
            str(row["n_folds"]),
            style=style,
        )
    table.add_row(f"paper BoB-Support ({paper['encoder']})", _f(paper["level"]), "", _f(paper["profile"]), "", "",
                  style="italic")  # fmt: skip
    out.print(table)
    tests = Table(title="paired profile tests: BoB-Support minus method (one-sided Wilcoxon over folds, Holm)")
    for col in ("method", "mean diff", "p", "p Holm", "folds"):
        tests.add_column(col, justify="left" if col == "method" else "right")
    for row in lobo["tests"]:
        tests.add_row(
            row["baseline"],
            f"{row['mean_diff']:+.3f}",
            f"{row['p_wilcoxon']:.4f}",
            f"{row['p_holm']:.4f}",
            str(row["n_folds"]),
        )
    out.print(tests)


def _print_paper004(r: dict[str, Any]) -> None:
    enc = r["encoder"]
    say = lambda text: out.print(text, highlight=False)  # noqa: E731
    say("Paper 004 (Balance of Benchmarks): Artificial Analysis, leave one benchmark out")
    say(f"input columns ({len(r['input_columns'])}): {', '.join(r['input_columns'])}")
    say(f"benchmarks used ({len(r['benchmarks'])}): {', '.join(r['benchmarks'])}")
    say(f"paper benchmarks absent from the input: {', '.join(r['paper_benchmarks_missing']) or 'none'}")
    say(f"input columns not in the paper: {', '.join(r['not_in_paper']) or 'none'}")
    say(f"rows: {r['n_rows']} configurations with >= 5 of the benchmarks used observed")
    say(f"encoder: {enc['encoder']} rev {enc['revision']} dim {enc['dim']} (paper: Qwen3-Embedding-8B, 4096-d)")
    say(f"scores: {r['normalisation']}")
    d = r["density"]
    say(
        f"geometry: median description distance {d['median_distance']:.3f} (paper 0.89), h_dens "
        f"{d['h_dens']:.3f} (paper 0.224), total density mass W {d['W']:.2f} (paper 12.5 of 14)"
    )
    g = r["global_ranking_vs_index"]
    if g:
        say(
            f"theta vs the published AA Intelligence Index over {g['n']} configurations: Spearman "
            f"{g['spearman']:.3f}, Kendall {g['kendall']:.3f} (paper 0.970 / 0.862)"
        )
    _lobo_tables(r["lobo"], r["paper"], f"LOBO on the {len(r['benchmarks'])} benchmarks used")
    if "all_columns" in r:
        cols = r["all_columns"]["benchmarks"]
        _lobo_tables(r["all_columns"], r["paper"], f"LOBO on every usable column ({len(cols)})")
    sel = r["lobo"].get("selected") or {}
    if sel:
        say(
            "inner selections per held-out benchmark (bandwidth x median; k of top-k; radius x median, "
            "benchmarks within): "
            + "; ".join(
                f"{t} {c['bandwidth']:.2f}, k {int(c['k'])}, r {c['radius']:.2f} ({int(c['n_within_radius'])})"
                for t, c in sel.items()
            )
        )
    c = r["checks"]
    say(f"BoB-Support beats theta alone: {c['beats_theta_alone']}")
    say(f"BoB-Support beats the uniform mean: {c['beats_uniform_mean']}")
    say(
        f"level {'within' if c['level_within_0.05_of_paper'] else 'NOT within'} 0.05 of the paper's 0.904 "
        "(a chosen tolerance; reported, not a gate)"
    )
    if "copy_stress" in r:
        _print_copies(r["copy_stress"])
    else:
        say("copy-stress test not run (--copies 0)")
    flat = c["density"]["flat_weights"]
    d = c["density"]
    if flat:
        p = flat["p_wilcoxon"]
        say(
            f"finding, flat weights (u = 1): profile {flat['profile_flat']:.3f} vs BoB {flat['profile_bob']:.3f} "
            f"(one-sided p {p:.3f}); paper {flat['paper']['profile_flat']:.3f} vs {flat['paper']['profile_bob']:.3f} "
            f"(p {flat['paper']['p']:.3f}). Density weights v span {d['v_min']:.3f}-{d['v_max']:.3f}; they are for "
            "multiplicity robustness, which the copy-stress test measures"
        )
    if "shuffled" in r:
        s = r["shuffled"]
        say(
            f"shuffled descriptions ({s['n_draws']} draws): profile {s['mean']:.3f} +/- {s['sd']:.3f} "
            "(paper 0.358 +/- 0.042)"
        )
    verdict = "[green]holds[/]" if c["ok"] else "[red]fails[/]"
    copies_state = {True: "holds", False: "fails", None: "not run"}[c["copies_hold"]]
    out.print(
        f"reproduction {verdict}: profile above theta alone {c['profile_above_theta']}, above the uniform mean "
        f"{c['profile_above_uniform']}; copy stress {copies_state} (exit rule: {escape(c['exit_rule'])})",
        highlight=False,
    )


def _print_copies(cs: dict[str, Any]) -> None:
    t, d, m = cs["theta_shift"], cs["displacement"], cs["mean_displacement"]
    table = Table(
        title=f"copy stress: {cs['n_copies']} added copies of each of {cs['n_scenarios']} benchmarks in turn "
        "(means over scenarios)"
    )
    for col in ("weighting", "max theta shift (SD)", "paper", "max rank displacement", "paper", "mean displacement"):
        table.add_column(col, justify="left" if col == "weighting" else "right")
    table.add_row("BoB (inverse density)", _f(t["bob"]), _f(t["paper_bob"]), f"{d['bob']:.1f}",
                  f"{d['paper_bob']:.1f}", f"{m['bob']:.2f}", style="bold")  # fmt: skip
    table.add_row(
        "flat weights (u = 1)", _f(t["flat"]), _f(t["paper_flat"]), f"{d['flat']:.1f}", "", f"{m['flat']:.2f}"
    )
    table.add_row("equal weighting (uniform mean)", "", "", f"{d['equal_weighting']:.1f}",
                  f"{d['paper_equal_weighting']:.1f}", f"{m['equal_weighting']:.2f}")  # fmt: skip
    out.print(table)
    ratio_t = t["flat"] / t["bob"] if t["bob"] > 0 else float("inf")
    ratio_d = d["equal_weighting"] / d["bob"] if d["bob"] > 0 else float("inf")
    out.print(
        f"copy stress {'holds' if cs['holds'] else 'fails'}: flat weights move theta {ratio_t:.1f}x as much as BoB "
        f"(paper {t['paper_flat'] / t['paper_bob']:.1f}x); equal weighting displaces ranks {ratio_d:.1f}x as much "
        f"(paper {d['paper_equal_weighting'] / d['paper_bob']:.1f}x). Criterion: {escape(cs['criterion'])}",
        highlight=False,
    )


# ---------------------------------------------------------------------- analyze eci
@with_rules()
def eci(
    ctx: typer.Context,
    bootstrap: Annotated[
        int, typer.Option("--bootstrap", min=0, help="Bootstrap resamples of the observation cells for the 90% CIs.")
    ] = 100,
    objective: Annotated[
        str,
        typer.Option(
            "--objective",
            help="stable (λ = 1e-3, the largest of the stable region; default), epoch (Epoch's code: λ = 0.1, "
            "raw α penalty), cv (λ by 3-fold cross-validation) or cv_hierarchical.",
        ),
    ] = "stable",
    penalty: Annotated[
        float | None,
        typer.Option("--penalty", min=0.0, help="λ in Epoch's units (weight of the mean squared parameter)."),
    ] = None,
    sensitivity: Annotated[
        bool,
        typer.Option(
            "--sensitivity",
            help="Also refit across λ (1e-5 ... 1, Epoch's 0.1 and the stable region), the α parametrisation and "
            "the anchor benchmark, and report ECI, ranks and the capability-over-time slope for each.",
        ),
    ] = False,
    random_state: Annotated[int, typer.Option("--random-state", help="Seed of the folds and the bootstrap.")] = 0,
    compare: Annotated[
        bool,
        typer.Option("--compare/--no-compare", help="Also fit Epoch's objective and the variants, held out."),
    ] = True,
    top: Annotated[int, typer.Option("--top", min=1, help="Models listed in the table (JSON lists all).")] = 20,
    snapshot: SnapshotOption = None,
    db: DbOption = None,
    record: RecordFlag = True,
    json_out: JsonFlag = False,
) -> None:
    """A capabilities index on Epoch's ECI scale from the Epoch hub's own cells (never its published ECI).

    Epoch's method with the published file withheld: the hub's cells only (other sources' rows never
    enter), composites excluded, the best score per configuration over setups; rows of models released
    before 2023 dropped; each benchmark normalised (x - random baseline) / (ceiling - baseline), clipped,
    log-scaled for unbounded metrics or excluded, superseded benchmarks dropped (the benchmark registry
    with its citations: evalhouse/analytics/equate/eci_benchmarks.yaml).

    Inclusion rule, before the fit: a model enters only with a known release date and >= 4 benchmarks
    (every benchmark keeping >= 5 models). The models it keeps out are shown apart: an undated model
    with enough benchmarks is read off the fitted curves (it moves nothing), the rest are listed.

    One joint fit of p = sigmoid(alpha_b (C_m - D_b)) by least squares with Epoch's ridge penalty
    (λ x the mean squared parameter; slopes as log alpha), Winogrande fixed at D = 0, alpha = 1,
    rescaled so Claude 3.5 Sonnet = 130 and GPT-5 = 150. Default λ = 1e-3, the largest of the region
    where the index no longer depends on λ (--sensitivity shows it). 90% intervals: a bootstrap over
    cells, each resample re-anchored, its 5th-95th percentiles (coverage measured by simulation on the
    hub's pattern in benchmarks/eci.py); the anchors are exact by definition, and their own places
    relative to Winogrande are printed. heldout_rmse: RMSE on proportions of 5-fold held-out cells,
    also for Epoch's objective and the variants (printed table; recorded).

    JSON: {"models": [{"model", "group", "eci", "ci_low", "ci_high", "n_benchmarks"}], "apart": [{"model",
    "group", "eci_placed", "n_benchmarks", "reason"}], "benchmarks": [{"benchmark", "edi", "slope"}],
    "heldout_rmse", "iterations", "time_slopes": {"slope_per_year", "frontier_slope_per_year",
    "n_frontier"}, "sensitivity" (with --sensitivity)}; one row per source model name ("Model
    version"), carrying its group's score.
    """
    from evalhouse.analytics import runs

    read, into = target(ctx, db, record)
    run(
        lambda: runs.eci(
            db=read,
            snapshot=snapshot,
            record_into=into,
            n_bootstrap=bootstrap,
            random_state=random_state,
            compare=compare,
            sensitivity=sensitivity,
            objective=objective,
            penalty=penalty,
        ),
        lambda r: _print_eci(r, top),
        json_out,
    )


def _print_eci(r: dict[str, Any], top: int) -> None:
    extra = r.get("extra", {})
    out.print(
        f"{len(r['models'])} models on {len(r['benchmarks'])} benchmarks; {r['iterations']} iterations, final change "
        f"{extra.get('final_change', float('nan')):.1e} ECI points; penalty λ = {extra.get('penalty')} "
        f"({extra.get('alpha_penalty')} α)",
        highlight=False,
    )
    table = Table(title=f"capabilities index (top {min(top, len(r['models']))} of {len(r['models'])})")
    for col in ("#", "model", "ECI", "90% CI", "benchmarks"):
        table.add_column(col, justify="left" if col == "model" else "right")
    for i, m in enumerate(r["models"][:top], 1):
        ci = "—" if m["ci_low"] is None or m["ci_low"] != m["ci_low"] else f"{m['ci_low']:.1f}-{m['ci_high']:.1f}"
        table.add_row(str(i), escape(m["model"]), _f(m["eci"], 1), ci, str(m["n_benchmarks"]))
    out.print(table)
    for name, (lo, hi) in (extra.get("anchor_position") or {}).items():
        out.print(
            f"anchor {escape(name)}: exact by definition; its place relative to Winogrande (D = 0, alpha = 1) on "
            f"this scale, 90%: {lo:.1f}-{hi:.1f}",
            highlight=False,
        )
    ts = r.get("time_slopes") or {}
    if ts.get("slope_per_year") is not None:
        frontier = ts.get("frontier_slope_per_year")
        out.print(
            f"capability over time: {ts['slope_per_year']:.2f} ECI points per year (OLS over every model), "
            + (f"{frontier:.2f} over the frontier ({ts['n_frontier']} models)" if frontier is not None else ""),
            highlight=False,
        )
    _print_apart(r.get("apart") or [])
    if extra.get("comparison"):
        cmp = Table(title="held-out RMSE on proportions (5 folds over cells, same folds for every row)")
        for col in ("objective", "held-out RMSE", "cells"):
            cmp.add_column(col, justify="left" if col == "objective" else "right")
        for c in extra["comparison"]:
            cmp.add_row(c["variant"], _f(c["heldout_rmse"], 4), str(c["n_cells"]))
        out.print(cmp)
    if r.get("sensitivity"):
        _print_sensitivity(r["sensitivity"])
    print_kept(extra.get("kept_fit"), "cells")


def _print_apart(apart: list[dict[str, Any]]) -> None:
    placed = [a for a in apart if a["eci_placed"] is not None]
    if placed:
        table = Table(title="kept out of the fit by the inclusion rule, read off the fitted curves (they move nothing)")
        for col in ("model", "ECI if placed", "benchmarks", "reason"):
            table.add_column(col, justify="left" if col in {"model", "reason"} else "right")
        for a in placed:
            table.add_row(escape(a["model"]), _f(a["eci_placed"], 1), str(a["n_benchmarks"]), escape(a["reason"]))
        out.print(table)
    rest = len(apart) - len(placed)
    if rest:
        out.print(f"{rest} more model names kept out with too few benchmarks to be placed (--json lists them)")


def _print_sensitivity(sens: dict[str, Any]) -> None:
    base = sens["baseline"]
    out.print(f"sensitivity against {escape(base['label'])}", highlight=False)
    table = Table(title="how the index moves with λ, the α penalty and the anchor benchmark")
    cols = ("variant", "Spearman", "max |ΔECI|", "mean |ΔECI|", "max rank shift", "top-10 kept", "slope/yr", "× base",
            "frontier/yr", "× base")  # fmt: skip
    for col in cols:
        table.add_column(col, justify="left" if col == "variant" else "right")
    table.add_row(
        "this run", "1.000", "0.0", "0.0", "0", "10", _f(base["slope_per_year"], 2), "1.00",
        _f(base["frontier_slope_per_year"], 2), "1.00",
    )  # fmt: skip
    for v in sens["variants"]:
        table.add_row(
            escape(v["label"]),
            _f(v["spearman"], 3),
            _f(v["max_abs_diff"], 1),
            _f(v["mean_abs_diff"], 2),
            str(v["max_rank_shift"]),
            str(v["top10_overlap"]),
            _f(v["slope_per_year"], 2),
            _f(v["slope_ratio"], 2),
            _f(v["frontier_slope_per_year"], 2),
            _f(v["frontier_slope_ratio"], 2),
        )
    out.print(table)
    out.print("per-model ECI and rank under every variant: --json (sensitivity.models)", highlight=False)


def register(analyze: typer.Typer, reproduce: typer.Typer, app: typer.Typer) -> None:
    analyze.command("eci")(eci)
    analyze.command("equate")(equate)
    analyze.command("equate-hub")(equate_hub)
    reproduce.command("paper-004")(paper_004)
    app.command("compare")(compare)
