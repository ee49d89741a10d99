"""Model names: identity (developer-scoped, distinct models kept apart), settings, paper 002's collapses.

Every expected value below was written from the rules (paper 002 Appendix E, paper 000 §1, the
module docstrings of evalhouse.curation.names), not copied from the functions' output; the
labelled pairs in tests/fixtures/model-pairs/identity_pairs.csv are real names from the shared
datasets and the EEE datastore corpus, each with the reason for its label.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from model_pairs import aa_epoch_pairs
from sizes import examples

from evalhouse.curation import identity
from evalhouse.curation.identity import RESOLVED_CACHE, resolve_model
from evalhouse.curation.name_rules import NameRulesError, rules_from
from evalhouse.curation.names import NameHints, Settings, collapse_aggressive, is_generic_name, read_settings
from evalhouse.curation.names import collapse_standard as _collapse_standard
from evalhouse.curation.names import resolve as _resolve
from evalhouse.curation.names import strip_variant_suffixes as _strip_variant_suffixes
from evalhouse.curation.registry import load_registry

REG = load_registry()
RULES = REG.name_rules
PAIRS_CSV = Path(__file__).parents[1] / "fixtures" / "model-pairs" / "identity_pairs.csv"


def resolve(name: str, source: str | None = None, **kw: object):
    return _resolve(name, REG, source=source, **kw)  # type: ignore[arg-type]


def collapse_standard(name: str, **kw: object) -> str:
    return _collapse_standard(name, RULES, **kw)  # type: ignore[arg-type]


def collapse_aggressive_(name: str, **kw: object) -> str:
    return collapse_aggressive(name, RULES, **kw)  # type: ignore[arg-type]


def strip_variant_suffixes(name: str) -> str:
    return _strip_variant_suffixes(name, RULES)


# --------------------------------------------------------------------------------------------
# The tricky-name table: (name, paper 002 standard collapse, evalhouse base model id)
# --------------------------------------------------------------------------------------------

TRICKY = [
    # AA display names: serving suffixes go, tiers move behind the version, ids are developer-scoped
    ("Claude Sonnet 5 (Adaptive Reasoning, Low Effort)", "claude 5 sonnet", "anthropic/claude-5-sonnet"),
    ("Claude Opus 4.5 (Non-reasoning)", "claude 4.5 opus", "anthropic/claude-4.5-opus"),
    ("Claude 4.5 Sonnet (Reasoning)", "claude 4.5 sonnet", "anthropic/claude-4.5-sonnet"),
    ("GPT-5.5 (xhigh)", "gpt 5.5", "openai/gpt-5.5"),
    ("Grok 4.3 (Non-reasoning)", "grok 4.3", "xai/grok-4.3"),
    ("Gemini 3.1 Pro Preview", "gemini 3.1 pro", "google/gemini-3.1-pro"),
    ("DeepSeek R1 (Jan '25)", "deepseek r1", "deepseek/deepseek-r1"),
    ("DeepSeek V3 0324", "deepseek v3", "deepseek/deepseek-v3"),
    ("MiMo-V2-Flash (Feb 2026)", "mimo v2 flash", "xiaomi/mimo-v2-flash"),
    ("GPT-4o (March 2025, chatgpt-4o-latest)", "gpt 4o", "openai/gpt-4o"),
    # instruction tuning is identity: paper 002's collapse drops it, evalhouse keeps it
    ("Llama 3.1 Instruct 8B", "llama 3.1 8b", "meta/llama-3.1-8b-instruct"),
    ("Qwen3 235B A22B 2507 (Reasoning)", "qwen 3 235b a22b", "qwen/qwen-3-235b-a22b"),
    ("Qwen3.5 122B A10B (Non-reasoning)", "qwen 3.5 122b a10b", "qwen/qwen-3.5-122b-a10b"),
    ("gpt-oss-120b (high)", "gpt oss 120b", "openai/gpt-oss-120b"),
    ("Claude 3 Opus", "claude 3 opus", "anthropic/claude-3-opus"),
    ("Gemma 3 4B", "gemma 3 4b", "google/gemma-3-4b"),
    ("Gemma 3 270M", "gemma 3 270m", "google/gemma-3-270m"),
    ("Mistral Small 3.1", "mistral small 3.1", "mistral/mistral-small-3.1"),
    ("Mistral Medium", "mistral medium", "mistral/mistral-medium"),
    ("Falcon-180B", "falcon 180b", "tii/falcon-180b"),
    ("us.anthropic.claude-3-5-sonnet-20241022-v2:0", "claude 3.5 sonnet", "anthropic/claude-3.5-sonnet"),
    # repository ids: the organisation is the developer (folded through the registry)
    ("meta-llama/Llama-3.1-8B-Instruct", "llama 3.1 8b", "meta/llama-3.1-8b-instruct"),
    ("Qwen/Qwen2.5-72B-Instruct", "qwen 2.5 72b", "qwen/qwen-2.5-72b-instruct"),
    ("TencentARC/LLaMA-Pro-8B-Instruct", "llama pro 8b", "tencent/llama-pro-8b-instruct"),
    ("Qwen/Qwen2.5-Coder-32B-Instruct", "qwen 2.5 coder 32b", "qwen/qwen-2.5-coder-32b-instruct"),
    (
        "deepseek-ai/DeepSeek-R1-Distill-Qwen-32B",
        "deepseek r1 distill qwen 32b",
        "deepseek/deepseek-r1-distill-qwen-32b",
    ),
    ("google/gemma-2-27b-it", "gemma 2 27b", "google/gemma-2-27b-instruct"),
    ("01-ai/Yi-1.5-34B-Chat", "yi 1.5 34b", "01-ai/yi-1.5-34b-chat"),
    ("mistralai/Mistral-7B-Instruct-v0.3", "mistral 7b", "mistral/mistral-v0.3-7b-instruct"),
    # names that must keep what their parentheses, slashes and "w/" say
    ("LLaVA (ViT-L/16-224)", "16 224", "liuhaotian/llava-vit-l-16-224"),
    ("GLaM (64B/64E)", "64e", "google/glam-64b-64e"),
    ("DDCoT (T5)", "ddcot", "unknown/ddcot-t5"),
    ("Aguvis-72B w/ GPT-4o", "gpt 4o", "unknown/aguvis-w-gpt-4o-72b"),
    # the common-size whitelist and its guard
    ("llama 2 7", "llama 2 7b", "meta/llama-2-7b"),  # second bare number, a common size
    ("GPT 3 175", "gpt 3 175", "openai/gpt-3-175"),  # guarded: a bare number in GPT is no size
]


@pytest.mark.parametrize(("name", "standard", "base"), TRICKY, ids=[t[0] for t in TRICKY])
def test_tricky_names(name: str, standard: str, base: str) -> None:
    assert collapse_standard(name) == standard
    assert resolve(name).base_model == base


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
    ("Gemini 3.1 Pro Preview", {"preview": "preview", "reasoning_mode": None, "date_tag": None}),
    ("DeepSeek R1 (Jan '25)", {"date_tag": "2025-01", "preview": None}),
    ("MiMo-V2-Flash (Feb 2026)", {"date_tag": "2026-02"}),
    ("Gemini 2.5 Pro Preview (Mar' 25)", {"date_tag": "2025-03", "preview": "preview"}),
    ("gpt-5-2025-08-07_high", {"reasoning_mode": "reasoning", "effort": "high", "date_tag": "2025-08-07"}),
    ("grok-3-mini-beta_low", {"effort": "low", "preview": "beta"}),
    ("gemini-2.5-pro-exp-03-25", {"preview": "exp", "date_tag": "--03-25"}),  # no year: --MM-DD
    (
        "claude-opus-4-20250514_16K",
        {"reasoning_mode": "reasoning", "thinking_budget": 16000, "effort": None, "date_tag": "2025-05-14"},
    ),
    ("gemini-2.5-flash-preview-04-17 (16K thinking)", {"thinking_budget": 16000, "preview": "preview"}),
    ("Claude Opus 4 (Thinking 16K)", {"thinking_budget": 16000, "reasoning_mode": "reasoning"}),
    ("DeepSeek-V3.1_thinking", {"reasoning_mode": "reasoning", "thinking_budget": None}),
    ("Claude Sonnet 4 (1M)", {"context_variant": "1m", "thinking_budget": None}),
    ("Phi-3-medium-128k-instruct", {"context_variant": "128k"}),
    ("Gemma 3 270M", {"context_variant": None}),  # 270M is a size, not a context window
    ("chatgpt-4o-03-27-2025", {"date_tag": "2025-03-27"}),
    ("Kimi K2 Thinking", {"reasoning_mode": "reasoning"}),
    # HAL: a bare effort word after the name, a release month in parentheses
    ("o4-mini High (April 2025)", {"effort": "high", "date_tag": "2025-04"}),
    ("GPT-5 Medium (August 2025)", {"effort": "medium"}),
    ("Mistral Medium", {"effort": None}),  # a product tier
    ("Qwen3 Max", {"effort": None}),  # "Max" names a tier, never a trailing effort
    ("Claude 4 Opus 20250514, extended thinking", {"reasoning_mode": "reasoning"}),
    ("doubao seed 1.6 250615", {"date_tag": "2025-06-15"}),
    # packaging: quantisation, precision, provider
    ("TheBloke/Llama-2-7B-GPTQ", {"quantisation": "gptq"}),
    ("QwQ-32B-Preview-Q8_0-GGUF", {"quantisation": "gguf-q8_0", "preview": "preview"}),
    ("Llama-4-Maverick-17B-128E-Instruct-FP8", {"precision": "fp8"}),
    ("chutes/Qwen3-32B", {"provider": "chutes"}),
    ("gemini-1.5-pro-002", {"checkpoint": "002"}),
]


@pytest.mark.parametrize(("name", "expected"), FLAGS, ids=[f[0] for f in FLAGS])
def test_settings(name: str, expected: dict[str, object]) -> None:
    flags = read_settings(name, RULES).model_dump()
    assert {k: flags[k] for k in expected} == expected


def test_stated_details_are_settings() -> None:
    stated = read_settings("openai/o4-mini", RULES, {"inference_effort": "high", "precision": "torch.bfloat16"})
    assert (stated.effort, stated.reasoning_mode, stated.precision) == ("high", "reasoning", "bfloat16")
    assert isinstance(stated, Settings)
    with pytest.raises(ValueError):
        stated.effort = "low"  # type: ignore[misc]


# --------------------------------------------------------------------------------------------
# Family, recorded size, aggressive collapse (paper 002)
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
    assert collapse_aggressive_(name, family=family) == expected


@pytest.mark.parametrize(
    ("name", "family"),
    [
        ("text-bison", "palm"),
        ("J1-Jumbo", "jurassic"),
        ("o3-mini", "openai-o"),
        ("Command R Plus", "command"),
        ("Llama 3.1 Instruct 70B", "llama"),
        ("cohere/command-xlarge-beta", "command"),
    ],
)
def test_a_family_is_never_a_generic_word(name: str, family: str) -> None:
    assert resolve(name).family == family
    assert resolve(name).family not in RULES.generic_family_words


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
        ("Qwen/Qwen2.5-72B-Instruct", "Qwen/Qwen2.5-72B"),
        ("GLaM (64B/64E)", "GLaM (8B/64E)"),
    ]
    for a, b in apart:
        assert resolve(a).base_model != resolve(b).base_model, (a, b)


def test_instruct_models_keep_their_parent_as_lineage() -> None:
    ident = resolve("Qwen/Qwen2.5-72B-Instruct")
    assert ident.derived_from == "qwen/qwen-2.5-72b"
    assert resolve("Qwen/Qwen2.5-72B").derived_from is None
    assert ident.match_key == resolve("Qwen/Qwen2.5-72B").match_key  # a candidate link, never a merge


def test_two_repositories_are_never_one_configuration() -> None:
    repack = resolve("TheBloke/Llama-2-7B-GPTQ")
    original = resolve("meta-llama/Llama-2-7b-hf")
    assert repack.base_model == original.base_model == "meta/llama-2-7b"
    assert repack.configuration != original.configuration and repack.repo == "thebloke/llama-2-7b-gptq"
    assert resolve("someuser/Yi-1.5-34B").configuration != resolve("01-ai/Yi-1.5-34B").configuration
    # a documented re-upload shares the original's base model, never its configuration
    copy, original = resolve("alpindale/WizardLM-2-8x22B"), resolve("WizardLM-2-8x22B", developer="microsoft")
    assert copy.base_model == original.base_model == "microsoft/wizardlm-2-8x22b"
    assert copy.configuration == "microsoft/wizardlm-2-8x22b|repo=alpindale/wizardlm-2-8x22b" != original.configuration


def test_a_shot_count_in_a_name_is_the_runs_setup_not_the_model() -> None:
    plain = resolve("Llama-2-13b-chat", developer="meta")
    for name, shots in (("LLAMA 2-CHAT 13B (8-shot)", "8"), ("Llama-2-13b-chat 0-shot", "0")):
        ident = resolve(name, developer="meta")
        assert ident.configuration == plain.configuration, name
        assert ident.setup == {"shots": shots}
    glam = {resolve(f"GLaM (64B/64E) ({s})").setup["shots"] for s in ("Zero-shot", "One-shot", "3-shot", "16-shot")}
    assert glam == {"0", "1", "3", "16"}
    assert resolve("8-shot Minerva").base_model == resolve("Minerva").base_model
    assert resolve("Oneshot-7B").setup == {} and resolve("Llama-2-13b-chat").setup == {}


def test_documented_authorship_beats_a_known_developer_a_source_misstates() -> None:
    """HELM classic files GPT-J 6B and GPT-NeoX 20B under openai; the registry documents EleutherAI."""
    for name in ("GPT-J 6B", "GPT-NeoX 20B"):
        assert resolve(name, developer="openai").developer == "eleutherai", name
    # an organisation the registry does not know (a fine-tuner) is never overridden
    assert resolve("someuser/gpt-j-6b-finetuned", developer="someuser").developer == "someuser"
    # a joint statement takes the first organisation the registry knows
    assert resolve("gpt-j-6b", developer="EleutherAI,LAION").developer == "eleutherai"


def test_developer_spellings_fold() -> None:
    for dev in ("zai", "zai-org", "zhipu", "zhipu-ai", "Z AI", "glm"):
        assert resolve("GLM-4.5", developer=dev).developer == "zhipu", dev
    for dev in ("mistral", "mistralai", "Mistral AI"):
        assert resolve("Mistral Large 2", developer=dev).developer == "mistral"
    for dev in ("moonshot", "moonshotai", "Moonshot AI"):
        assert resolve("Kimi K2", developer=dev).developer == "moonshot"


# --------------------------------------------------------------------------------------------
# The labelled set: real names, same / different configuration and base model
# --------------------------------------------------------------------------------------------


def _labelled() -> list[dict[str, str]]:
    with PAIRS_CSV.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def test_labelled_pairs_resolve_right() -> None:
    rows = _labelled()
    assert len(rows) >= 60
    kinds = " ".join(r["note"] for r in rows)
    for word in ("instruct", "fine-tune", "quantis", "effort", "snapshot", "slash", "provider"):
        assert word in kinds, f"the labelled set has no {word} case"
    wrong = []
    for row in rows:
        a = resolve(row["a_name"], row["a_source"], hints=NameHints(details=json.loads(row["a_details"] or "{}")))
        b = resolve(row["b_name"], row["b_source"], hints=NameHints(details=json.loads(row["b_details"] or "{}")))
        same_base, same_config = a.base_model == b.base_model, a.configuration == b.configuration
        if (same_base, same_config) != (row["same_base"] == "yes", row["same_config"] == "yes"):
            wrong.append((row["note"], a.configuration, b.configuration))
    for note, a_conf, b_conf in wrong:
        print(f"wrong: {note}: {a_conf} vs {b_conf}")
    rate = 1 - len(wrong) / len(rows)
    print(f"labelled identity pairs: {len(rows) - len(wrong)} of {len(rows)} right ({rate:.1%})")
    assert rate >= 0.95


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


# --------------------------------------------------------------------------------------------
# Generic names
# --------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    "name", ["Baseline", "Ours", "ours (full)", "unknown", "Model A", "human", "Random", "N/A", ""]
)
def test_generic_names_are_source_scoped(name: str) -> None:
    assert is_generic_name(name, RULES)
    a = resolve(name, source="Paper A")
    b = resolve(name, source="paper-b")
    assert a.base_model.startswith("paper-a::") and b.base_model.startswith("paper-b::")
    assert a.base_model != b.base_model and a.family != b.family
    assert a.configuration == a.base_model
    loose = resolve(name)
    assert loose.base_model.startswith("generic::") and loose.is_scoped


@pytest.mark.parametrize("name", ["GPT-4", "Model-X 7B", "Human-LLaMA 7B", "Ourania 2", "Mistral"])
def test_model_names_are_not_generic(name: str) -> None:
    assert not is_generic_name(name, RULES)
    assert not resolve(name, source="s").is_scoped


def test_resolve_shape() -> None:
    identity = resolve("GPT-5 (high)", source="artificial-analysis")
    assert identity.base_model == "openai/gpt-5"
    assert identity.family == "gpt"
    assert identity.configuration == "openai/gpt-5|mode=reasoning|effort=high|date=2025-08-07"  # its only snapshot
    assert identity.developer == "openai" and identity.developer_inferred
    assert identity.flags.effort == "high"


def test_token_file_is_versioned_and_validated() -> None:
    raw = dict(REG.model_tokens)
    assert REG.versions["model_tokens"] == raw["version"]
    assert rules_from(raw).version == raw["version"]
    for key, value in [("tier_tokens", ["Opus"]), ("tail_separator_pattern", "("), ("variant_tokens", ["it"])]:
        with pytest.raises(NameRulesError, match=key):
            rules_from({**raw, key: value})


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
        assert (identity.base_model and "/" in identity.base_model) or identity.is_scoped
        assert identity.family and identity.family not in RULES.generic_family_words, name
        for collapse in (collapse_standard, collapse_aggressive_, strip_variant_suffixes):
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


@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT)
@example("IT0")  # an alphabetic run that is itself a dropped word ("it" = instruction-tuned)
def test_collapses_are_idempotent_on_any_text(text: str) -> None:
    for collapse in (collapse_standard, collapse_aggressive_, strip_variant_suffixes):
        once = collapse(text)
        assert collapse(once) == once


@settings(max_examples=examples(500), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_TEXT, st.one_of(st.none(), st.text(max_size=10)))
def test_resolve_never_raises_and_is_stable(text: str, source: str | None) -> None:
    identity = resolve(text, source=source)
    assert isinstance(identity.base_model, str) and identity.base_model
    assert identity.configuration.startswith(identity.base_model)
    assert resolve(text, source=source) == identity


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
    """Strict identity keeps four pairs apart that only a curator could join (a version or size
    one source omits: "Claude Instant" vs claude-instant-1.2, "Mistral 7B Instruct" vs v0.3 …);
    they stay candidate links (one match_key)."""
    assert len(AA_EPOCH_PAIRS) >= 40
    unmatched = []
    for aa, epoch in AA_EPOCH_PAIRS:
        a, e = resolve(aa, "artificial-analysis"), resolve(epoch, "epoch-benchmarks")
        if a.base_model != e.base_model:
            unmatched.append((aa, epoch, a.base_model, e.base_model))
    for aa, epoch, base_aa, base_epoch in unmatched:
        print(f"unmatched: {aa!r} -> {base_aa!r}  vs  {epoch!r} -> {base_epoch!r}")
    rate = 1 - len(unmatched) / len(AA_EPOCH_PAIRS)
    print(f"match rate {rate:.3f} over {len(AA_EPOCH_PAIRS)} pairs")
    assert rate >= 0.95


def test_a_model_named_again_resolves_from_memory_and_any_field_it_depends_on_tells_two_apart() -> None:
    info = {"id": "openai/o3-mini", "name": "o3-mini", "developer": "OpenAI", "additional_details": {}}
    first = resolve_model(info, "test", REG)
    assert resolve_model(dict(info), "test", REG) is first  # remembered: the same answer, not recomputed
    high = resolve_model({**info, "additional_details": {"reasoning_effort": "high"}}, "test", REG)
    assert high.config_id != first.config_id  # a setting detail is part of what is remembered
    assert resolve_model(info, "other-source", REG).scope in (None, "other-source")
    renamed = resolve_model({**info, "name": "o3 mini (Jan)"}, "test", REG)
    assert renamed.source_model_name == "o3 mini (Jan)" and renamed.config_name == "o3 mini (Jan)"


def test_the_remembered_resolutions_are_bounded_and_a_forgotten_name_resolves_to_the_same_identity() -> None:
    """The two identity caches hold RESOLVED_CACHE names each (memory: a 10^6-score import names
    40,000 models); a name they no longer hold is resolved again to an equal answer, not another."""
    assert identity._resolve.cache_info().maxsize == identity._resolved.cache_info().maxsize == RESOLVED_CACHE
    assert 4096 <= RESOLVED_CACHE <= 65536
    info = {"id": "meta-llama/Llama-3.1-8B-Instruct", "name": "Llama 3.1 8B Instruct", "additional_details": {}}
    first = resolve_model(info, "test", REG)
    identity._resolved.cache_clear()
    identity._resolve.cache_clear()
    again = resolve_model(info, "test", REG)
    assert again is not first and again == first
