"""Paper 000's own base-model rule (its patterns in reproduce/paper000.yaml) and its R1 grid (n = 89)."""

from __future__ import annotations

import doctest
import math
from pathlib import Path

import pandas as pd
import pytest

from evalhouse.analytics.data.defaults import base_key, best_default_configuration
from evalhouse.analytics.reproduce import paper000
from evalhouse.analytics.reproduce.paper000 import paper000_base_name


@pytest.mark.parametrize(
    ("name", "base"),
    [
        ("Grok 4.3 (Non-reasoning)", "Grok 4.3"),
        ("Grok 4.3 (high)", "Grok 4.3"),
        ("DeepSeek V4 Flash (Reasoning, Max Effort)", "DeepSeek V4 Flash"),
        ("Nova 2.0 Pro Preview (low)", "Nova 2.0 Pro Preview"),
        ("Gemini 3.1 Pro Preview", "Gemini 3.1 Pro Preview"),
        (
            "Claude Sonnet 5 (Adaptive Reasoning, Low Effort)",
            "Claude Sonnet 5 (Adaptive Reasoning, Low Effort)",
        ),
        ("GPT-5.4 (xhigh)", "GPT-5.4 (xhigh)"),
        ("DeepSeek R1 (Jan '25)", "DeepSeek R1 (Jan '25)"),
        ("Sarvam 105B high", "Sarvam 105B"),
    ],
)
def test_paper000_base_name(name, base):
    assert paper000_base_name(name) == base


def test_doctests():
    assert doctest.testmod(paper000).failed == 0


def test_paper000_legacy_rule_keeps_what_it_missed() -> None:
    assert paper000_base_name("GPT-5.5 (high)") == "GPT-5.5"
    assert paper000_base_name("GPT-5.5 (xhigh)") == "GPT-5.5 (xhigh)"
    assert paper000_base_name("Gemini 3.1 Pro Preview") == "Gemini 3.1 Pro Preview"
    assert paper000_base_name("Mistral Medium") == "Mistral"


# --------------------------------------------------------------------------------------------
# Paper 000's deduplicated grid (n = 89)
# --------------------------------------------------------------------------------------------

BENCH13 = [
    "tau2",
    "tauBanking",
    "terminalbenchV21",
    "terminalbenchHard",
    "scicode",
    "lcr",
    "omniscience",
    "ifbench",
    "hle",
    "gpqa",
    "critpt",
    "gdpval_elo",
    "mmmuPro",
]
BENCH12 = BENCH13[:-1]


@pytest.fixture(scope="module")
def retained(aa_csv: Path) -> pd.DataFrame:
    aa = pd.read_csv(aa_csv)
    kept = aa[aa[BENCH13].notna().sum(axis=1) >= 8]
    assert len(kept) == 421
    assert kept[BENCH12].notna().all(axis=1).sum() == 96
    return kept


def _index(row: dict) -> object:
    return row.get("intelligenceIndex")


def _complete(row: dict) -> bool:
    return all(not pd.isna(row[c]) for c in BENCH12)


def _grid(rows: list[dict], key, order: str) -> list[dict]:
    if order == "complete_then_dedup":
        return best_default_configuration([r for r in rows if _complete(r)], key=key, score=_index)
    return [r for r in best_default_configuration(rows, key=key, score=_index) if _complete(r)]


def test_dedup_grid_reproduces_89_with_paper000_rule(retained: pd.DataFrame) -> None:
    """Paper 000's own base-name rule gives 89 when complete cases are deduplicated.

    Deduplicating the 421 first with whole rows gives 86; the notebook reaches 89 in that order
    only because pandas ``groupby().first()`` takes each column's first non-null value, so three
    of its "rows" (GPT-5 mini, MiMo-V2-Flash, Nova 2.0 Lite) mix two configurations' scores.
    """
    rows = retained.to_dict("records")
    key = lambda r: paper000_base_name(r["name"])  # noqa: E731
    assert len(_grid(rows, key, "complete_then_dedup")) == 89
    assert len(_grid(rows, key, "dedup_then_complete")) == 86

    frame = retained.assign(base=retained["name"].map(paper000_base_name))
    frame["_ii"] = frame["intelligenceIndex"].fillna(-math.inf)
    notebook = frame.sort_values("_ii", ascending=False).groupby("base", as_index=False).first()
    notebook = notebook.dropna(subset=BENCH12)
    assert len(notebook) == 89
    assert set(notebook["base"]) == {key(r) for r in _grid(rows, key, "complete_then_dedup")}


def test_dedup_grid_with_adopted_rule_is_88(retained: pd.DataFrame) -> None:
    """strip_variant_suffixes also strips "(xhigh)", so GPT-5.5 (xhigh) and GPT-5.5 (high) are
    one base model: 88, not 89. That single merge is the whole difference from paper 000's rule
    on the 96 complete rows (the legacy grid keeps both GPT-5.5 rows)."""
    rows = retained.to_dict("records")
    adopted = _grid(rows, base_key, "complete_then_dedup")
    assert len(adopted) == 88
    assert len(_grid(rows, base_key, "dedup_then_complete")) == 85
    legacy = _grid(rows, lambda r: paper000_base_name(r["name"]), "complete_then_dedup")
    adopted_names, legacy_names = {r["name"] for r in adopted}, {r["name"] for r in legacy}
    assert adopted_names < legacy_names
    assert legacy_names - adopted_names == {"GPT-5.5 (high)"}
