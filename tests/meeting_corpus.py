"""Where sources meet, on real bytes: a copy of the real warehouse (Epoch AI + Artificial Analysis
through the real refresh) with the recorded sources that report some of the same measurements
refreshed into it over loopback (τ²-bench, aider, the Open LLM Leaderboard), the legacy Every Eval
Ever collections that Epoch quotes (HELM Classic, HELM Lite, HELM MMLU) and the Open LLM
Leaderboard model's collection rows imported, and the shared model cards ingested.

``build(real_warehouse, shared, root)`` returns the warehouse path. The legacy collections are
copied into ``root`` (only the ones the tests read: the whole datastore takes half a minute).
"""

from __future__ import annotations

import shutil
from pathlib import Path

from httpserver import serve
from realwarehouse import copy_warehouse

#: Recorded sources refreshed on top of Epoch AI and Artificial Analysis.
SOURCES = ["tau2-bench", "aider-polyglot", "open-llm-leaderboard"]
#: Legacy datastore parts imported: whole collections, and one model of the Open LLM Leaderboard's.
LEGACY = ["helm_classic", "helm_lite", "helm_mmlu", "hfopenllm_v2/0-hero"]


def build(real_warehouse: Path, shared: Path, root: Path) -> Path:
    from evalhouse.ingest.http import HttpClient
    from evalhouse.pipeline import refresh as R
    from evalhouse.pipeline.import_eee import import_tree
    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    db = copy_warehouse(real_warehouse, root / "db")
    store = RawStore(db.with_suffix(".raw"))
    legacy = root / "legacy" / "data"
    for part in LEGACY:
        shutil.copytree(shared / "datasets" / "eee-datastore-legacy" / "data" / part, legacy / part)
    mirror = real_warehouse.parent / "mirror"  # realwarehouse.build's mirror of every verified source
    with Warehouse.open(db) as wh, serve(static_dir=mirror) as srv:
        results = R.refresh(
            wh,
            store,
            SOURCES,
            R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=lambda m: HttpClient(mirror=m, trust_env=False)),
        )
        statuses = {r.source_key: r.status for r in results}
        assert set(statuses.values()) <= {"completed", "partial"}, statuses
        import_tree(wh, root / "legacy", store)
        for card in sorted((shared / "formats" / "hf-model-cards").glob("*.README.md")):
            ingest_file(wh, store, "model-cards", str(card))
    return db
