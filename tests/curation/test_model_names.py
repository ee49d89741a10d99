"""Model identity: paper 002's collapses, paper 000's base names, flags, and cross-source keys.

Every expected value below was written from the rules (paper 002 Appendix E, paper 000 §1 and the
module docstrings), not copied from the functions' output.
"""

from __future__ import annotations

import math
from pathlib import Path

import pandas as pd
import pytest
import yaml
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from model_pairs import aa_epoch_pairs

from evalhouse.curation import model_names as mn
from evalhouse.curation.model_names import (
    MODEL_TOKENS_VERSION,
    ConfigFlags,
    best_default_configuration,
    collapse_aggressive,
    collapse_standard,
    config_flags,
    is_generic_name,
    match_rate,
    paper000_base_name,
    resolve,
    strip_variant_suffixes,
)

# --------------------------------------------------------------------------------------------
# The tricky-name table: (name, standard collapse, base model)
# --------------------------------------------------------------------------------------------

TRICKY = [
    # AA display names: serving suffixes go, tiers move behind the version
    ("Claude Sonnet 5 (Adaptive Reasoning, Low Effort)", "claude 5 sonnet", "claude 5 sonnet"),
    ("Claude Opus 4.5 (Non-reasoning)", "claude 4.5 opus", "claude 4.5 opus"),
    ("Claude 4.5 Sonnet (Reasoning)", "claude 4.5 sonnet", "claude 4.5 sonnet"),
    ("GPT-5.5 (xhigh)", "gpt 5.5", "gpt 5.5"),
    ("Grok 4.3 (Non-reasoning)", "grok 4.3", "grok 4.3"),
    ("Gemini 3.1 Pro Preview", "gemini 3.1 pro", "gemini 3.1 pro"),
    ("DeepSeek R1 (Jan '25)", "deepseek r1", "deepseek r1"),
    ("DeepSeek V3 0324", "deepseek v3", "deepseek v3"),
    ("MiMo-V2-Flash (Feb 2026)", "mimo v2 flash", "mimo v2 flash"),
    ("GPT-4o (March 2025, chatgpt-4o-latest)", "gpt 4o", "gpt 4o"),
    ("Llama 3.1 Instruct 8B", "llama 3.1 8b", "llama 3.1 8b"),
    ("Qwen3 235B A22B 2507 (Reasoning)", "qwen 3 235b a22b", "qwen 3 235b a22b"),
    ("Qwen3.5 122B A10B (Non-reasoning)", "qwen 3.5 122b a10b", "qwen 3.5 122b a10b"),
    ("gpt-oss-120b (high)", "gpt oss 120b", "gpt oss 120b"),
    ("Claude 3 Opus", "claude 3 opus", "claude 3 opus"),
    ("Gemma 3 4B", "gemma 3 4b", "gemma 3 4b"),
    ("Gemma 3 270M", "gemma 3 270m", "gemma 3 270m"),
    ("Mistral Small 3.1", "mistral small 3.1", "mistral small 3.1"),
    ("Mistral Medium", "mistral medium", "mistral medium"),
    ("Llama 4 Maverick", "llama 4 maverick", "llama 4 maverick"),
    ("Gemini 2.5 Flash-Lite (Reasoning)", "gemini 2.5 flash lite", "gemini 2.5 flash lite"),
    ("Gemini 1.5 Flash-8B", "gemini 1.5 flash 8b", "gemini 1.5 flash 8b"),
    ("Command-R+ (Apr '24)", "command r plus", "command r plus"),
    ("Kimi K2 Thinking", "kimi k2", "kimi k2"),
    ("Grok 3 mini Reasoning (high)", "grok 3 mini", "grok 3 mini"),
    ("Phi-3 Mini Instruct 3.8B", "phi 3 mini 3.8b", "phi 3 mini 3.8b"),
    ("HyperCLOVA X SEED Think (32B)", "hyperclova x seed 32b", "hyperclova x seed 32b"),
    ("Hermes 4 - Llama-3.1 405B (Reasoning)", "hermes 4 llama 3.1 405b", "hermes 4 llama 3.1 405b"),
    ("Llama 3.2 Instruct 11B (Vision)", "llama 3.2 11b", "llama 3.2 11b"),
    ("NVIDIA Nemotron Nano 9B V2 (Reasoning)", "nemotron nano v2 9b", "nemotron nano v2 9b"),
    # Epoch model versions: dates, "_effort" and "_budget" tails
    ("gpt-5-2025-08-07_high", "gpt 5", "gpt 5"),
    ("claude-opus-4-20250514_16K", "claude 4 opus", "claude 4 opus"),
    ("claude-opus-4-1-20250805_32K", "claude 4.1 opus", "claude 4.1 opus"),
    ("claude-sonnet-4-5-20250929_32K", "claude 4.5 sonnet", "claude 4.5 sonnet"),
    ("o3-2025-04-16_medium", "o3", "o3"),
    ("o3-mini-2025-01-31_high", "o3 mini", "o3 mini"),
    ("gemini-2.5-pro-exp-03-25", "gemini 2.5 pro", "gemini 2.5 pro"),
    ("gemini-2.5-pro-preview-06-05", "gemini 2.5 pro", "gemini 2.5 pro"),
    ("gemini-2.5-flash-preview-04-17 (16K thinking)", "gemini 2.5 flash", "gemini 2.5 flash"),
    ("gemini-2.0-flash-thinking-exp-01-21", "gemini 2.0 flash", "gemini 2.0 flash"),
    ("gemini-1.5-flash-002", "gemini 1.5 flash", "gemini 1.5 flash"),
    ("qwen3-235b-a22b", "qwen 3 235b a22b", "qwen 3 235b a22b"),
    ("claude-3-5-sonnet-20241022", "claude 3.5 sonnet", "claude 3.5 sonnet"),
    ("claude-3-opus", "claude 3 opus", "claude 3 opus"),  # 3 is a version, not "3b"
    ("gpt-4-0613", "gpt 4", "gpt 4"),
    ("gpt-4-32k-0314", "gpt 4", "gpt 4"),
    ("gpt-4o-2024-05-13", "gpt 4o", "gpt 4o"),
    ("chatgpt-4o-03-27-2025", "chatgpt 4o", "gpt 4o"),  # stem alias only in resolve
    ("DeepSeek-V3.1_thinking", "deepseek v3.1", "deepseek v3.1"),
    ("DeepSeek-V2 (MoE-236B)", "deepseek v2 236b", "deepseek v2 236b"),
    ("Llama-4-Maverick-17B-128E-Instruct", "llama 4 maverick", "llama 4 maverick"),
    ("Meta-Llama-3-8B-Instruct", "llama 3 8b", "llama 3 8b"),
    ("Llama-2-70b-chat-hf ", "llama 2 70b", "llama 2 70b"),
    ("Llama-3.1-Tulu-3-70B-DPO", "llama 3.1 tulu 3 70b", "llama 3.1 tulu 3 70b"),
    ("Mixtral-8x7B-Instruct-v0.1", "mixtral 8x7b", "mixtral 8x7b"),
    ("Mistral-7B-Instruct-v0.3", "mistral 7b", "mistral 7b"),
    ("open-mixtral-8x22b", "mixtral 8x22b", "mixtral 8x22b"),
    ("mistral-medium-2505", "mistral medium", "mistral medium 3"),  # curated alias
    ("Phi-3-medium-128k-instruct", "phi 3 medium", "phi 3 medium"),
    ("OLMo-2-1124-13B-Instruct", "olmo 2 13b", "olmo 2 13b"),
    ("c4ai-command-r-plus-08-2024", "command r plus", "command r plus"),
    ("text-davinci-003", "text davinci 003", "text davinci 003"),  # no other number: kept
    ("Qwen-1_8B", "qwen 1.8b", "qwen 1.8b"),
    ("phi-1_5", "phi 1.5", "phi 1.5"),
    ("amazon.nova-pro-v1:0", "nova pro", "nova pro"),
    ("llama3.1:405b-instruct-q4_K_M", "llama 3.1 405b", "llama 3.1 405b"),
    ("gemma2:27b-instruct-q8_0", "gemma 2 27b", "gemma 2 27b"),
    ("QwQ-32B-Preview-Q8_0-GGUF", "qwq 32b", "qwq 32b"),
    ("Chinchilla (70B)", "chinchilla 70b", "chinchilla 70b"),
    ("Falcon-180B", "falcon 180b", "falcon 180b"),
    ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude 3.5 sonnet", "claude 3.5 sonnet"),
    # HF ids: org prefix before "/"
    ("meta-llama/Llama-3.1-8B-Instruct", "llama 3.1 8b", "llama 3.1 8b"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen 2.5 72b", "qwen 2.5 72b"),
    ("TencentARC/LLaMA-Pro-8B-Instruct", "llama pro 8b", "llama pro 8b"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen 2.5 coder 32b", "qwen 2.5 coder 32b"),
    (
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "deepseek r1 distill qwen 32b",
        "deepseek r1 distill qwen 32b",
    ),
    # the common-size whitelist and its guard
    ("llama 2 7", "llama 2 7b", "llama 2 7b"),  # second bare number, a common size
    ("GPT 3 175", "gpt 3 175", "gpt 3 175"),  # guarded: a bare number in GPT is no size
]


@pytest.mark.parametrize(("name", "standard", "base"), TRICKY, ids=[t[0] for t in TRICKY])
def test_tricky_names(name: str, standard: str, base: str) -> None:
    assert collapse_standard(name) == standard
    assert resolve(name).base_model == base


def test_table_is_large_enough() -> None:
    assert len(TRICKY) >= 60


FLAGS = [
    ("Claude Sonnet 5 (Adaptive Reasoning, Low Effort)", {"reasoning_mode": "adaptive", "effort": "low"}),
    ("Claude Sonnet 4.6 (Non-reasoning, High Effort)", {"reasoning_mode": "non_reasoning", "effort": "high"}),
    (
        "Claude Fable 5 (Adaptive Reasoning, Max Effort, Opus 4.8 Fallback)",
        {"reasoning_mode": "adaptive", "effort": "max"},
    ),
    ("GPT-5.5 (xhigh)", {"reasoning_mode": "reasoning", "effort": "xhigh"}),
    ("GPT-5 (minimal)", {"reasoning_mode": None, "effort": "minimal"}),
    ("GPT-5.4 mini (Non-Reasoning)", {"reasoning_mode": "non_reasoning", "effort": None}),
    ("Grok 4.3 (Non-reasoning)", {"reasoning_mode": "non_reasoning"}),
    ("Gemini 3.1 Pro Preview", {"preview": True, "reasoning_mode": None, "date_tag": None}),
    ("DeepSeek R1 (Jan '25)", {"date_tag": "2025-01", "preview": False}),
    ("MiMo-V2-Flash (Feb 2026)", {"date_tag": "2026-02"}),
    ("Gemini 2.5 Pro Preview (Mar' 25)", {"date_tag": "2025-03", "preview": True}),
    ("gpt-5-2025-08-07_high", {"reasoning_mode": "reasoning", "effort": "high", "date_tag": "2025-08-07"}),
    ("grok-3-mini-beta_low", {"effort": "low", "preview": True}),
    (
        "claude-opus-4-20250514_16K",
        {
            "reasoning_mode": "reasoning",
            "thinking_budget": 16000,
            "effort": None,
            "date_tag": "2025-05-14",
            "context_variant": None,
        },
    ),
    ("claude-sonnet-4-20250514_59K", {"thinking_budget": 59000}),
    (
        "gemini-2.5-flash-preview-04-17 (16K thinking)",
        {"thinking_budget": 16000, "preview": True, "date_tag": "04-17"},
    ),
    ("Claude Opus 4 (Thinking 16K)", {"thinking_budget": 16000, "reasoning_mode": "reasoning"}),
    ("DeepSeek-V3.1_thinking", {"reasoning_mode": "reasoning", "thinking_budget": None}),
    ("Claude Sonnet 4 (1M)", {"context_variant": "1m", "thinking_budget": None}),
    ("Phi-3-medium-128k-instruct", {"context_variant": "128k"}),
    ("gpt-4-32k-0314", {"context_variant": "32k", "date_tag": "0314"}),
    ("Gemma 3 270M", {"context_variant": None}),  # 270M is a size, not a context window
    ("chatgpt-4o-03-27-2025", {"date_tag": "2025-03-27"}),
    ("c4ai-command-a-03-2025", {"date_tag": "2025-03"}),
    ("Llama 3.1 Instruct 8B", {"reasoning_mode": None, "effort": None, "preview": False, "date_tag": None}),
    ("Kimi K2 Thinking", {"reasoning_mode": "reasoning"}),
]


@pytest.mark.parametrize(("name", "expected"), FLAGS, ids=[f[0] for f in FLAGS])
def test_config_flags(name: str, expected: dict[str, object]) -> None:
    flags = config_flags(name).model_dump()
    assert {k: flags[k] for k in expected} == expected


def test_flags_are_frozen() -> None:
    flags = config_flags("GPT-5 (high)")
    with pytest.raises(ValueError):
        flags.effort = "low"  # type: ignore[misc]
    assert set(flags.model_dump()) == {
        "reasoning_mode",
        "effort",
        "thinking_budget",
        "context_variant",
        "preview",
        "date_tag",
    }


# --------------------------------------------------------------------------------------------
# Family, recorded size, aggressive collapse
# --------------------------------------------------------------------------------------------


def test_family_is_the_stem_and_versions_merge() -> None:
    assert collapse_standard("Meta-Llama-3.1-8B-Instruct", family="Llama 3") == "llama 3.1 8b"
    assert collapse_standard("vicuna-13b-v1.3", family="LLaMA") == "llama vicuna v1.3 13b"
    assert collapse_standard("Qwen2.5-Coder-7B", family="3") == "qwen 2.5 coder 7b"  # numeric


def test_recorded_size_is_used_and_matched() -> None:
    assert collapse_standard("Llama 2 Chat", params_b=13) == "llama 2 13b"
    assert collapse_standard("llama-2-34", params_b=34) == "llama 2 34b"
    assert collapse_standard("Mistral Small 3", params_b=24) == "mistral small 3 24b"


def test_developer_guards_versions() -> None:
    assert collapse_standard("model 2 7") == "model 2 7b"
    assert collapse_standard("model 2 7", developer="OpenAI") == "model 2 7"


@pytest.mark.parametrize(
    ("name", "family", "expected"),
    [
        ("GPT-4o (May '24)", None, "gpt"),
        ("Meta-Llama-3-8B-Instruct", None, "llama"),
        ("o3-mini-2025-01-31_high", None, "o"),
        ("claude-3-5-sonnet-20241022", None, "claude"),
        ("Qwen/Qwen2.5-72B-Instruct", None, "qwen"),
        ("anything-7b", "Qwen2.5", "qwen"),
        ("DeepSeek-R1-Distill-Llama-70B", "3", "deepseek"),  # numeric family: use the name
        ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", None, "claude"),
    ],
)
def test_collapse_aggressive(name: str, family: str | None, expected: str) -> None:
    assert collapse_aggressive(name, family=family) == expected


def test_different_models_stay_apart() -> None:
    apart = [
        ("Claude 3 Opus", "Claude 3 Sonnet"),
        ("Gemma 3 4B", "Gemma 3 27B"),
        ("GPT-4o", "GPT-4o mini"),
        ("o3", "o3-mini"),
        ("Llama 4 Maverick", "Llama 4 Scout"),
        ("Gemini 2.5 Flash", "Gemini 2.5 Flash-Lite"),
        ("Qwen2.5 Coder Instruct 32B", "Qwen2.5 Instruct 32B"),
        ("Claude 4.5 Sonnet", "Claude 4.5 Haiku"),
        ("GPT-5", "GPT-5.1"),
        ("Mistral Medium 3", "Mistral Medium 3.1"),
        ("open_llama_7b", "LLaMA-7B"),
    ]
    for a, b in apart:
        assert resolve(a).base_model != resolve(b).base_model, (a, b)


# --------------------------------------------------------------------------------------------
# strip_variant_suffixes (paper 000)
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("name", "expected"),
    [
        ("Claude Sonnet 5 (Adaptive Reasoning, Low Effort)", "Claude Sonnet 5"),
        ("Claude Fable 5 (Adaptive Reasoning, Max Effort, Opus 4.8 Fallback)", "Claude Fable 5"),
        ("GPT-5.5 (xhigh)", "GPT-5.5"),
        ("GLM-5.2 (max)", "GLM-5.2"),
        ("Grok 4.3 (Non-reasoning)", "Grok 4.3"),
        ("GPT-5.4 mini (Non-Reasoning)", "GPT-5.4 mini"),
        ("Gemini 3.1 Pro Preview", "Gemini 3.1 Pro"),
        ("Solar Pro 2 (Preview) (Non-reasoning)", "Solar Pro 2"),
        ("Gemini 2.5 Flash Preview (Sep '25) (Reasoning)", "Gemini 2.5 Flash (Sep '25)"),
        ("Hy3-preview (Reasoning)", "Hy3"),
        ("Gemini 2.0 Flash (experimental)", "Gemini 2.0 Flash"),
        ("DeepSeek R1 (Jan '25)", "DeepSeek R1 (Jan '25)"),  # a dated checkpoint is kept
        ("GPT-4o (March 2025, chatgpt-4o-latest)", "GPT-4o (March 2025, chatgpt-4o-latest)"),
        ("Llama 3.2 Instruct 90B (Vision)", "Llama 3.2 Instruct 90B (Vision)"),
        ("Mistral Medium", "Mistral Medium"),  # a product tier, not an effort
        ("Kimi K2 Thinking", "Kimi K2 Thinking"),  # a distinct AA model
        ("gpt-5-2025-08-07_high", "gpt-5-2025-08-07"),
        ("claude-opus-4-20250514_16K", "claude-opus-4-20250514"),
        ("QwQ-32B (16K thinking)", "QwQ-32B"),
        ("Claude Sonnet 4 (1M)", "Claude Sonnet 4"),
    ],
)
def test_strip_variant_suffixes(name: str, expected: str) -> None:
    assert strip_variant_suffixes(name) == expected


def test_paper000_legacy_rule_keeps_what_it_missed() -> None:
    assert paper000_base_name("GPT-5.5 (high)") == "GPT-5.5"
    assert paper000_base_name("GPT-5.5 (xhigh)") == "GPT-5.5 (xhigh)"
    assert paper000_base_name("Gemini 3.1 Pro Preview") == "Gemini 3.1 Pro Preview"
    assert paper000_base_name("Mistral Medium") == "Mistral"


# --------------------------------------------------------------------------------------------
# best_default_configuration
# --------------------------------------------------------------------------------------------


def test_best_default_picks_highest_index_whole_row() -> None:
    rows = [
        {"name": "GPT-5.5 (low)", "intelligenceIndex": 43.5, "hle": 1},
        {"name": "GPT-5.5 (xhigh)", "intelligenceIndex": 54.8, "hle": None},
        {"name": "GPT-5.5 (Non-reasoning)", "intelligenceIndex": 35.4, "hle": 3},
        {"name": "Grok 4.3 (high)", "intelligenceIndex": float("nan")},
        {"name": "Grok 4.3 (low)", "intelligenceIndex": 35.4},
    ]
    picked = best_default_configuration(rows)
    assert [r["name"] for r in picked] == ["GPT-5.5 (xhigh)", "Grok 4.3 (low)"]
    assert picked[0] is rows[1]  # a whole row, never columns mixed across configurations


def test_best_default_ties_prefer_release_then_name() -> None:
    rows = [
        {"name": "Nova 2.0 Pro Preview (low)", "intelligenceIndex": 20.0},
        {"name": "Nova 2.0 Pro (high)", "intelligenceIndex": 20.0},
        {"name": "Zeta 1 (low)", "intelligenceIndex": 5.0},
        {"name": "Zeta 1 (high)", "intelligenceIndex": 5.0},
        {"name": "Nothing (high)", "intelligenceIndex": None},
    ]
    picked = {r["name"] for r in best_default_configuration(rows)}
    assert picked == {"Nova 2.0 Pro (high)", "Zeta 1 (high)", "Nothing (high)"}
    assert {r["name"] for r in best_default_configuration(rows[::-1])} == picked  # order-free


def test_best_default_custom_key_and_score() -> None:
    rows = [{"model": "a", "s": 1}, {"model": "a", "s": 3}, {"model": "b", "s": 2}]
    picked = best_default_configuration(rows, key=lambda r: r["model"], score=lambda r: r["s"])
    assert [r["s"] for r in picked] == [3, 2]


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


def _complete(row: dict) -> bool:
    return all(not pd.isna(row[c]) for c in BENCH12)


def _grid(rows: list[dict], key, order: str) -> list[dict]:
    if order == "complete_then_dedup":
        return best_default_configuration([r for r in rows if _complete(r)], key=key)
    return [r for r in best_default_configuration(rows, key=key) if _complete(r)]


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
    adopted = _grid(rows, mn._default_key, "complete_then_dedup")
    assert len(adopted) == 88
    assert len(_grid(rows, mn._default_key, "dedup_then_complete")) == 85
    legacy = _grid(rows, lambda r: paper000_base_name(r["name"]), "complete_then_dedup")
    adopted_names, legacy_names = {r["name"] for r in adopted}, {r["name"] for r in legacy}
    assert adopted_names < legacy_names
    assert legacy_names - adopted_names == {"GPT-5.5 (high)"}


# --------------------------------------------------------------------------------------------
# Generic names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Baseline", "Ours", "ours (full)", "unknown", "Model A", "human", "Random", "N/A", ""]
)
def test_generic_names_are_source_scoped(name: str) -> None:
    assert is_generic_name(name)
    a = resolve(name, source="Paper A")
    b = resolve(name, source="paper-b")
    assert a.base_model.startswith("paper-a::") and b.base_model.startswith("paper-b::")
    assert a.base_model != b.base_model and a.family != b.family
    assert a.configuration == a.base_model
    loose = resolve(name)
    assert loose.base_model.startswith("generic::") and loose.is_scoped


@pytest.mark.parametrize("name", ["GPT-4", "Model-X 7B", "Human-LLaMA 7B", "Ourania 2", "Mistral"])
def test_model_names_are_not_generic(name: str) -> None:
    assert not is_generic_name(name)
    assert not resolve(name, source="s").is_scoped


def test_resolve_shape() -> None:
    identity = resolve("GPT-5 (high)", source="artificial-analysis")
    dumped = identity.model_dump()
    assert set(dumped) == {"input", "source", "configuration", "base_model", "family", "flags"}
    assert dumped["base_model"] == "gpt 5"
    assert dumped["family"] == "gpt"
    assert dumped["configuration"] == "gpt 5|mode=reasoning|effort=high"
    assert dumped["flags"]["effort"] == "high"
    assert isinstance(identity.flags, ConfigFlags)


def test_token_file_is_versioned_and_validated(tmp_path: Path) -> None:
    raw = yaml.safe_load(mn._TOKENS_PATH.read_text(encoding="utf-8"))
    assert raw["version"] == MODEL_TOKENS_VERSION
    for key, value in [("tier_tokens", ["Opus"]), ("tail_separator_pattern", "(")]:
        broken = {**raw, key: value}
        path = tmp_path / f"{key}.yaml"
        path.write_text(yaml.safe_dump(broken), encoding="utf-8")
        with pytest.raises(ValueError, match=key):
            mn._load_tokens(path)


# --------------------------------------------------------------------------------------------
# Every name in the shared datasets
# --------------------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def dataset_names(aa_csv: Path, epoch_dir: Path) -> list[str]:
    aa = pd.read_csv(aa_csv)
    names = set(aa["name"]) | set(aa["shortName"].dropna())
    for path in sorted(epoch_dir.glob("*.csv")):
        frame = pd.read_csv(path)
        for column in ("Model version", "Model name", "Display name", "Name"):
            if column in frame:
                names |= set(frame[column].dropna().astype(str))
    return sorted(names)


def test_every_dataset_name_resolves_and_collapses_idempotently(dataset_names: list[str]) -> None:
    assert len(dataset_names) > 1000
    for name in dataset_names:
        identity = resolve(name, source="shared")
        assert identity.base_model and identity.family is not None
        for collapse in (collapse_standard, collapse_aggressive, strip_variant_suffixes):
            once = collapse(name)
            assert collapse(once) == once, (collapse.__name__, name, once)


# --------------------------------------------------------------------------------------------
# Property tests
# --------------------------------------------------------------------------------------------

_NAMEISH = st.text(
    alphabet=st.sampled_from(list("abcdeghiklmnoprstvxABCKMPQ0123456789-_ ./()[]:'+,;|")),
    max_size=40,
)
_TEXT = st.one_of(st.text(max_size=60), _NAMEISH)


@settings(max_examples=1000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
@example("IT0")  # an alphabetic run that is itself a dropped word ("it" = instruction-tuned)
def test_collapses_are_idempotent_on_any_text(text: str) -> None:
    for collapse in (collapse_standard, collapse_aggressive, strip_variant_suffixes):
        once = collapse(text)
        assert collapse(once) == once


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT, st.one_of(st.none(), st.text(max_size=10)))
def test_resolve_never_raises(text: str, source: str | None) -> None:
    identity = resolve(text, source=source)
    assert isinstance(identity.base_model, str) and identity.base_model


@pytest.mark.parametrize(
    "hostile",
    [
        "'; DROP TABLE score; --",
        "Robert'); DROP TABLE model;--",
        "\x00\x01\x02",
        "((((((((((",
        ")))]]]",
        "𝔊𝔓𝔗-4 🤖",
        "模型",
        "a" * 10_000,
        "2024-05-13",
        "_high_16K_thinking",
        "../../etc/passwd",
        "<script>alert(1)</script>",
    ],
)
def test_hostile_strings(hostile: str) -> None:
    identity = resolve(hostile, source="x")
    assert identity.base_model
    assert collapse_standard(collapse_standard(hostile)) == collapse_standard(hostile)


# --------------------------------------------------------------------------------------------
# Cross-source matching: hand-checked AA ↔ Epoch pairs of the same base model
# --------------------------------------------------------------------------------------------

# (Artificial Analysis `name`, Epoch `Model version`) in tests/fixtures/model-pairs/: checked by
# hand against the ECI file's "Model name" column and the developers' naming. Configurations
# differ within a pair on purpose.
AA_EPOCH_PAIRS = aa_epoch_pairs()


def test_pairs_name_real_dataset_rows(aa_csv: Path, epoch_dir: Path) -> None:
    aa_names = set(pd.read_csv(aa_csv)["name"])
    epoch_versions: set[str] = set()
    for path in epoch_dir.glob("*.csv"):
        frame = pd.read_csv(path)
        if "Model version" in frame:
            epoch_versions |= set(frame["Model version"].dropna())
    assert {a for a, _ in AA_EPOCH_PAIRS} <= aa_names
    assert {e for _, e in AA_EPOCH_PAIRS} <= epoch_versions


def test_cross_source_match_rate() -> None:
    assert len(AA_EPOCH_PAIRS) >= 40
    rate, unmatched = match_rate(AA_EPOCH_PAIRS)
    for aa, epoch, base_aa, base_epoch in unmatched:
        print(f"unmatched: {aa!r} -> {base_aa!r}  vs  {epoch!r} -> {base_epoch!r}")
    print(f"match rate {rate:.3f} over {len(AA_EPOCH_PAIRS)} pairs")
    assert rate >= 0.90


def test_match_rate_needs_pairs() -> None:
    with pytest.raises(ValueError):
        match_rate([])
