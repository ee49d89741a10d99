"""Welfare alignment of items (paper 003, primitive 1): which work an item stands for, and how much
people want that work automated or augmented.

Inputs (CSV, WORKBank's layout):

* task ratings — ``task_id, automation_desire, human_agency`` (1-5; one row per rater or per task,
  averaged per task);
* task -> GWA — ``task_id, gwa_id`` (and optionally ``gwa_title``), O*NET's mapping;
* item -> ranked GWAs — ``item_id, framing, rank, gwa_id`` (+ ``ranker``), framing ``automation``
  or ``augmentation``, rank 1-5.

Per GWA: auto(g) = share of its rated tasks with A >= 3.5 (``rule="threshold"``) or their mean A
(``rule="mean"``); aug(g) likewise from H with ``aug_threshold`` (the paper does not state it;
3.5 by default). GWAs with fewer than ``min_tasks`` rated tasks are dropped (the paper drops 3 of
27). Per item: w^auto = sum_k lambda_k auto(g_k) over its top-5 automation-framed GWAs,
lambda_k = 1/k, and w^aug likewise; both min-max normalised to [1, 5]. Quadrants split each
axis at ``split`` (3, the scale's midpoint). Loading mass: the share of the lambda-weighted GWA
loadings of a framing that falls on GWAs of each quadrant (GWA quadrants split at the GWAs'
median auto and aug).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from evalhouse.errors import InputError

QUADRANTS = ("green_light", "automation_only", "augmentation_only", "red_light")


def _read(path: Path, columns: set[str]) -> pd.DataFrame:
    try:
        frame = pd.read_csv(path)
    except FileNotFoundError:
        raise InputError(f"{path}: no such file (a welfare folder holds {WELFARE_FILES})") from None
    except (pd.errors.ParserError, pd.errors.EmptyDataError, UnicodeDecodeError, IsADirectoryError) as exc:
        raise InputError(f"{path}: not a readable CSV ({' '.join(str(exc).split())[:200]})") from exc
    missing = columns - set(frame.columns)
    if missing:
        raise InputError(f"{path}: missing column(s) {', '.join(sorted(missing))}")
    return frame


WELFARE_FILES = "task_ratings.csv, task_gwa.csv and item_gwa_rankings.csv"


def read_inputs(folder: Path) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """``task_ratings.csv``, ``task_gwa.csv`` and ``item_gwa_rankings.csv`` from one folder."""
    folder = Path(folder)
    return (
        _read(folder / "task_ratings.csv", {"task_id", "automation_desire", "human_agency"}),
        _read(folder / "task_gwa.csv", {"task_id", "gwa_id"}),
        _read(folder / "item_gwa_rankings.csv", {"item_id", "framing", "rank", "gwa_id"}),
    )


def gwa_scores(  # noqa: PLR0913 - the scoring's parameters, keyword-only
    ratings: pd.DataFrame,
    task_gwa: pd.DataFrame,
    *,
    rule: str = "threshold",
    threshold: float = 3.5,
    aug_threshold: float = 3.5,
    min_tasks: int = 5,
) -> pd.DataFrame:
    """Per GWA: n rated tasks, auto(g), aug(g) (GWAs under ``min_tasks`` dropped)."""
    if rule not in ("threshold", "mean"):
        raise InputError(f"rule must be 'threshold' or 'mean', got {rule!r}")
    per_task = ratings.groupby("task_id")[["automation_desire", "human_agency"]].mean().reset_index()
    joined = task_gwa[["task_id", "gwa_id"]].drop_duplicates().merge(per_task, on="task_id")
    if rule == "threshold":
        joined["auto"] = (joined["automation_desire"] >= threshold).astype(float)
        joined["aug"] = (joined["human_agency"] >= aug_threshold).astype(float)
    else:
        joined["auto"], joined["aug"] = joined["automation_desire"], joined["human_agency"]
    out = joined.groupby("gwa_id").agg(n_tasks=("task_id", "nunique"), auto=("auto", "mean"), aug=("aug", "mean"))
    return out[out["n_tasks"] >= min_tasks].reset_index()


def _minmax(x: pd.Series) -> pd.Series:
    lo, hi = x.min(), x.max()
    return pd.Series(3.0, index=x.index) if hi == lo else 1.0 + 4.0 * (x - lo) / (hi - lo)


def item_welfare(rankings: pd.DataFrame, gwa: pd.DataFrame, *, top: int = 5, split: float = 3.0) -> pd.DataFrame:
    """Per item: raw and [1, 5]-normalised w_auto and w_aug, and its quadrant.

    An item's GWAs that were dropped (too few rated tasks) contribute nothing; the count of
    contributing ranks is returned (``n_auto``, ``n_aug``) so a thin item is visible.
    """
    r = rankings[rankings["rank"].between(1, top)].merge(gwa[["gwa_id", "auto", "aug"]], on="gwa_id", how="left")
    r["lam"] = 1.0 / r["rank"]
    parts = {}
    for framing, col in (("automation", "auto"), ("augmentation", "aug")):
        sub = r[r["framing"] == framing].dropna(subset=[col])
        parts[f"w_{col}_raw"] = (sub["lam"] * sub[col]).groupby(sub["item_id"]).sum()
        parts[f"n_{col}"] = sub.groupby("item_id").size()
    out = pd.DataFrame(parts).fillna({"n_auto": 0, "n_aug": 0})
    out["w_auto"] = _minmax(out["w_auto_raw"])
    out["w_aug"] = _minmax(out["w_aug_raw"])
    hi_a, hi_h = out["w_auto"] >= split, out["w_aug"] >= split
    out["quadrant"] = np.select(
        [hi_a & hi_h, hi_a & ~hi_h, ~hi_a & hi_h], ["green_light", "automation_only", "augmentation_only"], "red_light"
    )
    return out.reset_index(names="item_id")


def loading_mass(rankings: pd.DataFrame, gwa: pd.DataFrame, *, framing: str = "automation", top: int = 5) -> pd.Series:
    """Share of the lambda-weighted loadings of ``framing`` on GWAs of each quadrant (sums to 1)."""
    g = gwa.copy()
    hi_a, hi_h = g["auto"] >= g["auto"].median(), g["aug"] >= g["aug"].median()
    g["quadrant"] = np.select(
        [hi_a & hi_h, hi_a & ~hi_h, ~hi_a & hi_h], ["green_light", "automation_only", "augmentation_only"], "red_light"
    )
    r = rankings[(rankings["framing"] == framing) & rankings["rank"].between(1, top)].merge(g, on="gwa_id")
    mass = (1.0 / r["rank"]).groupby(r["quadrant"]).sum()
    return (mass / mass.sum()).reindex(list(QUADRANTS), fill_value=0.0)
