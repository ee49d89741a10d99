"""Curation: canonicalisation throughput, and where sources meet on the pinned corpus.

1. Throughput on 10^6 synthetic score rows (target >= 10^5 rows/s). Rows mix benchmarks, metrics
   and units the way the pinned sources do (proportions, percents, explicit denominators, Elo,
   minutes), with 1% impossible values that must be refused. Each row goes through the same
   `Canonicaliser.canonicalise` the loader uses.
2. Cross-source cells on the pinned corpus (Epoch AI + Artificial Analysis through the refresh from
   a mirror of ../shared, the legacy Every Eval Ever datastore, the shared model cards): canonical
   cells, cells whose candidates come from two sources or more (per pair of sources), and Artificial
   Analysis against Epoch on GPQA Diamond — base models both report, configurations both report,
   and how many of those share a cell — beside the baseline before the setup policy (the harness
   in the cell key: 0 cells of two sources, 0 of 22 same-configuration pairs in one cell). Skipped,
   saying so, without ../shared.

Usage: `.venv/bin/python benchmarks/curation.py [N]` (N synthetic rows; 0 skips part 1).
"""

from __future__ import annotations

import random
import sys
import tempfile
import time
from pathlib import Path

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


#: Before the setup policy (the issue's figures on the same corpus): cells of two sources or more,
#: and AA/Epoch GPQA Diamond configurations in one cell out of those both report.
BASELINE = {"cells_with_several_sources": 0, "same_configuration_pairs_in_one_cell": 0}
SHARED = Path(__file__).resolve().parents[2] / "shared"
GPQA_PAIRS = """
WITH rows AS (
    SELECT s.source_key, s.config_id, mc.base_model_id
    FROM score s JOIN model_config mc USING (config_id)
    WHERE s.benchmark_id = 'gpqa_diamond' AND s.source_key IN ('artificial-analysis', 'epoch-benchmarks')
)
SELECT
    (SELECT count(*) FROM (SELECT base_model_id FROM rows GROUP BY 1 HAVING count(DISTINCT source_key) = 2)),
    (SELECT count(*) FROM (SELECT config_id FROM rows GROUP BY 1 HAVING count(DISTINCT source_key) = 2)),
    (SELECT count(DISTINCT config_id) FROM v_scores_canonical
      WHERE benchmark_id = 'gpqa_diamond' AND list_contains(candidate_sources, 'artificial-analysis')
        AND list_contains(candidate_sources, 'epoch-benchmarks'))
"""


def cross_source(shared: Path) -> None:
    from evalhouse.ingest.pinned import mirror_from_shared  # part 2 only: no pipeline for part 1
    from evalhouse.pipeline.import_eee import import_tree
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.pipeline.refresh import RefreshOptions, refresh
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw_store import RawStore
    from evalhouse.warehouse.stats import stats

    if not (shared / "datasets").is_dir():
        print(f"cross-source cells: skipped, the pinned corpus is not at {shared}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        root = Path(tmp)
        mirror_from_shared(shared, root / "mirror")
        store = RawStore(root / "w.raw")
        t0 = time.perf_counter()
        with Warehouse.open(root / "w.duckdb") as wh:
            refresh(wh, store, ["epoch-benchmarks", "artificial-analysis"], RefreshOptions(mirror=str(root / "mirror")))
            import_tree(wh, shared / "datasets" / "eee-datastore-legacy", store)
            for card in sorted((shared / "formats" / "hf-model-cards").glob("*.README.md")):
                ingest_file(wh, store, "model-cards", str(card))
            built = time.perf_counter() - t0
            data = stats(wh)
            bases, configs, met = wh.con.execute(GPQA_PAIRS).fetchone()
    several = data["cells_with_several_sources"]
    cells = data["canonical_cells"]
    print(f"pinned corpus loaded in {built:.1f} s: {data['scores']:,} scores, {cells:,} canonical cells")
    baseline = BASELINE["cells_with_several_sources"]
    print(f"cells with candidates from two sources or more: {several:,} (baseline {baseline})")
    for pair in data["source_pairs"]:
        print(f"  {' + '.join(pair['sources'])}: {pair['cells']:,} cells, {pair['cells_disagreeing']:,} disagree")
    share = met / configs if configs else 0.0
    print(
        f"GPQA Diamond, Artificial Analysis and Epoch AI: {bases} base models both report, {configs} configurations "
        f"both report, {met} of them in one cell ({share:.0%}; baseline "
        f"{BASELINE['same_configuration_pairs_in_one_cell']} of 22, 0%)"
    )


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    if n:
        main(n)
    cross_source(SHARED)
