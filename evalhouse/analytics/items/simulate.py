"""A seeded generator of training panels with known ground truth (paper 003's two suites).

Real item-level panels need GPU inference over dozens of checkpoints; the simulator is how the
audit is validated here. It draws, per item: a base probability, a true slope per training axis
(PT tokens, SFT pairs, RL prompts; a share of items get a negative slope on every axis), and a
true seed standard deviation. Two suites are generated, like the paper's:

* ``<prefix>-axes`` (EvoLM-like): one seed, checkpoints varying one axis at a time —
  p = base + beta_k * (D - D_0) + noise, noise ~ N(0, noise_sd);
* ``<prefix>-seeds`` (PolyPythias-like): S seeds x K checkpoints on PT —
  p = base + small trend + sigma_i * N(0, 1).

Probabilities are clipped to [0, 1]. The truth (slopes, sigma^2, difficulty) comes back with the
panel so tests and benchmarks can check recovery. Output is an :class:`ItemBatch` of
dictionary-encoded Arrow columns, built with numpy only.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass, field
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from evalhouse.schema import items as S

#: Effort grids per axis. Chosen so that kappa_k x (effort range) is about $16 on every axis under
#: the default cost scenario, so which axis is cheapest depends on the item (a simulator choice,
#: not a fact about real training runs).
AXIS_EFFORTS = {
    "PT": ("tokens", np.array([1.0e8, 2.0e8, 3.0e8])),
    "SFT": ("sft_pairs", np.linspace(1.0e4, 9.0e4, 9)),
    "RL": ("rl_prompts", np.linspace(4.0e3, 3.6e4, 9)),
}
DEFAULT_BENCHMARKS = ("hellaswag", "piqa", "arc_challenge", "mathqa", "mmlu", "csqa")


@dataclass(frozen=True)
class PanelSpec:
    n_items: int = 2000
    benchmarks: tuple[str, ...] = DEFAULT_BENCHMARKS
    seeds: int = 8
    seed_checkpoints: int = 10
    noise_sd: float = 0.02  # the default noise level of the axes suite
    negative_share: float = 0.1
    random_state: int = 0
    prefix: str = "sim"
    total_gain: tuple[float, float] = (0.0, 0.25)  # true gain over each axis's effort range
    sigma_range: tuple[float, float] = (0.01, 0.12)  # true seed sd

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@dataclass
class SimulatedPanel:
    spec: PanelSpec
    batch: S.ItemBatch
    truth: pd.DataFrame  # one row per item: item_id, benchmark, base, slope_pt/sft/rl, sigma2
    suites: dict[str, str] = field(default_factory=dict)  # role -> suite name


def _dict(codes: np.ndarray, values: list[str]) -> pa.DictionaryArray:
    return pa.DictionaryArray.from_arrays(
        pa.array(codes.astype(np.int32, copy=False)), pa.array(values, type=pa.string())
    )


def simulate_panel(spec: PanelSpec | None = None) -> SimulatedPanel:
    """A panel drawn from ``spec`` (same spec, same panel, bit for bit)."""
    spec = spec or PanelSpec()
    rng = np.random.default_rng(spec.random_state)
    n = spec.n_items
    bench_of = rng.integers(0, len(spec.benchmarks), n)
    source_ids = [f"q{i:06d}" for i in range(n)]
    item_ids = [S.item_id(spec.benchmarks[b], s) for b, s in zip(bench_of, source_ids, strict=True)]
    base = rng.uniform(0.15, 0.75, n)
    sigma = rng.uniform(*spec.sigma_range, n)
    negative = rng.random(n) < spec.negative_share
    slopes: dict[str, np.ndarray] = {}
    for axis, (_unit, effort) in AXIS_EFFORTS.items():
        gain = rng.uniform(*spec.total_gain, n)
        gain = np.where(negative, -rng.uniform(0.01, 0.08, n), gain)
        slopes[axis] = gain / (effort[-1] - effort[0])
    axes_suite, seeds_suite = f"{spec.prefix}-axes", f"{spec.prefix}-seeds"
    ckpt_rows: list[dict[str, Any]] = []
    parts: list[tuple[np.ndarray, int, np.ndarray, int]] = []  # (p matrix items x ckpts, first ckpt, seeds)
    for axis, (unit, effort) in AXIS_EFFORTS.items():
        first = len(ckpt_rows)
        for j, d in enumerate(effort):
            ckpt_rows.append(
                {
                    "suite": axes_suite,
                    "checkpoint": f"{axis.lower()}-{j}",
                    "seed": 0,
                    "axis": axis,
                    "effort": float(d),
                    "effort_unit": unit,
                    "model": f"{spec.prefix}-4b",
                }
            )
        mean = base[:, None] + slopes[axis][:, None] * (effort[None, :] - effort[0])
        p = mean + rng.normal(0.0, spec.noise_sd, mean.shape)
        parts.append((p, first, np.zeros(len(effort), np.int32), 1))
    steps = np.geomspace(1.0e3, 1.43e5, spec.seed_checkpoints)
    trend = rng.uniform(0.0, 0.1, n)
    for s in range(spec.seeds):
        first = len(ckpt_rows)
        for step in steps:
            ckpt_rows.append(
                {
                    "suite": seeds_suite,
                    "checkpoint": f"step-{int(step)}",
                    "seed": s,
                    "axis": "PT",
                    "effort": float(step) * 2.0e6,
                    "effort_unit": "tokens",
                    "model": f"{spec.prefix}-410m",
                }
            )
        frac = np.log(steps / steps[0]) / np.log(steps[-1] / steps[0])
        mean = base[:, None] + trend[:, None] * frac[None, :]
        p = mean + sigma[:, None] * rng.standard_normal(mean.shape)
        parts.append((p, first, np.full(len(steps), s, np.int32), 1))
    return _assemble(
        spec, item_ids, bench_of, source_ids, ckpt_rows, parts, base, slopes, sigma, negative, (axes_suite, seeds_suite)
    )


def _assemble(spec, item_ids, bench_of, source_ids, ckpt_rows, parts, base, slopes, sigma, negative, suites):  # noqa: PLR0913, PLR0917 - one builder of one panel's tables
    n = len(item_ids)
    for row in ckpt_rows:
        row["checkpoint_id"] = S.checkpoint_id(row["suite"], row["checkpoint"], row["seed"])
    run_ids = [S.eval_run_id("simulate-panel", spec.random_state, row["checkpoint_id"]) for row in ckpt_rows]
    item_codes, ckpt_codes, seed_col, p_col = [], [], [], []
    for p, first, seeds, _ in parts:
        k = p.shape[1]
        item_codes.append(np.repeat(np.arange(n, dtype=np.int32), k))
        ckpt_codes.append(np.tile(np.arange(first, first + k, dtype=np.int32), n))
        seed_col.append(np.tile(seeds, n))
        p_col.append(np.clip(p, 0.0, 1.0).reshape(-1))
    item_code = np.concatenate(item_codes)
    ckpt_code = np.concatenate(ckpt_codes)
    rows = len(item_code)
    responses = pa.table(
        {
            "item_id": _dict(item_code, item_ids),
            "checkpoint_id": _dict(ckpt_code, [r["checkpoint_id"] for r in ckpt_rows]),
            "eval_run_id": _dict(ckpt_code, run_ids),
            "seed": pa.array(np.concatenate(seed_col).astype(np.int32)),
            "epoch": pa.array(np.ones(rows, np.int32)),
            "p_correct": pa.array(np.concatenate(p_col)),
            "score_name": _dict(np.zeros(rows), ["p_correct"]),
            "locator": _dict(np.zeros(rows), [f"simulate-panel(random_state={spec.random_state})"]),
            "line": pa.array(np.arange(1, rows + 1, dtype=np.int64)),
        }
    )
    items = S.table(
        (
            {
                "item_id": i,
                "benchmark": spec.benchmarks[b],
                "source_item_id": s,
                "subtask": "",
                "split": "",
                "domain": "math" if spec.benchmarks[b] == "mathqa" else "general_knowledge",
            }
            for i, b, s in zip(item_ids, bench_of, source_ids, strict=True)
        ),
        S.ITEM_SCHEMA,
    )
    runs = S.table(
        (
            {
                "eval_run_id": rid,
                "harness": "simulator",
                "task": "panel",
                "checkpoint_id": row["checkpoint_id"],
                "details": S.jtext(spec.as_dict()),
                "locator": "simulate-panel",
            }
            for rid, row in zip(run_ids, ckpt_rows, strict=True)
        ),
        S.EVAL_RUN_SCHEMA,
    )
    batch = S.ItemBatch(
        items=items,
        checkpoints=S.table(ckpt_rows, S.CHECKPOINT_SCHEMA),
        eval_runs=runs,
        responses=S.conform(responses, S.RESPONSE_SCHEMA, fill=False),
        locator="simulate-panel",
        field_map={},
        lines_read=rows,
    )
    truth = pd.DataFrame(
        {
            "item_id": item_ids,
            "benchmark": [spec.benchmarks[b] for b in bench_of],
            "base": base,
            "slope_pt": slopes["PT"],
            "slope_sft": slopes["SFT"],
            "slope_rl": slopes["RL"],
            "sigma2": sigma**2,
            "negative": negative,
        }
    )
    return SimulatedPanel(spec, batch, truth, {"improvability": suites[0], "noise": suites[1]})
