"""Curation: canonicalisation throughput, and where sources meet on the pinned corpus.

1. Throughput on 10^6 synthetic score rows (target >= 10^5 rows/s). Rows mix benchmarks, metrics
   and units the way the pinned sources do (proportions, percents, explicit denominators, Elo,
   minutes), with 1% impossible values that must be refused. Each row goes through the same
   `Canonicaliser.canonicalise` the loader uses.
2. Cross-source cells on the pinned corpus as a user builds it (every verified source refreshed
   from a mirror of ../shared — Epoch AI, Artificial Analysis, LiveBench, LMArena, HELM, aider,
   τ²-bench and the rest — the legacy Every Eval Ever datastore, the shared model cards): canonical
   cells, cells whose candidates come from two sources or more (per pair of sources), and Artificial
   Analysis against Epoch on GPQA Diamond — base models both report, configurations both report,
   how many of those share a cell and which met only through a date or alias link — beside the
   figures of the first merge of the identity and cell work and those before the setup policy (the
   harness in the cell key: 0 cells of two sources, 0 of 22 same-configuration pairs in one cell).
   Skipped, saying so, without ../shared.

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


#: Figures on the pinned corpus before: ``issue`` the setup policy (the harness in the cell key),
#: ``merged`` the first merge of the identity and cell work (same corpus, same code path as here).
BASELINE = {
    "issue": {"cells_with_several_sources": 0, "gpqa_pairs_in_one_cell": 0, "gpqa_pairs": 22},
    "merged": {
        "cells_with_several_sources": 203,
        "gpqa_pairs_in_one_cell": 59,
        "gpqa_pairs": 59,
        "source_pairs": {
            ("aider-polyglot", "epoch-benchmarks"): 138,
            ("artificial-analysis", "epoch-benchmarks"): 59,
            ("eee-hfopenllm-v2", "open-llm-leaderboard"): 6,
        },
    },
}
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
#: AA/Epoch GPQA Diamond configurations in one cell that an identity link made one: AA's name
#: states no day ("GPT-4.1", "GPT-4o (Aug '24)") and a date or alias link gave it Epoch's.
LINKED_PAIRS = """
SELECT list(DISTINCT json_extract_string(d.detail, '$.model_name') || ' -> ' || v.config_id ORDER BY 1)
FROM v_scores_canonical v
JOIN curation_decision d ON d.kind = 'identity_link'
 AND json_extract_string(d.subject, '$.source_key') = 'artificial-analysis'
 AND json_extract_string(d.subject, '$.config_id') = v.config_id
 AND json_extract_string(d.detail, '$.step') IN ('date', 'alias')
WHERE v.benchmark_id = 'gpqa_diamond' AND list_contains(v.candidate_sources, 'artificial-analysis')
  AND list_contains(v.candidate_sources, 'epoch-benchmarks')
"""


def build_corpus(shared: Path, root: Path) -> Path:
    """The pinned corpus as a user builds it: every verified source refreshed from a mirror of
    ../shared (``make mirror && make run``), the legacy Every Eval Ever datastore imported, each
    shared model card ingested. Returns the warehouse path."""
    from evalhouse.ingest.pinned import mirror_from_shared  # part 2 only: no pipeline for part 1
    from evalhouse.pipeline.import_eee import import_tree
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.pipeline.refresh import RefreshOptions, refresh
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    mirror_from_shared(shared, root / "mirror")
    store = RawStore(root / "w.raw")
    with Warehouse.open(root / "w.duckdb") as wh:
        refresh(wh, store, None, RefreshOptions(mirror=str(root / "mirror")))
        import_tree(wh, shared / "datasets" / "eee-datastore-legacy", store)
        for card in sorted((shared / "formats" / "hf-model-cards").glob("*.README.md")):
            ingest_file(wh, store, "model-cards", str(card))
    return root / "w.duckdb"


def cross_source(shared: Path) -> None:
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.stats import stats

    if not (shared / "datasets").is_dir():
        print(f"cross-source cells: skipped, the pinned corpus is not at {shared}")
        return
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        db = build_corpus(shared, Path(tmp))
        built = time.perf_counter() - t0
        with Warehouse.open(db) as wh:
            data = stats(wh)
            bases, configs, met = wh.con.execute(GPQA_PAIRS).fetchone()
            linked = wh.con.execute(LINKED_PAIRS).fetchone()[0] or []
    several, cells = data["cells_with_several_sources"], data["canonical_cells"]
    issue, merged = BASELINE["issue"], BASELINE["merged"]
    print(f"pinned corpus loaded in {built:.1f} s: {data['scores']:,} scores, {cells:,} canonical cells")
    print(
        f"cells with candidates from two sources or more: {several:,} (before: {merged['cells_with_several_sources']}"
        f" on the first merge, {issue['cells_with_several_sources']} before the setup policy; ratio "
        f"{several / merged['cells_with_several_sources']:.2f}x)"
    )
    shown = set()
    for pair in data["source_pairs"]:
        key = tuple(pair["sources"])
        shown.add(key)
        before = merged["source_pairs"].get(key, 0)
        print(f"  {' + '.join(key)}: {pair['cells']:,} cells (before {before}), {pair['cells_disagreeing']:,} disagree")
    for key, before in merged["source_pairs"].items():
        if key not in shown:
            print(f"  {' + '.join(key)}: 0 cells (before {before})")
    share = met / configs if configs else 0.0
    print(
        f"GPQA Diamond, Artificial Analysis and Epoch AI: {bases} base models both report, {configs} configurations "
        f"both report, {met} of them in one cell ({share:.0%}; before: {merged['gpqa_pairs_in_one_cell']} of "
        f"{merged['gpqa_pairs']} on the first merge, {issue['gpqa_pairs_in_one_cell']} of {issue['gpqa_pairs']} "
        "before the setup policy)"
    )
    print(f"  {len(linked)} of them one configuration only through a date or alias link:")
    for text in linked:
        print(f"    {text}")


if __name__ == "__main__":
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    if n:
        main(n)
    cross_source(SHARED)
