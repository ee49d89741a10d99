"""Canonicalisation throughput on 10^6 synthetic score rows (target >= 10^5 rows/s).

Rows mix benchmarks, metrics and units the way the pinned sources do (proportions, percents,
explicit denominators, Elo, minutes), with 1% impossible values that must be refused. Each row
goes through the same `Canonicaliser.canonicalise` the loader uses. Usage:
`.venv/bin/python benchmarks/curation.py [N]`.
"""

from __future__ import annotations

import random
import sys
import time

from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore
from evalhouse.curation.registry import load_registry

TARGET = 100_000
KINDS = [
    ("gpqa_diamond", "accuracy", "proportion", 0, 1, 1.0),
    ("aider_polyglot", "pass_rate", "percent", 0, 100, 100.0),
    ("mmlu", "exact_match", "proportion", 0, 1, 1.0),
    ("cad_eval", "pass_rate", "x/50", 0, 50, 50.0),
    ("webdev_arena", "elo", "elo", "-Infinity", "Infinity", 1500.0),
    ("metr_time_horizons", "time_horizon", "minutes", 0, "Infinity", 300.0),
    ("hle", "accuracy", "percent", 0, 100, 100.0),
]


def rows(n: int, seed: int = 0) -> list[tuple[str, dict]]:
    rng = random.Random(seed)
    out = []
    for i in range(n):
        bench, metric, unit, lo, hi, scale = KINDS[i % len(KINDS)]
        value = rng.random() * scale
        if i % 100 == 0 and metric not in ("elo", "time_horizon"):
            value = scale * 1.7  # impossible: must be refused, not clamped
            hi = scale * 2
        out.append(
            (
                "epoch-benchmarks",
                {
                    "evaluation_name": f"epoch-benchmarks.{bench}",
                    "source_data": {"dataset_name": bench, "source_type": "url", "url": ["https://epoch.ai"]},
                    "metric_config": {
                        "metric_id": metric,
                        "metric_unit": unit,
                        "lower_is_better": False,
                        "score_type": "continuous",
                        "min_score": lo,
                        "max_score": hi,
                    },
                    "score_details": {"score": value},
                },
            )
        )
    return out


def main(n: int = 1_000_000) -> None:
    data = rows(n)
    canon = Canonicaliser(load_registry())
    t0 = time.perf_counter()
    ok = refused = 0
    for source, result in data:
        if isinstance(canon.canonicalise(result, source_key=source), CanonicalScore):
            ok += 1
        else:
            refused += 1
    elapsed = time.perf_counter() - t0
    rate = n / elapsed
    print(f"canonicalised {n:,} rows ({ok:,} canonical, {refused:,} refused) in {elapsed:.2f} s")
    print(f"throughput: {rate:,.0f} rows/s; target {TARGET:,} rows/s; ratio {rate / TARGET:.2f}x")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000)
