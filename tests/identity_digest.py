"""A digest of what every real model name resolves to: identity, settings and the loose keys.

Recorded once (``tests/curation/data/identity_digest.json``, written by ``python
tests/identity_digest.py record [shared]`` from the repo root) and compared by
``tests/curation/test_identity_digest.py`` after every change to the name rules' code: the same
configuration, base model, family, developer, flags, setup, match key, parent and name date for
every distinct ``model_info`` of

* the Epoch hub export and the Artificial Analysis snapshot (parsed by their sources, resolved as
  the refresh resolves them: by display name),
* the legacy EEE datastore (2,792 records, migrated to 0.3.0 and resolved by repository id, as
  ``import-eee`` does),
* the hand-checked name pairs in ``tests/fixtures/model-pairs``,
* records of the generated datastore tree of ``benchmarks/_corpus.py`` (one model each),

and, for every distinct name string among them, the public name functions' outputs
(:func:`~evalhouse.curation.names.read_settings`, the collapses, :func:`identity_key` …).
A change that alters any of them fails there naming the section. Re-record only for an intended
change of the rules, and say so in its commit.
"""

from __future__ import annotations

import csv
import dataclasses
import hashlib
import json
import sys
from collections.abc import Iterator
from pathlib import Path
from typing import Any

DIGEST_FILE = Path(__file__).parent / "curation" / "data" / "identity_digest.json"
LEGACY = "datasets/eee-datastore-legacy"
PAIRS = Path(__file__).parent / "fixtures" / "model-pairs"
CORPUS = Path(__file__).parents[1] / "benchmarks" / "_corpus.py"
CORPUS_RECORDS = 280  # every combination of the generator's developers, sizes and suffixes

#: One resolution: (model_info, source key, which model_info field names the model).
Case = tuple[dict[str, Any], str, str]


def _digest(lines: list[str]) -> str:
    return hashlib.sha256("\n".join(sorted(lines)).encode()).hexdigest()


def _dump(value: Any) -> str:
    return json.dumps(value, sort_keys=True, default=str, ensure_ascii=False)


def pinned_cases(shared: Path) -> dict[str, list[Case]]:
    """The model_info of every record the two pinned payloads parse into."""
    sys.path.insert(0, str(Path(__file__).parent))
    from pinned_digest import parse_items

    from evalhouse.ingest.catalog import get_source
    from evalhouse.schema.records import ParsedRecord

    out = {}
    for key, items in parse_items(shared).items():
        how = get_source(key).SOURCE.identity_from
        out[key] = [(i.record["model_info"], key, how) for i in items if isinstance(i, ParsedRecord)]
    return out


def legacy_cases(shared: Path) -> list[Case]:
    """The legacy datastore's model_info, migrated as ``import-eee`` migrates it, by collection."""
    from evalhouse.pipeline.import_eee import collection_source_key
    from evalhouse.schema.eee_legacy import migrate_legacy

    data = shared / LEGACY / "data"
    out = []
    for path in sorted(data.glob("*/**/*.json")):
        collection = path.relative_to(data).parts[0]
        record, _ = migrate_legacy(json.loads(path.read_bytes()), collection)
        out.append((record["model_info"], collection_source_key(collection), "id"))
    return out


def _pair_info(name: str, details: str = "") -> dict[str, Any]:
    return {"name": name, "id": name, "additional_details": json.loads(details or "{}")}


def pair_cases() -> list[Case]:
    """The names of the hand-checked pairs, with the sources (and details) the fixtures give."""
    out: list[Case] = []
    with (PAIRS / "identity_pairs.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            for side in ("a", "b"):
                info = _pair_info(row[f"{side}_name"], row[f"{side}_details"])
                out += [(info, row[f"{side}_source"], how) for how in ("id", "name")]
    with (PAIRS / "aa_epoch_pairs.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out.append((_pair_info(row["artificial_analysis_name"]), "artificial-analysis", "name"))
            out.append((_pair_info(row["epoch_model_version"]), "epoch-benchmarks", "name"))
    with (PAIRS / "epoch_merged_names.csv").open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            out += [(_pair_info(n), "epoch-benchmarks", "name") for n in row["names"].split("|")]
    return out


def corpus_cases() -> list[Case]:
    """Records of the benchmarks' generated datastore tree (loaded from its file, not a package)."""
    import importlib.util
    import random

    spec = importlib.util.spec_from_file_location("_corpus", CORPUS)
    assert spec is not None and spec.loader is not None
    corpus = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(corpus)
    rng = random.Random(0)
    records = [corpus.record(i, 1, rng, one_model_each=True) for i in range(CORPUS_RECORDS)]
    return [(r["model_info"], "eee-bench-0", "id") for r in records]


def all_cases(shared: Path) -> dict[str, list[Case]]:
    return {**pinned_cases(shared), "eee-legacy": legacy_cases(shared), "pairs": pair_cases(), "corpus": corpus_cases()}


def _distinct(cases: list[Case]) -> Iterator[Case]:
    seen = set()
    for case in cases:
        key = _dump(case)
        if key not in seen:
            seen.add(key)
            yield case


def resolved_lines(cases: list[Case]) -> list[str]:
    """One JSON line per distinct case: what it is and every field it resolves to."""
    from evalhouse.curation.identity import resolve_model
    from evalhouse.curation.registry import load_registry

    registry = load_registry()
    lines = []
    for info, source, how in _distinct(cases):
        model = resolve_model(info, source, registry, identity_from=how)  # type: ignore[arg-type]
        lines.append(_dump([info, source, how, dataclasses.asdict(model)]))
    return lines


def _names(cases: list[Case]) -> set[tuple[str, str]]:
    """(name, source) for every name string the cases hold (ids and display names)."""
    out = set()
    for info, source, _ in cases:
        for name in (info.get("id"), info.get("name")):
            if name:
                out.add((str(name), source))
    return out


def name_lines(cases: list[Case]) -> list[str]:
    """One JSON line per distinct (name, source): the public name functions' outputs for it."""
    from evalhouse.curation import names as N
    from evalhouse.curation.identity import describe_name
    from evalhouse.curation.registry import load_registry

    registry = load_registry()
    r = registry.name_rules
    assert r is not None
    lines = []
    for name, source in sorted(_names(cases)):
        out = {
            "describe": describe_name(name, registry, source=source),
            "settings": N.read_settings(name, r).model_dump(),
            "standard": N.collapse_standard(name, r),
            "aggressive": N.collapse_aggressive(name, r),
            "display_base": N.strip_variant_suffixes(name, r),
            "identity_key": N.identity_key(name, r, source=source),
            "generic": N.is_generic_name(name, r),
        }
        lines.append(_dump([name, source, out]))
    return lines


def current(shared: Path) -> dict[str, Any]:
    """Per section: how many distinct cases and names, and a digest of each one's outputs."""
    out = {}
    for section, cases in all_cases(shared).items():
        resolved, named = resolved_lines(cases), name_lines(cases)
        out[section] = {
            "cases": len(resolved),
            "resolved": _digest(resolved),
            "names": len(named),
            "named": _digest(named),
        }
    return out


if __name__ == "__main__":  # python tests/identity_digest.py record [shared] (from the repo root)
    import os

    default = os.environ.get("EVALHOUSE_SHARED", Path(__file__).resolve().parents[2] / "shared")
    shared = Path(sys.argv[2] if len(sys.argv) > 2 else default)
    digest = current(shared)
    if sys.argv[1:2] == ["record"]:
        DIGEST_FILE.parent.mkdir(parents=True, exist_ok=True)
        DIGEST_FILE.write_text(json.dumps(digest, indent=1, sort_keys=True) + "\n")
    else:
        print(json.dumps(digest, indent=1, sort_keys=True))
