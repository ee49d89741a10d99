"""Coverage of the item audit's intervals on simulated panels with known truth — in one run.

For each of ``--panels`` simulated panels (``--items`` items each; the simulator's EvoLM-like axes
suite: PT 3, SFT 9, RL 9 checkpoints, one seed; PolyPythias-like seeds suite: 8 seeds x 10
checkpoints) the audit is fitted twice, with ``intervals="t"`` (t-intervals for the slopes,
chi-square for sigma2) and ``intervals="bootstrap"`` (the paper's percentile intervals,
``--n-boot`` replicates), and the share of items whose true slope / true sigma2 lies inside its 95%
interval is counted. The rank CIs (bootstrap in both fits) are scored against the items' true
ranks: the true cheapest-axis cost ranked among the items the audit kept, and the true sigma2
ranked among the noise-kept items.

    .venv/bin/python benchmarks/items_intervals.py            # 5 panels x 1,000 items (under a minute)
    .venv/bin/python benchmarks/items_intervals.py --small    # 2 panels x 300 items

Prints one line per interval: coverage per method and its ratio to the nominal 0.95, then JSON.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd

from evalhouse.analytics.items.audit import AXES, ItemAudit, cost_scenario
from evalhouse.analytics.items.engine import DuckDBEngine
from evalhouse.analytics.items.simulate import PanelSpec
from evalhouse.analytics.runs.items import simulate_into
from evalhouse.warehouse.db import Warehouse

NOMINAL = 0.95


def _inside(lo: pd.Series, hi: pd.Series, truth: pd.Series) -> pd.Series:
    ok = lo.notna() & hi.notna()
    return ((lo <= truth) & (truth <= hi))[ok]


def true_ranks(m: pd.DataFrame) -> tuple[pd.Series, pd.Series]:
    """True improvability rank (cheapest true cost, among improvability-kept items) and true noise
    rank (largest true sigma2 first, among noise-kept items with a rank CI)."""
    kappa = cost_scenario(None)
    cost = pd.Series(np.inf, index=m.index)
    for axis in AXES:
        beta = m[f"slope_{axis.lower()}_true"]
        cost = np.minimum(cost, (kappa[axis] / beta).where(beta > 0, np.inf))
    kept = m["improvability_rank"].notna()
    impr = cost[kept].rank(method="min")
    noisy = m["noise_rank"].notna()
    noise = (-m.loc[noisy, "sigma2_true"]).rank(method="min")
    return impr, noise


def coverage(panel_truth: pd.DataFrame, items: pd.DataFrame) -> dict[str, tuple[int, int]]:
    """(inside, total) per interval."""
    m = items.merge(panel_truth, on="item_id", suffixes=("", "_true")).set_index("item_id")
    out: dict[str, tuple[int, int]] = {}
    for axis in AXES:
        a = axis.lower()
        hit = _inside(m[f"slope_{a}_lo"], m[f"slope_{a}_hi"], m[f"slope_{a}_true"])
        out[f"slope_{a}"] = (int(hit.sum()), len(hit))
    hit = _inside(m["sigma2_lo"], m["sigma2_hi"], m["sigma2_true"])
    out["sigma2"] = (int(hit.sum()), len(hit))
    impr, noise = true_ranks(m)
    hit = _inside(m.loc[impr.index, "improvability_rank_lo"], m.loc[impr.index, "improvability_rank_hi"], impr)
    out["improvability_rank"] = (int(hit.sum()), len(hit))
    hit = _inside(m.loc[noise.index, "noise_rank_lo"], m.loc[noise.index, "noise_rank_hi"], noise)
    out["noise_rank"] = (int(hit.sum()), len(hit))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--panels", type=int, default=5)
    ap.add_argument("--items", type=int, default=1000)
    ap.add_argument("--n-boot", type=int, default=1000)
    ap.add_argument("--small", action="store_true", help="2 panels x 300 items")
    args = ap.parse_args()
    panels, n_items = (2, 300) if args.small else (args.panels, args.items)
    totals: dict[str, dict[str, list[int]]] = {"t": {}, "bootstrap": {}}
    t0 = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="evalhouse-bench-intervals-") as tmp:
        for p in range(panels):
            with Warehouse.open(Path(tmp) / f"p{p}.duckdb") as wh:
                _, panel = simulate_into(wh, PanelSpec(n_items=n_items, random_state=100 + p))
                for method, total in totals.items():
                    audit = ItemAudit(n_boot=args.n_boot, intervals=method, random_state=p).fit(DuckDBEngine(wh.con))
                    for key, (hit, n) in coverage(panel.truth, audit.items_).items():
                        acc = total.setdefault(key, [0, 0])
                        acc[0] += hit
                        acc[1] += n
            print(f"panel {p + 1}/{panels} done ({time.perf_counter() - t0:.0f} s)", flush=True)
    rates = {m: {k: v[0] / v[1] for k, v in d.items() if v[1]} for m, d in totals.items()}
    print(f"95% interval coverage over {panels} simulated panels x {n_items:,} items ({args.n_boot} replicates):")
    for key in rates["t"]:
        t, b = rates["t"][key], rates["bootstrap"][key]
        n = totals["t"][key][1]
        label = "t / chi-square" if not key.endswith("rank") else "t / chi-square draws"
        print(
            f"  {key:<20} {label}: {t:.3f} (ratio to nominal {t / NOMINAL:.3f});  percentile bootstrap: {b:.3f} "
            f"(ratio {b / NOMINAL:.3f});  n = {n:,}"
        )
    print(json.dumps({"panels": panels, "items": n_items, "n_boot": args.n_boot, "coverage": rates}))


if __name__ == "__main__":
    main()
