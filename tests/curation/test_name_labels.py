"""Model identity on the names real boards use, measured on hand labels.

``tests/fixtures/model-names/labels.csv``: real names from the aider polyglot leaderboard, LiveBench's
tables, LMArena's metadata table, the Artificial Analysis snapshot, the Epoch hub export and the
legacy EEE datastore, each labelled by reading it (configuration, base model, flags, a note) with
what its source says beside it. ``tests/fixtures/model-pairs/config_pairs.csv``: real rows of two
sources labelled the same configuration (one snapshot, one effort) or not. Both are resolved as the
loader resolves them; the per-source shares are printed by ``benchmarks/names.py`` too.
"""

from __future__ import annotations

import csv
import json
from collections import Counter
from pathlib import Path

import pytest
import yaml
from model_pairs import config_pairs
from name_labels import SETUP_FLAGS, labels, resolve_all, score, source_group

from evalhouse.curation.identity import resolve_model
from evalhouse.curation.registry import load_registry

REG = load_registry()
LABELS = labels()
PAIRS = config_pairs()
QUALIFIERS = ("mode", "effort", "budget", "context", "preview", "date", "checkpoint", "quant", "precision")
QUALIFIERS += ("provider", "alias", "prompting")


def test_the_label_file_is_large_varied_and_consistent() -> None:
    """At least 150 labels from six sources, each self-consistent: its flags are the qualifiers its
    configuration carries (plus setup), its base model is the configuration's base."""
    assert len(LABELS) >= 150
    by_source = Counter(source_group(label.source) for label in LABELS)
    for source in ("aider-polyglot", "livebench", "lmarena", "artificial-analysis", "epoch-benchmarks", "eee-legacy"):
        assert by_source[source] >= 20, (source, by_source)
    assert len({(label.name, label.source) for label in LABELS}) == len(LABELS), "a name is labelled twice"
    for label in LABELS:
        parts = label.configuration.split("|")
        assert parts[0] == label.base_model, label.name
        stated = dict(p.split("=", 1) for p in parts[1:] if not p.startswith("repo="))
        assert set(stated) <= set(QUALIFIERS), label.name
        assert {k: v for k, v in label.flags.items() if k not in SETUP_FLAGS} == stated, label.name
        assert label.note, label.name


def test_labelled_real_names_resolve_right() -> None:
    outcomes = resolve_all(LABELS, REG)
    for o in outcomes:
        if not o.right:
            print(f"wrong ({o.label.source}): {o.label.name!r} -> {o.configuration} (labelled {o.label.configuration})")
    shares = score(outcomes)
    for source, (right, total) in sorted(shares.items()):
        print(f"{source:>20}: {right:>3} of {total:>3} right ({right / total:.1%})")
    right, total = shares["overall"]
    assert right / total >= 0.95
    wrong_setup = [o.label.name for o in outcomes if not o.setup_right]
    assert not wrong_setup, f"the setup a name states was not read: {wrong_setup}"


@pytest.mark.parametrize(
    ("name", "source", "configuration"),
    [
        # the cases a board's real names broke: never a reasoning mode from "(no think)", never a
        # context from a thinking budget, never a junk word in the base model
        (
            "claude-opus-4-20250514 (no think)",
            "aider-polyglot",
            "anthropic/claude-4-opus|mode=non_reasoning|date=2025-05-14",
        ),
        (
            "gemini-2.5-flash-preview-05-20 (24k think)",
            "aider-polyglot",
            "google/gemini-2.5-flash|mode=reasoning|budget=24k|preview=preview|date=2025-05-20",
        ),
        (
            "claude-3-7-sonnet-20250219 (32k thinking tokens)",
            "aider-polyglot",
            "anthropic/claude-3.7-sonnet|mode=reasoning|budget=32k|date=2025-02-19",
        ),
        (
            "gemini-2.5-pro-preview-06-05 (default think)",
            "aider-polyglot",
            "google/gemini-2.5-pro|mode=reasoning|preview=preview|date=2025-06-05",
        ),
        ("GPT-4o (ChatGPT)", "artificial-analysis", "openai/gpt-4o|alias=chatgpt"),
        ("mistral-large-2411", "livebench", "mistral/mistral-large-2|date=2024-11"),
    ],
)
def test_the_names_that_broke_resolve_to_their_labels(name: str, source: str, configuration: str) -> None:
    (label,) = [x for x in LABELS if (x.name, x.source) == (name, source)]
    assert label.configuration == configuration  # the label file says what this test says
    (outcome,) = resolve_all([label], REG)
    assert outcome.configuration == configuration


def test_the_edit_format_a_name_states_is_the_runs_setup() -> None:
    (label,) = [x for x in LABELS if x.name.startswith("Qwen3 235B A22B diff")]
    (outcome,) = resolve_all([label], REG)
    assert outcome.setup == {"edit_format": "diff"}
    assert "diff" not in outcome.base_model and "alibaba" not in outcome.base_model


# --------------------------------------------------------------------------------------------
# Cross-source configuration pairs
# --------------------------------------------------------------------------------------------


def test_labelled_cross_source_pairs_meet_or_stay_apart() -> None:
    """At least 60 real pairs; 95% right; no pair labelled different is merged."""
    assert len(PAIRS) >= 60
    assert sum(not p.same for p in PAIRS) >= 15 and sum(p.same for p in PAIRS) >= 40
    wrong, merged = [], []
    for pair in PAIRS:
        a, b = pair.a.resolve(REG), pair.b.resolve(REG)
        if (a.config_id == b.config_id) != pair.same:
            wrong.append((pair.note, a.config_id, b.config_id))
            if not pair.same:
                merged.append(pair.note)
    for note, a, b in wrong:
        print(f"wrong: {note}: {a} vs {b}")
    print(f"configuration pairs: {len(PAIRS) - len(wrong)} of {len(PAIRS)} right")
    assert not merged, f"pairs labelled different were merged: {merged}"
    assert 1 - len(wrong) / len(PAIRS) >= 0.95


def test_gpt_4o_august_2024_is_one_configuration_in_aa_epoch_and_helm() -> None:
    """AA's "GPT-4o (Aug '24)" (its id openai/gpt-4o-2024-08-06), Epoch's and HELM's
    gpt-4o-2024-08-06: one configuration, and not the November one."""
    aa = {
        "id": "openai/gpt-4o-2024-08-06",
        "name": "GPT-4o (Aug '24)",
        "developer": "OpenAI",
        "additional_details": {"release_date": "2024-08-06"},
    }
    epoch = {
        "id": "openai/gpt-4o-2024-08-06",
        "name": "gpt-4o-2024-08-06",
        "developer": "OpenAI",
        "additional_details": {"release_date": "2024-08-06"},
    }
    helm = {"id": "openai/gpt-4o-2024-08-06", "name": "GPT-4o 2024-08-06", "developer": "openai"}
    helm["additional_details"] = {}
    configs = {
        resolve_model(aa, "artificial-analysis", REG).config_id,
        resolve_model(epoch, "epoch-benchmarks", REG).config_id,
        resolve_model(helm, "eee-helm-lite", REG, identity_from="id").config_id,
    }
    assert configs == {"openai/gpt-4o|date=2024-08-06"}
    november = {
        "id": "openai/gpt-4o",
        "name": "GPT-4o (Nov '24)",
        "developer": "OpenAI",
        "additional_details": {"release_date": "2024-11-20"},
    }
    assert resolve_model(november, "artificial-analysis", REG).config_id == "openai/gpt-4o|date=2024-11-20"


# --------------------------------------------------------------------------------------------
# The labels and pairs name real rows of real payloads
# --------------------------------------------------------------------------------------------


def _real_names(shared: Path) -> dict[str, set[tuple[str, ...]]]:
    """(name, id or display, release date) as each payload writes them, per source group."""
    payloads = shared / "datasets" / "real-payloads-2026-12"
    out: dict[str, set[tuple[str, ...]]] = {}
    runs = yaml.safe_load((payloads / "aider-polyglot" / "polyglot_leaderboard.yml").read_text())
    out["aider-polyglot"] = {(str(r["model"]),) for r in runs}
    out["livebench"] = {
        (row["model"],) for path in (payloads / "livebench").glob("table_*.csv") for row in csv.DictReader(path.open())
    }
    arena = csv.DictReader((payloads / "lmarena" / "leaderboard_table_20250511.csv").open(encoding="utf-8"))
    out["lmarena"] = {(r["Model"], r["key"]) for r in arena}
    aa = csv.DictReader((shared / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv").open())
    out["artificial-analysis"] = {(r["name"], f"{r['modelCreatorSlug']}/{r['slug']}", r["releaseDate"]) for r in aa}
    epoch: set[tuple[str, ...]] = set()
    for path in (shared / "datasets" / "epoch-benchmarks-2025-11").glob("*.csv"):
        for row in csv.DictReader(path.open(encoding="utf-8")):
            if row.get("Model version"):
                epoch.add((row["Model version"], row.get("Release date") or ""))
    out["epoch-benchmarks"] = epoch
    legacy = shared / "datasets" / "eee-datastore-legacy" / "data"
    out["eee-legacy"] = set()
    for path in legacy.glob("*/**/*.json"):
        info = json.loads(path.read_bytes()).get("model_info") or {}
        out["eee-legacy"].add((str(info.get("id")), str(info.get("name"))))
    return out


def test_every_label_and_pair_side_is_a_real_row(shared: Path) -> None:
    real = _real_names(shared)
    keyed = {
        "aider-polyglot": lambda n, h: (n,),
        "livebench": lambda n, h: (n,),
        "lmarena": lambda n, h: (n, h.get("id", "")),
        "artificial-analysis": lambda n, h: (n, h.get("id", ""), h.get("release_date", "")),
        "epoch-benchmarks": lambda n, h: (n, h.get("release_date", "")),
        "eee-legacy": lambda n, h: (n, h.get("display", "")),
    }
    sides = [
        (
            label.name,
            label.source,
            {"id": label.source_id, "release_date": label.release_date, "display": label.display_name},
        )
        for label in LABELS
    ]
    sides += [(s.name, s.source, s.hints) for pair in PAIRS for s in (pair.a, pair.b)]
    missing = []
    for name, source, hints in sides:
        group = source_group(source)
        if keyed[group](name, hints) not in real[group]:
            missing.append((source, name))
    assert not missing, f"not rows of the real payloads: {missing}"
