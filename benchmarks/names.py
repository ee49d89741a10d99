"""Model identity: the share of hand-labelled real names resolved right, per source, and the CPU
microseconds per distinct model name (target <= 100 us).

First, the labelled names of ``tests/fixtures/model-names/labels.csv`` (real names from the aider
polyglot leaderboard, LiveBench, LMArena, Artificial Analysis, Epoch and the legacy EEE datastore,
labelled by hand with their configuration and base model) are resolved as the loader resolves them,
and the share right is printed per source and overall (acceptance: >= 95%), with the labelled
cross-source pairs of ``tests/fixtures/model-pairs/config_pairs.csv`` (same configuration or not).
And the cost:

Every loaded record's ``model_info`` goes through ``curation.identity.resolve_model``; the real
EEE datastore has about one record per model, so a load pays the full cost once per record. This
resolves, each once, the distinct ``model_info`` of

* the generated datastore tree of ``_corpus.py`` (22,000 records, one model each);
* the legacy EEE datastore in ../shared (2,792 records, resolved by repository id), and the
  Epoch hub export and the Artificial Analysis snapshot as their sources parse them (by display
  name), when ../shared (or $EVALHOUSE_SHARED) is there.

and prints CPU microseconds per name for each set, best of ``--repeat`` runs, each in a forked
process whose caches start empty, with the cycle collector paused as the loader pauses it. A
second pass over the same names shows the cached cost.
Usage: `.venv/bin/python benchmarks/names.py [--repeat N]`.
"""

from __future__ import annotations

import argparse
import gc
import hashlib
import json
import os
import random
import time
from pathlib import Path
from typing import Any

from _corpus import record

from evalhouse.curation.identity import resolve_model
from evalhouse.curation.registry import Registry, load_registry

TARGET_US = 100.0
REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
LEGACY = SHARED / "datasets" / "eee-datastore-legacy" / "data"

#: (model_info, source key, which model_info field names the model)
Case = tuple[dict[str, Any], str, str]


def corpus_cases(n: int = 22_000) -> list[Case]:
    rng = random.Random(0)
    return [(record(i, 1, rng, one_model_each=True)["model_info"], "eee-bench-0", "id") for i in range(n)]


def legacy_cases() -> list[Case]:
    from evalhouse.pipeline.import_eee import collection_source_key
    from evalhouse.schema.eee_legacy import migrate_legacy

    out = []
    for path in sorted(LEGACY.glob("*/**/*.json")):
        collection = path.relative_to(LEGACY).parts[0]
        rec, _ = migrate_legacy(json.loads(path.read_bytes()), collection)
        out.append((rec["model_info"], collection_source_key(collection), "id"))
    return out


def pinned_cases() -> dict[str, list[Case]]:
    """The model_info of every record the pinned Epoch and Artificial Analysis payloads parse into."""
    import datetime as dt

    from evalhouse.ingest.catalog import get_source
    from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
    from evalhouse.ingest.source import FetchMeta, SourceState
    from evalhouse.schema.records import ParsedRecord

    bodies = {EPOCH_URL: epoch_zip(SHARED / EPOCH_DIR), AA_PAGE_URL: (SHARED / AA_CSV).read_bytes()}
    when = dt.datetime(2026, 7, 6, tzinfo=dt.UTC)
    out = {}
    for key in ("epoch-benchmarks", "artificial-analysis"):
        module = get_source(key)
        (request,) = module.plan(SourceState())
        body = bodies[request.url]
        meta = FetchMeta(key, request.url, hashlib.sha256(body).hexdigest(), when, None, request.label)
        records = [i.record for i in module.parse(body, meta=meta) if isinstance(i, ParsedRecord)]
        how = module.SOURCE.identity_from
        out[key] = [(r["model_info"], key, how) for r in records]
    return out


def distinct(cases: list[Case]) -> list[Case]:
    seen: dict[str, Case] = {}
    for case in cases:
        seen.setdefault(json.dumps(case, sort_keys=True, default=str), case)
    return list(seen.values())


def cpu_us(cases: list[Case], registry: Registry) -> float:
    t0 = time.process_time()
    for info, source, how in cases:
        resolve_model(info, source, registry, identity_from=how)  # type: ignore[arg-type]
    return (time.process_time() - t0) / len(cases) * 1e6


def measure(cases: list[Case], registry: Registry) -> tuple[float, float]:
    """(cold, cached) CPU microseconds per name, in a forked child: every cache starts empty."""
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:  # the child: resolve each name once, then again from the caches
        os.close(read)
        gc.disable()  # as the loader does while it loads
        cold = cpu_us(cases, registry)
        os.write(write, json.dumps([cold, cpu_us(cases, registry)]).encode())
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as fh:
        out = json.loads(fh.read())
    os.waitpid(pid, 0)
    return out[0], out[1]


#: The share of labelled names that must resolve right (configuration and base model).
TARGET_RIGHT = 0.95


def labelled(registry: Registry) -> None:
    """Print the share of hand-labelled real names resolved right, per source and overall, and
    of labelled cross-source pairs kept together or apart as labelled."""
    import sys

    sys.path.insert(0, str(REPO / "tests"))
    from model_pairs import config_pairs
    from name_labels import labels as read_labels
    from name_labels import resolve_all, score

    outcomes = resolve_all(read_labels(), registry)
    for source, (right, total) in sorted(score(outcomes).items(), key=lambda kv: (kv[0] == "overall", kv[0])):
        print(f"{source:>20}: {right:>4} of {total:>4} labelled names right  {right / total:6.1%}")
    pairs = config_pairs()
    wrong = merged = 0
    for pair in pairs:
        same = pair.a.resolve(registry).config_id == pair.b.resolve(registry).config_id
        wrong += same != pair.same
        merged += same and not pair.same
    print(
        f"{'cross-source pairs':>20}: {len(pairs) - wrong:>4} of {len(pairs):>4} right  "
        f"{1 - wrong / len(pairs):6.1%}  ({merged} labelled different merged)"
    )
    print(f"target: >= {TARGET_RIGHT:.0%} right, no pair labelled different merged")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=3, help="runs per set; the best is printed")
    args = parser.parse_args()
    registry = load_registry()
    sets = {"corpus (22,000)": corpus_cases()}
    if LEGACY.is_dir():
        sets["eee-legacy"] = legacy_cases()
        sets.update(pinned_cases())
    else:
        print(f"../shared not found at {SHARED}: generated names only (set EVALHOUSE_SHARED)")
    for label, found in sets.items():
        cases = distinct(found)
        runs = [measure(cases, registry) for _ in range(args.repeat)]
        cold, cached = min(r[0] for r in runs), min(r[1] for r in runs)
        print(f"{label:>20}: {len(cases):>6,} distinct  {cold:8.1f} us/name  (cached {cached:.1f} us)")
    print(f"target: <= {TARGET_US:.0f} us per distinct name")
    labelled(registry)  # after the timings: its resolutions would warm the caches they start without


if __name__ == "__main__":
    main()
