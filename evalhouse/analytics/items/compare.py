"""The audit's comparisons (paper 003): Pareto frontier and dominance counts in the welfare plane,
Mann-Whitney on cost by cheapest axis, Spearman, first-order stochastic dominance with a cluster
bootstrap, and ranking agreement (nDCG@5 linear and binary, P@4, R@4, Jaccard@5, RBO p = 0.7).
"""

from __future__ import annotations

from collections.abc import Sequence
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

CHUNK = 2048


def pareto(frame: pd.DataFrame, x: str = "w_auto", y: str = "w_aug") -> pd.DataFrame:
    """``on_frontier`` and ``dominated_by`` (how many items are >= on both and > on one)."""
    xs, ys = frame[x].to_numpy(float), frame[y].to_numpy(float)
    counts = np.zeros(len(xs), dtype=np.int64)
    for lo in range(0, len(xs), CHUNK):
        bx, by = xs[lo : lo + CHUNK, None], ys[lo : lo + CHUNK, None]
        ge = (xs[None, :] >= bx) & (ys[None, :] >= by)
        gt = (xs[None, :] > bx) | (ys[None, :] > by)
        counts[lo : lo + CHUNK] = (ge & gt).sum(axis=1)
    return frame.assign(dominated_by=counts, on_frontier=counts == 0)


def mann_whitney_by_group(frame: pd.DataFrame, value: str, group: str) -> list[dict[str, Any]]:
    """Two-sided Mann-Whitney U for every pair of groups (e.g. cost by cheapest axis)."""
    out = []
    groups = {g: v[value].dropna().to_numpy() for g, v in frame.groupby(group)}
    for a, b in combinations(sorted(groups), 2):
        if len(groups[a]) and len(groups[b]):
            res = stats.mannwhitneyu(groups[a], groups[b], alternative="two-sided")
            out.append({"a": a, "b": b, "u": float(res.statistic), "p": float(res.pvalue),
                        "median_a": float(np.median(groups[a])), "median_b": float(np.median(groups[b])),
                        "median_ratio": float(np.median(groups[a]) / np.median(groups[b]))})  # fmt: skip
    return out


def spearman(a: Sequence[float], b: Sequence[float]) -> float:
    return float(stats.spearmanr(a, b, nan_policy="omit").statistic)


def fosd(  # noqa: PLR0913 - the test's parameters, keyword-only
    a: pd.DataFrame, b: pd.DataFrame, value: str, cluster: str, *, n_boot: int = 1000, random_state: int = 0
) -> dict[str, Any]:
    """Does ``b`` first-order stochastically dominate ``a`` (F_b <= F_a everywhere)?

    Statistic: max_t (F_b(t) - F_a(t)) on the pooled values (<= 0 means dominance). The cluster
    bootstrap resamples whole clusters (e.g. benchmarks or subjects) within each group and reports
    the share of replicates in which dominance holds and the statistic's 95% interval.
    """
    rng = np.random.default_rng(random_state)
    grid = np.sort(pd.concat([a[value], b[value]]).dropna().unique())

    def stat(xa: np.ndarray, xb: np.ndarray) -> float:
        fa = np.searchsorted(np.sort(xa), grid, side="right") / len(xa)
        fb = np.searchsorted(np.sort(xb), grid, side="right") / len(xb)
        return float(np.max(fb - fa))

    def resample(frame: pd.DataFrame) -> np.ndarray:
        groups = [g[value].dropna().to_numpy() for _, g in frame.groupby(cluster)]
        picks = rng.integers(0, len(groups), len(groups))
        return np.concatenate([groups[i] for i in picks])

    point = stat(a[value].dropna().to_numpy(), b[value].dropna().to_numpy())
    reps = np.array([stat(resample(a), resample(b)) for _ in range(n_boot)])
    return {"statistic": point, "dominates": point <= 0, "share_dominant": float(np.mean(reps <= 0)),
            "ci": [float(np.quantile(reps, 0.025)), float(np.quantile(reps, 0.975))]}  # fmt: skip


def ndcg_at_k(predicted: Sequence[Any], relevance: dict[Any, float], k: int = 5, *, binary: bool = False) -> float:
    """nDCG@k of a predicted ranking against graded relevance (linear gain, or binary)."""
    gain = {key: (1.0 if v > 0 else 0.0) if binary else float(v) for key, v in relevance.items()}
    dcg = sum(gain.get(item, 0.0) / np.log2(i + 2) for i, item in enumerate(predicted[:k]))
    ideal = sorted(gain.values(), reverse=True)[:k]
    idcg = sum(g / np.log2(i + 2) for i, g in enumerate(ideal))
    return float(dcg / idcg) if idcg > 0 else 0.0


def precision_at_k(predicted: Sequence[Any], truth: Sequence[Any], k: int = 4) -> float:
    return len(set(predicted[:k]) & set(truth)) / k


def recall_at_k(predicted: Sequence[Any], truth: Sequence[Any], k: int = 4) -> float:
    return len(set(predicted[:k]) & set(truth)) / len(set(truth)) if truth else 0.0


def jaccard_at_k(a: Sequence[Any], b: Sequence[Any], k: int = 5) -> float:
    sa, sb = set(a[:k]), set(b[:k])
    return len(sa & sb) / len(sa | sb) if sa | sb else 1.0


def rbo(a: Sequence[Any], b: Sequence[Any], p: float = 0.7) -> float:
    """Rank-biased overlap (Webber et al. 2010), extrapolated form for finite lists."""
    k = max(len(a), len(b))
    if k == 0:
        return 1.0
    seen_a, seen_b, overlap, total = set(), set(), 0, 0.0
    for d in range(1, k + 1):
        if d <= len(a):
            x = a[d - 1]
            overlap += x in seen_b
            seen_a.add(x)
        if d <= len(b):
            y = b[d - 1]
            overlap += y in seen_a
            seen_b.add(y)
        total += (overlap / d) * p**d
    return float((overlap / k) * p**k + (1 - p) / p * total)


def agreement(a: Sequence[Any], b: Sequence[Any]) -> dict[str, float]:
    """All of paper 003's agreement metrics between two rankings (b is the reference)."""
    rel = {item: len(b) - i for i, item in enumerate(b[:5])}
    return {
        "ndcg5_linear": ndcg_at_k(a, rel, 5),
        "ndcg5_binary": ndcg_at_k(a, rel, 5, binary=True),
        "p4": precision_at_k(a, b[:4], 4),
        "r4": recall_at_k(a, b[:4], 4),
        "jaccard5": jaccard_at_k(a, b, 5),
        "rbo": rbo(a, b, 0.7),
    }
