"""The benchmark-item audit of paper 003 as an estimator: improvability, cost, noise, exclusions.

``ItemAudit(...).fit(engine)`` runs the SQL primitives (``sql/item_*.sql``) on the engine (DuckDB
or Spark, same text), then the two bootstraps (:mod:`.bootstrap`) on the observations the engine
returns, and sets:

* ``items_``      one row per item: p_mean, sigma2, z, margin (median and mean), slopes and SEs
  per axis, marginal cost per axis under the cost scenario, cheapest axis and marginal cost, the
  exclusion rule that applies (by name), slope/sigma2 CIs and rank CIs (improvability rank 1 =
  cheapest to improve, noise rank 1 = noisiest);
* ``benchmarks_`` paper 003's Table 4 per benchmark (n, median p-hat, median sigma-hat, median Z
  over items kept by the noise rules; items with a margin, their median margin and Pearson
  r(margin, Z)) and the share of each cheapest axis;

Slope and sigma2 intervals (``intervals``): ``"t"`` (default) gives the OLS t-interval
slope +/- t_{n-2} se per axis and the chi-square interval df sigma2 / chi2_{df} for the seed
variance (df = N - |PP|), exact under the normal model and so right with 3 checkpoints;
``"bootstrap"`` gives the percentile intervals of the two bootstraps (the paper's), which cover
well below nominal with few checkpoints or seeds (measured by ``benchmarks/items_intervals.py``,
quoted in docs/analyses-items-and-bob.md). Rank CIs always come from the bootstraps (the paper's).

The slope exclusion (``improvability_exclusion``): ``"no-positive"`` (default) drops an item when
no axis has a positive slope, so no cost can be computed; ``"any-negative"`` is the paper's
"beta_ik < 0" read literally, dropping an item with a negative slope on any axis.
* ``suites_``     which suites fed improvability and noise (chosen when not given: the suite with
  the most training axes, and the suite with the most seeds);
* ``record_``     the AnalysisRecord.
"""

from __future__ import annotations

from functools import cache
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from evalhouse.analytics.base import AnalysisEstimator
from evalhouse.analytics.items import bootstrap as B
from evalhouse.analytics.items.engine import Engine, render
from evalhouse.common import progress
from evalhouse.common.resources import package_text
from evalhouse.common.yamls import load_yaml
from evalhouse.errors import DataMissing, InputError

AXES = ("PT", "SFT", "RL")
IMPROVABILITY_EXCLUSIONS = ("no-positive", "any-negative")
INTERVALS = ("t", "bootstrap")


@cache
def cost_scenarios() -> dict[str, Any]:
    return load_yaml(package_text("evalhouse.analytics.items", "data", "cost_scenarios.yaml"))


def cost_scenario(name: str | None) -> dict[str, float]:
    data = cost_scenarios()
    key = name or data["default"]
    if key not in data["scenarios"]:
        raise InputError(f"unknown cost scenario {key!r}; known: {', '.join(data['scenarios'])}")
    return {axis: float(data["scenarios"][key][axis]) for axis in AXES}


def choose_suites(engine: Engine) -> dict[str, list[str]]:
    """Default suites: the one with most training axes (improvability), most seeds (noise)."""
    suites = engine.query(render("item_suites.sql"))
    if suites.empty:
        raise DataMissing("no item responses: ingest a harness log or run 'evalhouse simulate-panel' first")
    impr = suites.sort_values(["n_axes", "n_checkpoints", "suite"], ascending=[False, False, True]).iloc[0]
    noise = suites.sort_values(["n_seeds", "n_checkpoints", "suite"], ascending=[False, False, True]).iloc[0]
    return {"improvability": [impr["suite"]], "noise": [noise["suite"]]}


class ItemAudit(AnalysisEstimator):
    kind = "item_audit"

    def __init__(  # noqa: PLR0913 - an estimator's parameters (sklearn style)
        self,
        *,
        cost_scenario: str | None = None,
        improvability_suites: tuple[str, ...] | None = None,
        noise_suites: tuple[str, ...] | None = None,
        p_bounds_improvability: tuple[float, float] = (0.05, 0.95),
        p_bounds_noise: tuple[float, float] = (0.10, 0.90),
        min_sigma2: float = 1e-6,
        n_boot: int = 1000,
        ci_level: float = 0.95,
        improvability_exclusion: str = "no-positive",
        intervals: str = "t",
        random_state: int = 0,
    ) -> None:
        self.cost_scenario = cost_scenario
        self.improvability_suites = improvability_suites
        self.noise_suites = noise_suites
        self.p_bounds_improvability = p_bounds_improvability
        self.p_bounds_noise = p_bounds_noise
        self.min_sigma2 = min_sigma2
        self.n_boot = n_boot
        self.ci_level = ci_level
        self.improvability_exclusion = improvability_exclusion
        self.intervals = intervals
        self.random_state = random_state

    def primitives_sql(self, suites: dict[str, list[str]]) -> str:
        """The per-item audit query (the three primitives composed), parameters filled in."""
        kappa = cost_scenario(self.cost_scenario)
        if self.improvability_exclusion not in IMPROVABILITY_EXCLUSIONS:
            choices = " or ".join(IMPROVABILITY_EXCLUSIONS)
            raise InputError(f"improvability exclusion {self.improvability_exclusion!r}: choose {choices}")
        slopes = render("item_slopes.sql", improvability_suites=suites["improvability"])
        noise = render("item_noise.sql", noise_suites=suites["noise"])
        return render(
            "item_audit.sql",
            slopes=slopes,
            noise=noise,
            overview=render("item_overview.sql"),
            kappa_pt=repr(kappa["PT"]),
            kappa_sft=repr(kappa["SFT"]),
            kappa_rl=repr(kappa["RL"]),
            p_lo_improvability=self.p_bounds_improvability[0],
            p_hi_improvability=self.p_bounds_improvability[1],
            p_lo_noise=self.p_bounds_noise[0],
            p_hi_noise=self.p_bounds_noise[1],
            min_sigma2=self.min_sigma2,
            literal_negative="TRUE" if self.improvability_exclusion == "any-negative" else "FALSE",
        )

    def fit(self, engine: Engine, snapshot_id: str | None = None) -> ItemAudit:
        """Run the primitives on ``engine``, then the intervals and rank CIs (``intervals``)."""
        self._start()
        if self.intervals not in INTERVALS:
            raise InputError(f"intervals {self.intervals!r}: choose {' or '.join(INTERVALS)}")
        given = {"improvability": self.improvability_suites, "noise": self.noise_suites}
        chosen = choose_suites(engine) if not all(given.values()) else {}
        suites = {k: list(v) if v else chosen[k] for k, v in given.items()}
        with progress.task("items: audit", total=3) as step:
            step.note(f"per-item primitives on {engine.name}")
            items = engine.query(self.primitives_sql(suites))
            items["item_id"] = items["item_id"].astype(str)
            items = items.sort_values("item_id", ignore_index=True)
            items["excluded"] = items["excluded_improvability"].where(
                items["excluded_improvability"].notna(), items["excluded_noise"]
            )
            rng = np.random.default_rng(self.random_state)
            obs = engine.query(render("item_obs.sql", improvability_suites=suites["improvability"]))
            if self.intervals == "t":
                step.advance(note=f"t-intervals; rank CIs from {self.n_boot} t / chi-square draws")
                analytic_intervals(items, self.ci_level)
                self._draw_ranks(items, rng)
                step.advance()
            else:
                step.advance(note=f"slope bootstrap ({self.n_boot} replicates)")
                self._bootstrap_improvability(items, obs, rng)
                step.advance(note=f"seed bootstrap ({self.n_boot} replicates)")
                seed_obs = engine.query(render("item_seed_obs.sql", noise_suites=suites["noise"]))
                self._bootstrap_noise(items, seed_obs, rng)
                del seed_obs
            step.advance()
        self.items_ = items
        self.benchmarks_ = benchmark_summary(items)
        self.suites_ = suites
        self.engine_ = engine.name
        frame = obs.set_index(["item_id", "axis"])[["x", "y"]]
        self._finish(
            frame,
            snapshot_id=snapshot_id,
            suites=suites,
            n_items=len(items),
            n_excluded_improvability=int(items["excluded_improvability"].notna().sum()),
            n_excluded_noise=int(items["excluded_noise"].notna().sum()),
            engine=engine.name,
            table4_statistic="median",
        )
        return self

    def _draw_ranks(self, items: pd.DataFrame, rng: np.random.Generator) -> None:
        """Rank CIs from draws of the normal-model fits' own distributions, ``n_boot`` of them.

        Per item and axis slope* = slope + se T with T ~ t_{n-2} (whose percentiles are the
        t-interval); seed variance* = df sigma2 / X with X ~ chi2_{df} (whose percentiles are the
        chi-square interval). Each draw ranks the kept items by cheapest cost and by seed variance,
        so the rank CIs carry the same uncertainty as the item intervals.
        """
        kappa = cost_scenario(self.cost_scenario)
        kept = items["excluded_improvability"].isna().to_numpy()
        axes = []
        for axis in AXES:
            a = axis.lower()
            df = (items[f"n_{a}"].to_numpy(dtype=float) - 2)[kept]
            se = items[f"se_{a}"].to_numpy(dtype=float)[kept]
            ok = (df > 0) & np.isfinite(se)
            slope = items[f"slope_{a}"].to_numpy(dtype=float)[kept]
            axes.append((kappa[axis], slope, np.where(ok, se, 0.0), np.where(ok, df, 1.0), ok))
        noisy = items["excluded_noise"].isna().to_numpy() & items["sigma2"].notna().to_numpy()
        s2 = items["sigma2"].to_numpy(dtype=float)[noisy]
        s_df = (items["n_noise"] - items["n_noise_checkpoints"]).to_numpy(dtype=float)[noisy]
        s_ok = s_df > 0
        s_df = np.where(s_ok, s_df, 1.0)
        impr_tails = B.Tails(int(kept.sum()), self.n_boot, self.ci_level)
        noise_tails = B.Tails(int(noisy.sum()), self.n_boot, self.ci_level)
        for lo in range(0, self.n_boot, B.BLOCK):
            b = min(lo + B.BLOCK, self.n_boot) - lo
            if kept.any():
                cost = np.full((int(kept.sum()), b), np.inf, dtype=np.float32)
                for k, slope, se, df, ok in axes:
                    reps = slope[:, None] + se[:, None] * rng.standard_t(df[:, None], size=(len(slope), b))
                    reps[~ok] = np.nan
                    axis_cost = np.full(reps.shape, np.inf, dtype=np.float32)
                    np.divide(k, reps, out=axis_cost, where=reps > 0, casting="unsafe")
                    cost = np.fmin(cost, axis_cost)
                impr_tails.add(B.ranks_of(cost, descending=False))
            if noisy.any():
                reps = s_df[:, None] * s2[:, None] / rng.chisquare(s_df[:, None], size=(len(s2), b))
                reps[~s_ok] = np.nan
                noise_tails.add(B.ranks_of(reps, descending=True))
        for col in ("improvability_rank", "improvability_rank_lo", "improvability_rank_hi",
                    "noise_rank", "noise_rank_lo", "noise_rank_hi"):  # fmt: skip
            items[col] = np.nan
        if kept.any():
            point = items["marginal_cost"].to_numpy(dtype=float)[kept]
            items.loc[kept, "improvability_rank"] = pd.Series(point).rank(method="min").to_numpy()
            items.loc[kept, "improvability_rank_lo"], items.loc[kept, "improvability_rank_hi"] = impr_tails.interval()
        if noisy.any():
            items.loc[noisy, "noise_rank"] = pd.Series(-s2).rank(method="min").to_numpy()
            items.loc[noisy, "noise_rank_lo"], items.loc[noisy, "noise_rank_hi"] = noise_tails.interval()

    def _bootstrap_improvability(self, items: pd.DataFrame, obs: pd.DataFrame, rng: np.random.Generator) -> None:
        """Slope CIs per axis and improvability-rank CIs (rank by the replicate's cheapest cost)."""
        kappa = cost_scenario(self.cost_scenario)
        index = pd.Index(items["item_id"])
        designs = {axis: B.residual_designs(obs[obs["axis"] == axis], self.n_boot, rng) for axis in AXES}
        kept = items["excluded_improvability"].isna().to_numpy()
        tails = {axis: [B.Tails(len(d.ids), self.n_boot, self.ci_level) for d in designs[axis]] for axis in AXES}
        positions = {axis: [index.get_indexer(d.ids) for d in designs[axis]] for axis in AXES}
        rank_tails = B.Tails(int(kept.sum()), self.n_boot, self.ci_level)
        for lo in range(0, self.n_boot, B.BLOCK):
            hi = min(lo + B.BLOCK, self.n_boot)
            cost = np.full((len(items), hi - lo), np.inf, dtype=np.float32)
            for axis in AXES:
                for design, tail, pos in zip(designs[axis], tails[axis], positions[axis], strict=True):
                    reps = design.replicates(lo, hi)
                    tail.add(reps)
                    axis_cost = np.full(reps.shape, np.inf, dtype=np.float32)
                    np.divide(kappa[axis], reps, out=axis_cost, where=reps > 0, casting="unsafe")
                    cost[pos] = np.fmin(cost[pos], axis_cost)
            if kept.any():
                rank_tails.add(B.ranks_of(cost[kept], descending=False))
        for axis in AXES:
            lo_col = np.full(len(items), np.nan)
            hi_col = np.full(len(items), np.nan)
            for tail, pos in zip(tails[axis], positions[axis], strict=True):
                lo_col[pos], hi_col[pos] = tail.interval()
            items[f"slope_{axis.lower()}_lo"], items[f"slope_{axis.lower()}_hi"] = lo_col, hi_col
        point = items["marginal_cost"].to_numpy(dtype=float)
        for col in ("improvability_rank", "improvability_rank_lo", "improvability_rank_hi"):
            items[col] = np.nan
        if kept.any():
            items.loc[kept, "improvability_rank"] = pd.Series(point[kept]).rank(method="min").to_numpy()
            items.loc[kept, "improvability_rank_lo"], items.loc[kept, "improvability_rank_hi"] = rank_tails.interval()

    def _bootstrap_noise(self, items: pd.DataFrame, seed_obs: pd.DataFrame, rng: np.random.Generator) -> None:
        """sigma2 CIs and noise-rank CIs (rank 1 = noisiest) from the across-seed bootstrap."""
        index = pd.Index(items["item_id"])
        panel = B.seed_panel(seed_obs, self.n_boot, rng)
        lo_col = np.full(len(items), np.nan)
        hi_col = np.full(len(items), np.nan)
        for col in ("noise_rank", "noise_rank_lo", "noise_rank_hi"):
            items[col] = np.nan
        if panel is None or not len(panel.ids):
            items["sigma2_lo"], items["sigma2_hi"] = lo_col, hi_col
            return
        pos = index.get_indexer(panel.ids)
        kept_panel = items["excluded_noise"].isna().to_numpy()[pos]
        tails = B.Tails(len(pos), self.n_boot, self.ci_level)
        rank_tails = B.Tails(int(kept_panel.sum()), self.n_boot, self.ci_level)
        for lo in range(0, self.n_boot, B.BLOCK):
            reps = panel.replicates(lo, min(lo + B.BLOCK, self.n_boot))
            tails.add(reps)
            if kept_panel.any():
                rank_tails.add(B.ranks_of(reps[kept_panel], descending=True))
        lo_col[pos], hi_col[pos] = tails.interval()
        items["sigma2_lo"], items["sigma2_hi"] = lo_col, hi_col
        if kept_panel.any():
            rows = pos[kept_panel]
            sigma = items["sigma2"].to_numpy(dtype=float)[rows]
            items.loc[rows, "noise_rank"] = pd.Series(-sigma).rank(method="min").to_numpy()
            items.loc[rows, "noise_rank_lo"], items.loc[rows, "noise_rank_hi"] = rank_tails.interval()


def analytic_intervals(items: pd.DataFrame, level: float) -> None:
    """Replace the percentile intervals by the normal-model ones (in place).

    Slopes: slope +/- t_{n-2, (1+level)/2} se (n checkpoints on the axis). Seed variance:
    [df s2 / chi2_{df, (1+level)/2}, df s2 / chi2_{df, (1-level)/2}] with df = N - |PP|.
    """
    upper = (1 + level) / 2
    for axis in AXES:
        a = axis.lower()
        n = items[f"n_{a}"].to_numpy(dtype=float)
        df = np.where(n > 2, n - 2, np.nan)
        half = stats.t.ppf(upper, df) * items[f"se_{a}"].to_numpy(dtype=float)
        slope = items[f"slope_{a}"].to_numpy(dtype=float)
        items[f"slope_{a}_lo"], items[f"slope_{a}_hi"] = slope - half, slope + half
    df = (items["n_noise"] - items["n_noise_checkpoints"]).to_numpy(dtype=float)
    df = np.where(df > 0, df, np.nan)
    s2 = items["sigma2"].to_numpy(dtype=float)
    items["sigma2_lo"] = df * s2 / stats.chi2.ppf(upper, df)
    items["sigma2_hi"] = df * s2 / stats.chi2.ppf(1 - upper, df)


def benchmark_summary(items: pd.DataFrame) -> pd.DataFrame:
    """Paper 003's Table 4 per benchmark (medians, as the paper), plus the cheapest-axis shares."""
    rows = []
    for bench, g in items.groupby("benchmark", sort=True):
        kept = g[g["excluded_noise"].isna()]
        impr = g[g["excluded_improvability"].isna()]
        shares = impr["cheapest_axis"].value_counts(normalize=True)
        won = kept.dropna(subset=["margin_median", "z"])
        rows.append(
            {
                "benchmark": bench,
                "n_items": len(g),
                "n_noise_items": len(kept),
                "p_hat": kept["p_hat"].median() if len(kept) else np.nan,
                "sigma_hat": np.sqrt(kept["sigma2"]).median() if len(kept) else np.nan,
                "z": kept["z"].median() if len(kept) else np.nan,
                "n_won": len(won),
                "margin": won["margin_median"].median() if len(won) else np.nan,
                "r_margin_z": _pearson(won["margin_median"], won["z"]),
                "cheapest_pt": shares.get("PT", 0.0) if len(impr) else np.nan,
                "cheapest_sft": shares.get("SFT", 0.0) if len(impr) else np.nan,
                "cheapest_rl": shares.get("RL", 0.0) if len(impr) else np.nan,
            }
        )
    return pd.DataFrame(rows)


def _pearson(a: pd.Series, b: pd.Series) -> float:
    if len(a) < 3 or a.nunique() < 2 or b.nunique() < 2:
        return np.nan
    return float(np.corrcoef(a.to_numpy(dtype=float), b.to_numpy(dtype=float))[0, 1])
