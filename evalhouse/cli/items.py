"""Item-level commands: ``simulate-panel`` and ``analyze items`` (paper 003's benchmark-item audit)."""

from __future__ import annotations

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


SUMMARY_COLUMNS = ("p_hat", "sigma_hat", "z", "cheapest_pt", "cheapest_sft", "cheapest_rl")


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
    from evalhouse.analytics.items.api import simulate_into
    from evalhouse.analytics.items.simulate import PanelSpec
    from evalhouse.warehouse.db import Warehouse

    spec = PanelSpec(
        n_items=items,
        seeds=seeds,
        seed_checkpoints=checkpoints,
        noise_sd=noise,
        random_state=random_state,
        prefix=prefix,
    )
    with guard(), Warehouse.open(db_path(ctx)) as wh:
        result, panel = simulate_into(wh, spec)
    if truth is not None:
        truth.parent.mkdir(parents=True, exist_ok=True)
        panel.truth.to_csv(truth, index=False)
    payload = {**result.as_dict(), "suites": panel.suites, "truth": str(truth) if truth else None}
    if json_out:
        emit_json(payload)
    else:
        out.print(
            f"{result.status}: {payload['loaded']:,} responses of {items:,} items loaded "
            f"(suites {panel.suites['improvability']}, {panel.suites['noise']})"
        )
    if result.status == "failed":
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
    n_boot: Annotated[int, typer.Option("--n-boot", help="Bootstrap replicates.")] = 1000,
    random_state: Annotated[int, typer.Option("--random-state")] = 0,
    welfare: Annotated[
        Path | None,
        typer.Option(
            "--welfare", help="Folder with task_ratings.csv, task_gwa.csv, item_gwa_rankings.csv (WORKBank format)."
        ),
    ] = None,
    json_out: JsonFlag = False,
) -> None:
    """The benchmark-item audit (paper 003): improvability, marginal cost, seed noise, exclusions.

    Per item: OLS slope, intercept and SE per training axis (PT/SFT/RL), marginal cost kappa/beta
    and the cheapest axis, seed variance sigma2 (denominator N - |PP|) and Z, margins, the named
    exclusion rules, and bootstrap rank CIs (residual and across-seed, --n-boot replicates). Per
    benchmark: paper 003's Table 4 (n, p-hat, sigma-hat, Z). Results go to analysis_item /
    analysis_item_benchmark; --out also writes items.csv. With --welfare: item welfare w^auto /
    w^aug, quadrants, the Pareto frontier, math vs general knowledge (FOSD), and v* weights.
    """
    from evalhouse.analytics.items.api import analyze_items as run
    from evalhouse.analytics.items.audit import ItemAudit
    from evalhouse.warehouse.db import Warehouse

    audit = ItemAudit(cost_scenario=cost, n_boot=n_boot, random_state=random_state)
    with guard():
        if snapshot is not None:
            from evalhouse.warehouse.snapshot import open_snapshot

            summary = run(
                open_snapshot(snapshot),
                engine=engine,
                out=output,
                audit=audit,
                parquet=parquet or (snapshot if engine == "spark" else None),
            )
        else:
            with Warehouse.open(db_path(ctx)) as wh:
                summary = run(
                    wh.con, engine=engine, out=output, writable=wh, audit=audit, parquet=parquet, welfare=welfare
                )
    if json_out:
        emit_json(summary)
        return
    table = Table(title=f"item audit ({summary['engine']}, {summary['n_items']:,} items)")
    for col in ("benchmark", "n", "n kept", "p-hat", "sigma-hat", "Z", "PT", "SFT", "RL"):
        table.add_column(col, justify="left" if col == "benchmark" else "right")
    for b in summary["benchmarks"]:
        table.add_row(
            b["benchmark"], str(b["n_items"]), str(b["n_noise_items"]),
            *(f"{b[k]:.3f}" if b[k] == b[k] else "-" for k in SUMMARY_COLUMNS),
        )  # fmt: skip
    out.print(table)
    for rule, n in summary["excluded"].items():
        out.print(f"  excluded: {n:,} — {rule}")
    if summary.get("welfare"):
        w = summary["welfare"]
        out.print(
            f"  welfare: {w['n_scored']:,} items scored; quadrants {w['quadrants']}; "
            f"math items on the Pareto frontier: {w.get('math_on_frontier', 0)}"
        )
    for name, path in summary["files"].items():
        out.print(f"  wrote {name}: {path}")


def register(app: typer.Typer) -> None:
    app.command("simulate-panel")(simulate_panel)
    for group in app.registered_groups:
        if group.name == "analyze" and group.typer_instance is not None:
            group.typer_instance.command("items")(analyze_items)
            return
    analyze = typer.Typer(help="Run an analysis on the warehouse, a snapshot or a CSV.", no_args_is_help=True)
    analyze.command("items")(analyze_items)
    app.add_typer(analyze, name="analyze")
