"""What a name says about how a model was run: the settings of a configuration.

A configuration is one model artefact plus its settings. Settings are read from the name
("GPT-5 (high)", "claude-opus-4-20250514_16K", "o4-mini High (April 2025)", "Llama-2-7B-GPTQ") and
from what a source states beside it (``model_info.additional_details``: ``inference_effort``,
``precision``, ``reasoning_effort``, ``quantization``); they become flags on the configuration
and fold at the base model: two settings of one model are two configurations of one base model.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from functools import lru_cache
from typing import Any, Literal, cast

from pydantic import BaseModel, ConfigDict

from evalhouse.curation.name_rules import NameRules
from evalhouse.curation.names import text as T
from evalhouse.curation.names.dates import combine, name_dates

ReasoningMode = Literal["reasoning", "non_reasoning", "adaptive"]
Effort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]

#: Keys of ``model_info.additional_details`` that state a setting, and which setting.
DETAIL_KEYS = {
    "inference_effort": "effort",
    "reasoning_effort": "effort",
    "effort": "effort",
    "precision": "precision",
    "torch_dtype": "precision",
    "dtype": "precision",
    "quantization": "quantisation",
    "quantisation": "quantisation",
    "thinking_budget": "thinking_budget",
    "provider": "provider",
    "inference_provider": "provider",
}


class Settings(BaseModel):
    """A configuration's settings. ``None`` means nothing says."""

    model_config = ConfigDict(frozen=True)

    reasoning_mode: ReasoningMode | None = None
    effort: Effort | None = None
    thinking_budget: int | None = None
    context_variant: str | None = None
    preview: str | None = None  # the release channel a name states: "preview", "exp" or "beta"
    date_tag: str | None = None  # ISO with its precision: 2024-08-06, 2024-08, --05-28 (year unknown)
    checkpoint: str | None = None
    quantisation: str | None = None
    precision: str | None = None
    provider: str | None = None
    alias: str | None = None  # a moving alias: "latest", or "chatgpt" (the ChatGPT versions of a model)
    prompting: str | None = None  # a prompting method written into the name ("CoT GPT-4")

    def qualifiers(self) -> str:
        """``|mode=reasoning|effort=high|date=2025-08-07`` — the configuration id's suffix, fixed order."""
        parts = [
            ("mode", self.reasoning_mode),
            ("effort", self.effort),
            ("budget", None if self.thinking_budget is None else budget_text(self.thinking_budget)),
            ("context", self.context_variant),
            ("preview", self.preview),
            ("date", self.date_tag),
            ("checkpoint", self.checkpoint),
            ("quant", self.quantisation),
            ("precision", self.precision),
            ("provider", self.provider),
            ("alias", self.alias),
            ("prompting", self.prompting),
        ]
        return "".join(f"|{k}={v}" for k, v in parts if v is not None)


def budget_text(tokens: int) -> str:
    """A thinking budget in thousands, as names write it: 32000 and 32768 are both "32k" (sources
    write one knob as either), 24576 is "24k", 1500 is "1.5k"."""
    if tokens > 0 and tokens % 1000 and not tokens % 1024:
        return f"{tokens // 1024}k"
    return f"{round(tokens / 1000, 1):g}k"


_EFFORT_ALT = "minimal|low|medium|high|xhigh|x-high|extra[ -]high|max|maximum"
#: An effort as a hyphenated suffix after a date stamp or a release word: "o3-2025-04-16-high",
#: "grok-3-mini-beta-high", "o3-mini-high" (not after a version: "gpt2-medium" is a size).
SUFFIX_EFFORT = re.compile(r"(?:(?<=\d\d)|(?<=beta)|(?<=preview)|(?<=mini))-(minimal|low|medium|high|xhigh)$", re.I)
_RE_ADAPTIVE = re.compile(r"\badaptive\b")
_RE_NON_REASONING = re.compile(
    r"\bnon[\s_-]?(?:reasoning|thinking|think)\b|\bno[\s_-]?(?:thinking|think|reasoning)\b|\bnothink"
)
_RE_REASONING = re.compile(r"(?<![a-z])(?:reasoning|reasoner|thinking|think|thinker)(?![a-z])")
_RE_EFFORT = (
    re.compile(rf"\(\s*({_EFFORT_ALT})\s*[),]"),
    re.compile(rf"\b({_EFFORT_ALT})[\s_-]+(?:effort|reasoning)\b"),
    re.compile(rf"\b(?:effort|reasoning)[\s_:=-]+(?:effort[\s_:=-]+)?({_EFFORT_ALT})\b"),
    re.compile(rf"_({_EFFORT_ALT})(?![a-z])"),
    re.compile(r"-(xhigh|minimal)$"),
    SUFFIX_EFFORT,
)
# A bare effort word as the name's last word, after a complete name: "o4-mini High", "GPT-5 Medium".
_RE_TRAILING_EFFORT = re.compile(r"(?<=\S)\s+(minimal|low|medium|high|xhigh|x-high)$")  # "max" names tiers (Qwen3 Max)
_RE_BUDGET = (
    re.compile(r"_(\d+(?:\.\d+)?)k\b"),
    # "(16K thinking)", "(24k think)", "(32k thinking tokens)": a thinking budget, not a context
    re.compile(r"(\d+(?:\.\d+)?)k[\s_-]*think(?:ing)?(?:[\s_-]*tokens)?\b"),
    re.compile(r"thinking[\s_-]*(?:budget[\s_:=-]*)?(\d+(?:\.\d+)?)k\b"),
)
_RE_CONTEXT = (
    re.compile(r"\(\s*(\d+(?:\.\d+)?\s*[km])\s*\)"),
    re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?k)(?![a-z0-9])"),
    re.compile(r"[-\s]([1-9]m)$"),
)
_RE_PREVIEW = re.compile(r"(?<![a-z])(preview|experimental|exp|beta)(?![a-z])")


def _preview_channel(text: str) -> str | None:
    """The pre-release channel a name states. An experimental and a preview release of one model
    on one date are kept apart (Gemini 2.5 Pro exp-03-25 and preview-03-25 score differently)."""
    found = _RE_PREVIEW.search(text)
    if found is None:
        return None
    word = found.group(1)
    return "exp" if word == "experimental" else word


_RE_LATEST = re.compile(r"(?<![a-z])latest(?![a-z])")
_RE_COT = re.compile(r"(?<![a-z])cot(?![a-z])")
_SHOT_WORDS = {"zero": "0", "one": "1", "two": "2", "three": "3", "four": "4", "five": "5", "few": "few"}
#: An evaluation's shot count written into a model's name: "LLAMA 2-CHAT 7B (8-shot)",
#: "GLaM (64B/64E) (One-shot)", "8-shot Minerva". It is the setup of the result, not the model.
SHOTS = re.compile(
    r"\(\s*(\d+|zero|one|two|three|four|five|few)[\s-]?shots?\s*\)|(?<![\w-])(\d+|zero|one|few)[\s-]shots?(?![\w-])",
    re.IGNORECASE,
)


def name_setup(name: str, r: NameRules | None = None) -> dict[str, str]:
    """The evaluation setup a model's name states, as cell setup keys: its shot count
    ("LLAMA 2-CHAT 7B (8-shot)") and, with the rules, an edit format ("Qwen3 235B A22B diff, …")."""
    return dict(_name_setup(str(name), r))


@lru_cache(maxsize=T.TEXT_CACHE)
def _name_setup(name: str, r: NameRules | None) -> tuple[tuple[str, str], ...]:
    setup: list[tuple[str, str]] = []
    found = SHOTS.search(name)
    if found is not None:
        word = (found.group(1) or found.group(2)).lower()
        setup.append(("shots", _SHOT_WORDS.get(word, word)))
    if r is not None and r.edit_format_hint.search(name) and (edit := r.edit_format.search(name)):
        setup.append(("edit_format", edit.group(1).lower()))
    return tuple(setup)


_RE_CHECKPOINT = re.compile(r"(?<![0-9a-z.])(0\d\d)(?![0-9a-z.])")
_RE_QUANT = re.compile(r"(?<![a-z0-9])(q\d+(?:_[a-z0-9]+)*)(?![a-z0-9])")


def _first_group(patterns: Iterable[re.Pattern[str]], text: str) -> str | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


_WHITESPACE = re.compile(r"\s+")
_LAST_PARENTHETICAL = re.compile(r"\([^()]*\)\s*$")


def _effort(text: str, r: NameRules) -> Effort | None:
    found = _first_group(_RE_EFFORT, text)
    if found is None:
        trailing = _RE_TRAILING_EFFORT.search(_drop_dated_parentheticals(text))
        if trailing is not None and not _after_tier_stem(text[: trailing.start()], r):
            found = trailing.group(1)
    if found is None:
        return None
    level = r.effort_aliases.get(_WHITESPACE.sub(" ", found), found)
    return cast(Effort, level) if level in r.efforts else None


def _drop_dated_parentheticals(text: str) -> str:
    """ "o4-mini high (april 2025)" → "o4-mini high": a trailing effort word sits before the date."""
    return T.space(_LAST_PARENTHETICAL.sub("", text))


def _after_tier_stem(head: str, r: NameRules) -> bool:
    """True when the last word before a trailing effort word is a stem that uses it as a tier."""
    words = T.tokenise(head)
    alpha = [w for w in words if not T.NUMBER.match(w)]
    return bool(alpha) and alpha[-1] in r.tier_stems


def _budget(text: str) -> int | None:
    found = _first_group(_RE_BUDGET, text)
    return None if found is None else round(float(found) * 1000)


def _context(budget_free: str, r: NameRules) -> str | None:
    found = _first_group(_RE_CONTEXT, budget_free)
    if found is None:
        return None
    found = found.replace(" ", "")
    if found.endswith("m") and float(found[:-1]) >= r.min_params_millions:
        return None  # "Gemma 3 270M": a size, not a context window
    return found


def _date_tag(text: str) -> str | None:
    """The date the name writes, ISO with its precision (:mod:`evalhouse.curation.names.dates`)."""
    found = combine(name_dates(text))
    return None if found is None else found.iso


#: The ChatGPT versions of a model: "chatgpt-4o-latest", "ChatGPT-4o-latest (2024-08-08)",
#: "GPT-4o (ChatGPT)", "GPT-4o (March 2025, chatgpt-4o-latest)". A bare "ChatGPT" is a product.
_RE_CHATGPT = re.compile(r"\bchatgpt[\s_-]*\d|^(?:openai[/ ])?(?:gpt|o\d)[^()]*\(\s*chatgpt\s*\)")
#: "<organisation> API": served by that organisation's API ("Qwen3 235B A22B … Alibaba API").
_RE_ORG_API = re.compile(r"\b([a-z0-9]+)[\s_-]+api\b")


def _alias(text: str) -> str | None:
    if "chatgpt" in text and _RE_CHATGPT.search(text):
        return "chatgpt"
    return "latest" if "latest" in text and _RE_LATEST.search(text) else None


def _reasoning_mode(text: str, effort: str | None, budget: int | None) -> ReasoningMode | None:
    if _RE_ADAPTIVE.search(text):
        return "adaptive"
    if _RE_NON_REASONING.search(text):
        return "non_reasoning"
    if _RE_REASONING.search(text) or budget is not None:
        return "reasoning"
    if effort is not None and effort != "minimal":
        return "reasoning"  # an effort setting only exists on reasoning configurations
    return None


def _packaging(tokens: list[str], text: str, r: NameRules) -> tuple[str | None, str | None, str | None]:
    quant = next((t for t in tokens if t in r.quant_words), None)
    gguf_level = _RE_QUANT.search(text)
    if gguf_level is not None:
        quant = f"{quant}-{gguf_level.group(1)}" if quant else gguf_level.group(1)
    precision = next((r.precisions[t] for t in tokens if t in r.precisions), None)
    provider = next((t for t in tokens[:1] if t in r.providers), None) or next(
        (t for t in tokens if t in r.providers and t not in r.org), None
    )
    if provider is None and "api" in text:
        stated = _RE_ORG_API.search(text)
        if stated is not None and (stated.group(1) in r.org or stated.group(1) in r.providers):
            provider = stated.group(1)
    return quant, precision, provider


def read_settings(name: str, r: NameRules, details: Mapping[str, Any] | None = None) -> Settings:
    """The settings a name (and the source's stated details) say: "GPT-5 (high)" → effort high;
    "claude-opus-4-20250514_16K" → reasoning, 16,000-token thinking budget, dated 2025-05-14."""
    text = T.fold(str(name)).lower()
    repo_org = None
    if "/" in text and T.REPO_ID.match(text):
        repo_org, text = text.split("/", 1)
    found = _text_settings(text, r)
    if repo_org in r.providers:  # "chutes/Qwen3-32B": served by a provider, not published by it
        found = found.model_copy(update={"provider": repo_org})
    return _with_details(found, details or {}, r)


@lru_cache(maxsize=T.TEXT_CACHE)
def _text_settings(text: str, r: NameRules) -> Settings:
    """What a folded, lower-case name says (without a repository's organisation). Cached: a record's
    repository id and its display name often read alike ("meta/Llama-3-8B" and "Llama-3-8B")."""
    effort = _effort(text, r)
    budget = _budget(text)
    budget_free = text
    if budget is not None:  # else no budget pattern matches: nothing to take out
        for pattern in _RE_BUDGET:
            budget_free = pattern.sub(" ", budget_free)
    tokens = T.tokenise(text)
    quant, precision, provider = _packaging(tokens, text, r)
    has_other_number = T.count_numbers(tokens, r) > 1
    checkpoint = _first_group([_RE_CHECKPOINT], text) if has_other_number else None
    return Settings(
        reasoning_mode=_reasoning_mode(text, effort, budget),
        effort=effort,
        thinking_budget=budget,
        context_variant=_context(budget_free, r),
        preview=_preview_channel(text),
        date_tag=_date_tag(text),
        checkpoint=checkpoint,
        quantisation=quant,
        precision=precision,
        provider=provider,
        alias=_alias(text),
        prompting="cot" if _RE_COT.search(text) else None,
    )


def _with_details(found: Settings, details: Mapping[str, Any], r: NameRules) -> Settings:
    """What the source states beside the name wins over what the name implies."""
    if not details:
        return found
    update: dict[str, Any] = {}
    for key, field in DETAIL_KEYS.items():
        value = details.get(key)
        if value in (None, "", "unknown", "none", "None"):
            continue
        text = str(value).strip().lower()
        if field == "effort":
            level = r.effort_aliases.get(text, text)
            if level in r.efforts:
                update["effort"] = level
                if found.reasoning_mode is None and level != "minimal":
                    update["reasoning_mode"] = "reasoning"
        elif field == "precision":
            update["precision"] = r.precisions.get(text.replace("torch.", ""), text)
        elif field == "thinking_budget":
            try:
                update["thinking_budget"] = int(float(text))
            except ValueError:
                continue
        else:
            update[field] = text
    return found.model_copy(update=update) if update else found
