"""Model identity from leaderboard names: source identifier → configuration → base model → family.

Leaderboards name the same model many ways ("Claude 4.5 Sonnet (Reasoning)",
"claude-sonnet-4-5-20250929_32K", "anthropic/claude-sonnet-4.5"), and one model appears under
several *configurations* (reasoning on/off, effort, thinking budget, context window, preview
checkpoint). Joining sources and deduplicating a grid both need one key per base model, so this
module turns a name into:

- :func:`collapse_standard` / :func:`collapse_aggressive` — paper 002's Appendix E collapses
  (variant level and family level), applied in the paper's order;
- :func:`strip_variant_suffixes` — paper 000's display-level base name (serving suffixes off,
  dated checkpoints kept);
- :func:`config_flags` — what the configuration suffixes said (mode, effort, budget, ...);
- :func:`best_default_configuration` — one configuration per base model;
- :func:`resolve` — everything at once, with generic names ("Ours", "Baseline") kept apart per
  source so they can never merge two unrelated systems.

Every token list and pattern lives in ``model_tokens.yaml`` (versioned, validated once at import):
a curator changes data, not code, and a key records which list produced it.
"""

from __future__ import annotations

import hashlib
import math
import re
import unicodedata
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any, Literal, cast

import yaml
from pydantic import BaseModel, ConfigDict

__all__ = [
    "MODEL_TOKENS_VERSION",
    "ConfigFlags",
    "ModelIdentity",
    "best_default_configuration",
    "collapse_aggressive",
    "collapse_standard",
    "config_flags",
    "is_generic_name",
    "match_rate",
    "paper000_base_name",
    "resolve",
    "strip_variant_suffixes",
]

ReasoningMode = Literal["reasoning", "non_reasoning", "adaptive"]
Effort = Literal["minimal", "low", "medium", "high", "xhigh", "max"]

_TOKENS_PATH = Path(__file__).parent / "registries" / "model_tokens.yaml"


# --------------------------------------------------------------------------------------------
# The token file: loaded and validated once, so a broken list fails at import, not mid-ingest.
# --------------------------------------------------------------------------------------------


@dataclass(frozen=True)
class _Tokens:
    version: str
    org: frozenset[str]
    serving_revision: re.Pattern[str]
    tail_separator: re.Pattern[str]
    underscore_variant: re.Pattern[str]
    efforts: tuple[str, ...]
    effort_aliases: dict[str, str]
    effort_context: frozenset[str]
    unambiguous_effort: frozenset[str]
    months: frozenset[str]
    drop: frozenset[str]
    reasoning: frozenset[str]
    negations: frozenset[str]
    api: frozenset[str]
    api_prefixes: tuple[re.Pattern[str], ...]
    quantisation: re.Pattern[str]
    revision: re.Pattern[str]
    checkpoint_stamp: re.Pattern[str]
    tiers: frozenset[str]
    common_sizes: frozenset[float]
    version_guard: re.Pattern[str]
    guard_developers: frozenset[str]
    min_params_millions: float
    variant_parenthetical: re.Pattern[str]
    preview_word: re.Pattern[str]
    legacy_parenthetical: re.Pattern[str]
    legacy_trailing: re.Pattern[str]
    generic_names: frozenset[str]
    generic_patterns: tuple[re.Pattern[str], ...]
    base_aliases: tuple[tuple[re.Pattern[str], str], ...]
    stem_aliases: dict[str, str]


def _words(raw: Mapping[str, Any], key: str) -> frozenset[str]:
    values = raw[key]
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise ValueError(f"model_tokens.yaml: {key!r} must be a list of non-empty strings")
    if any(v != v.lower().strip() for v in values):
        raise ValueError(f"model_tokens.yaml: {key!r} must be lower-case and trimmed")
    return frozenset(values)


def _regex(pattern: Any, key: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise ValueError(f"model_tokens.yaml: {key!r} must be a regex string")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise ValueError(f"model_tokens.yaml: {key!r} is not a valid regex: {exc}") from exc


def _load_tokens(path: Path = _TOKENS_PATH) -> _Tokens:
    """Read and validate the token file; every malformed entry is an import-time error."""
    raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    if not isinstance(raw, dict) or not isinstance(raw.get("version"), str):
        raise ValueError("model_tokens.yaml: a string 'version' field is required")
    efforts = tuple(raw["effort_levels"])
    aliases = {str(k): str(v) for k, v in raw["effort_aliases"].items()}
    if not set(aliases.values()) <= set(efforts):
        raise ValueError("model_tokens.yaml: effort_aliases must map onto effort_levels")
    legacy = raw["paper000_legacy"]
    base_aliases = tuple(
        (_regex(a["pattern"], "base_model_aliases"), str(a["replace"])) for a in raw["base_model_aliases"]
    )
    drop = (
        _words(raw, "generic_tokens")
        | _words(raw, "language_tokens")
        | _words(raw, "engine_tokens")
        | _words(raw, "month_tokens")
    )
    tiers = _words(raw, "tier_tokens")
    if tiers & drop:
        raise ValueError(f"model_tokens.yaml: tier tokens are also dropped: {sorted(tiers & drop)}")
    return _Tokens(
        version=raw["version"],
        org=_words(raw, "org_tokens"),
        serving_revision=_regex(raw["serving_revision_pattern"], "serving_revision_pattern"),
        tail_separator=_regex(raw["tail_separator_pattern"], "tail_separator_pattern"),
        underscore_variant=_regex(raw["underscore_variant_pattern"], "underscore_variant_pattern"),
        efforts=efforts,
        effort_aliases=aliases,
        effort_context=_words(raw, "effort_context_tokens"),
        unambiguous_effort=_words(raw, "unambiguous_effort_suffixes"),
        months=_words(raw, "month_tokens"),
        drop=drop,
        reasoning=_words(raw, "reasoning_tokens"),
        negations=_words(raw, "negation_tokens"),
        api=_words(raw, "api_tokens"),
        api_prefixes=tuple(_regex(p, "api_prefix_patterns") for p in raw["api_prefix_patterns"]),
        quantisation=_regex(raw["quantisation_pattern"], "quantisation_pattern"),
        revision=_regex(raw["revision_token_pattern"], "revision_token_pattern"),
        checkpoint_stamp=_regex(raw["checkpoint_stamp_pattern"], "checkpoint_stamp_pattern"),
        tiers=tiers,
        common_sizes=frozenset(float(s) for s in raw["common_sizes_b"]),
        version_guard=_regex(raw["version_guard_pattern"], "version_guard_pattern"),
        guard_developers=_words(raw, "version_guard_developers"),
        min_params_millions=float(raw["min_params_millions"]),
        variant_parenthetical=_regex(raw["variant_parenthetical_pattern"], "variant_parenthetical_pattern"),
        preview_word=_regex(raw["preview_word_pattern"], "preview_word_pattern"),
        # The legacy rule is case-sensitive on purpose: that is how paper 000 applied it.
        legacy_parenthetical=_regex(legacy["parenthetical_pattern"], "paper000_legacy", 0),
        legacy_trailing=_regex(legacy["trailing_pattern"], "paper000_legacy", 0),
        generic_names=_words(raw, "generic_names"),
        generic_patterns=tuple(_regex(p, "generic_name_patterns") for p in raw["generic_name_patterns"]),
        base_aliases=base_aliases,
        stem_aliases={str(k): str(v) for k, v in raw["stem_aliases"].items()},
    )


_T = _load_tokens()
MODEL_TOKENS_VERSION: str = _T.version

# --------------------------------------------------------------------------------------------
# Patterns that describe *formats* (dates, counts), not vocabularies, so they stay in code.
# --------------------------------------------------------------------------------------------

_MONTH_ALT = "|".join(sorted(_T.months, key=len, reverse=True))
_DATE_PATTERNS: tuple[re.Pattern[str], ...] = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        # 2025-08-07, 2025_08_07, 2025.08.07, 20250514
        r"(?<![0-9])(?:19|20)\d{2}([-_./]?)(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?![0-9])",
        # 03-27-2025
        r"(?<![0-9])(?:0[1-9]|1[0-2])[-_/](?:0[1-9]|[12]\d|3[01])[-_/](?:19|20)\d{2}(?![0-9])",
        # 09-2025, 2025-09
        r"(?<![0-9])(?:0[1-9]|1[0-2])[-_/](?:19|20)\d{2}(?![0-9])",
        r"(?<![0-9])(?:19|20)\d{2}[-_/](?:0[1-9]|1[0-2])(?![0-9a-z])",
        # Jan '25, Mar' 25, Feb 2026, June 2026, Dec 2024
        rf"\b(?:{_MONTH_ALT})\b\.?\s*(?:'\s*\d{{2}}\b|\s(?:19|20)\d{{2}}\b|,\s*(?:19|20)\d{{2}}\b)",
        # 06-05 (zero-padded month-day, as in gemini-2.5-pro-preview-06-05)
        r"(?<![0-9.])(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![0-9a-z.])",
        # '25
        r"'\s?\d{2}\b",
    )
)
# Any bare four-digit number: a year, a checkpoint stamp (0613, 2507) or a context length.
_BARE_FOUR = re.compile(r"(?<![0-9a-z.])\d{4}(?![0-9a-z.])", re.IGNORECASE)
_PAREN = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
_PAREN_PARAMS = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?)\s*b(?![a-z])", re.I)
_HYPHEN_VERSION = re.compile(r"(?<![0-9.])(\d)-(\d)(?![0-9.a-z])", re.IGNORECASE)
_UNDERSCORE_DECIMAL = re.compile(r"(?<=\d)_(?=\d)")
_NON_TOKEN = re.compile(r"[^a-z0-9.]+")
_STRAY_DOT = re.compile(r"(?<![0-9])\.|\.(?![0-9])")
_ALPHA_VERSION = re.compile(r"^([a-z]{3,})(\d+(?:\.\d+)*)$")
_NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
_PARAMS_B = re.compile(r"^(\d+(?:\.\d+)?)b$")
_PARAMS_MIX = re.compile(r"^\d+x\d+(?:\.\d+)?b$")
_PARAMS_M = re.compile(r"^(\d+(?:\.\d+)?)m$")
_PARAMS_T = re.compile(r"^\d+(?:\.\d+)?t$")
_ACTIVE = re.compile(r"^a\d+(?:\.\d+)?b$")
_EXPERTS = re.compile(r"^\d+e$")
_CONTEXT_K = re.compile(r"^\d+(?:\.\d+)?k$")
_ALPHA_RUN = re.compile(r"[a-z]+")


# --------------------------------------------------------------------------------------------
# Shared text helpers
# --------------------------------------------------------------------------------------------


def _ascii(text: str) -> str:
    """Fold accents and drop what is not ASCII: "Tülu" and "Tulu" must collapse alike."""
    decomposed = unicodedata.normalize("NFKD", str(text))
    return decomposed.encode("ascii", "ignore").decode("ascii")


def _space(text: str) -> str:
    return " ".join(text.split())


def _strip_org_prefix(text: str) -> str:
    """Step 1: drop everything before the first "/", then any leading org/provider word."""
    if "/" in text:
        text = text.split("/", 1)[1]
    text = _T.serving_revision.sub("", text.strip())
    for pattern in _T.api_prefixes:
        text = pattern.sub("", text)
    while True:
        match = re.match(r"^([a-z0-9]+)[\s._:-]+(?=\S)", text, re.IGNORECASE)
        if not match or match.group(1).lower() not in _T.org:
            return text
        text = text[match.end() :]


def _reduce_parentheticals(text: str) -> str:
    """Step 2: "(70B)" → " 70B ", any other parenthesised content → nothing."""
    while True:
        match = _PAREN.search(text)
        if not match:
            return text.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ")
        params = _PAREN_PARAMS.findall(match.group(1))
        text = f"{text[: match.start()]} {' '.join(p + 'b' for p in params)} {text[match.end() :]}"


def _strip_variant_tail(text: str) -> str:
    """Step 3: trailing separators, Epoch "_high"/"_16K" tails, and the text after them."""
    previous = None
    while previous != text:
        previous = text
        text = _T.tail_separator.sub("", text)
        text = _T.underscore_variant.sub("", text.rstrip())
        text = re.sub(r"[\s\-_:./|,;]+$", "", text)
    return text


def _strip_dates(text: str) -> str:
    """Step 3: every date format we know, then any bare four-digit number."""
    for pattern in _DATE_PATTERNS:
        text = pattern.sub(" ", text)
    return _BARE_FOUR.sub(" ", text)


def _tokenise(text: str) -> list[str]:
    """Lower-case tokens of letters, digits and decimal points ("qwen3" → "qwen", "3")."""
    text = text.lower().replace("+", " plus ")
    text = _STRAY_DOT.sub(" ", _NON_TOKEN.sub(" ", text))
    tokens: list[str] = []
    for token in text.split():
        match = _ALPHA_VERSION.match(token)
        tokens.extend(match.groups() if match else (token,))
    return tokens


def _clean(name: str) -> list[str]:
    """Steps 1-4 of paper 002's standard collapse, returning tokens."""
    text = _strip_org_prefix(_space(_ascii(name)))
    text = _reduce_parentheticals(text)
    text = _strip_variant_tail(_space(text))
    text = _T.quantisation.sub(" ", _strip_dates(text))
    text = _UNDERSCORE_DECIMAL.sub(".", text)
    text = _HYPHEN_VERSION.sub(r"\1.\2", text)
    return _tokenise(text)


# --------------------------------------------------------------------------------------------
# Step 6: token-by-token decisions
# --------------------------------------------------------------------------------------------


def _effort_level(token: str) -> str | None:
    token = _T.effort_aliases.get(token, token)
    return token if token in _T.efforts else None


def _drop_phrases(tokens: list[str]) -> list[str]:
    """Drop reasoning-effort phrases and negated markers: "medium effort", "non reasoning"."""

    def in_phrase(i: int) -> bool:
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prv = tokens[i - 1] if i > 0 else None
        near_context = nxt in _T.effort_context or prv in _T.effort_context
        return (
            token in _T.effort_context
            or (_effort_level(token) is not None and near_context)
            or (token in _T.negations and nxt in _T.reasoning)
        )

    return [t for i, t in enumerate(tokens) if not in_phrase(i)]


def _is_dropped(token: str, has_other_number: bool) -> bool:
    return (
        token in _T.drop
        or token in _T.reasoning
        or token in _T.api
        or token in _T.org
        or _CONTEXT_K.match(token) is not None
        or _T.revision.match(token) is not None
        or (has_other_number and _T.checkpoint_stamp.match(token) is not None)
        or _is_context_m(token)
        or token in _T.unambiguous_effort
    )


def _is_context_m(token: str) -> bool:
    match = _PARAMS_M.match(token)
    return match is not None and float(match.group(1)) < _T.min_params_millions


def _is_param(token: str) -> bool:
    if _PARAMS_B.match(token) or _PARAMS_MIX.match(token) or _PARAMS_T.match(token):
        return True
    return _PARAMS_M.match(token) is not None and not _is_context_m(token)


def _drop_active_expert_counts(tokens: list[str]) -> list[str]:
    """ "17b 128e" is an active size plus an expert count, not the model's size: drop both."""
    out: list[str] = []
    for token in tokens:
        if _EXPERTS.match(token):
            if out and _PARAMS_B.match(out[-1]):
                out.pop()
            continue
        out.append(token)
    return out


def _merge_versions(tokens: list[str]) -> list[str]:
    """Merge a version into the stem when one extends the other ("llama 3" + "3.1" → 3.1)."""
    out: list[str] = []
    for token in tokens:
        if out and _NUMBER.match(token) and _NUMBER.match(out[-1]):
            if token == out[-1] or out[-1].startswith(token + "."):
                continue
            if token.startswith(out[-1] + "."):
                out[-1] = token
                continue
        out.append(token)
    return out


def _as_size(token: str) -> float | None:
    try:
        value = float(token)
    except ValueError:
        return None
    return value if math.isfinite(value) else None


def _format_b(value: float) -> str:
    return f"{value:g}b"


def _assign_params(tokens: list[str], params_b: float | None, guarded: bool) -> tuple[list[str], list[str], list[str]]:
    """Split tokens into (stem, sizes, active sizes), reading bare numbers as sizes if safe."""
    stem = [t for t in tokens if not _is_param(t) and not _ACTIVE.match(t)]
    sizes = [t for t in tokens if _is_param(t)]
    active = [t for t in tokens if _ACTIVE.match(t)]
    numbers = [i for i, t in enumerate(stem) if _NUMBER.match(t)]
    if not sizes and len(numbers) > 1 and not guarded:
        for i in numbers[1:]:
            value = _as_size(stem[i])
            if value is None:
                continue
            recorded = params_b is not None and math.isclose(value, params_b)
            if recorded or (params_b is None and value in _T.common_sizes):
                sizes = [_format_b(value)]
                stem = stem[:i] + stem[i + 1 :]
                break
    if not sizes and params_b is not None and math.isfinite(params_b) and params_b > 0:
        sizes = [_format_b(params_b)]
    return stem, sizes, active


def _order_tiers(stem: list[str]) -> list[str]:
    """Tier words written before the version go right after it: "claude sonnet 4.5" ≡ "claude
    4.5 sonnet", so AA's and Anthropic's word orders give one key."""
    first_number = next((i for i, t in enumerate(stem) if _NUMBER.match(t)), None)
    if first_number is None:
        return stem
    head = stem[:first_number]
    moved = [t for t in head if t in _T.tiers]
    if not moved:
        return stem
    kept = [t for t in head if t not in _T.tiers]
    return [*kept, stem[first_number], *moved, *stem[first_number + 1 :]]


def _family_tokens(family: str | None) -> list[str]:
    if not family or not str(family).strip():
        return []
    tokens = _clean(str(family))
    return [] if all(_NUMBER.match(t) for t in tokens) else tokens


def _with_family_stem(tokens: list[str], family: list[str]) -> list[str]:
    """Step 5: a recorded non-numeric family is the stem; the rest of the identifier follows."""
    if not family:
        return tokens
    rest = list(tokens)
    for token in family:
        if token in rest:
            rest.remove(token)
    return [*family, *rest]


def _collapse_once(name: str, family: str | None, params_b: float | None, guarded: bool) -> str:
    cleaned = _with_family_stem(_clean(name), _family_tokens(family))
    guarded = guarded or any(_T.version_guard.match(t) for t in cleaned)
    tokens = _drop_active_expert_counts(_drop_phrases(cleaned))
    n_numbers = sum(1 for t in tokens if _NUMBER.match(t) or _is_param(t))
    kept = [t for t in tokens if not _is_dropped(t, n_numbers > 1)]
    if not kept:  # everything was a generic word: the identifier *is* that word
        kept = cleaned
    kept = _merge_versions(kept)
    stem, sizes, active = _assign_params(kept, params_b, guarded)
    return " ".join([*_order_tiers(stem), *sizes, *active])


# --------------------------------------------------------------------------------------------
# Public collapses
# --------------------------------------------------------------------------------------------


def collapse_standard(
    name: str,
    *,
    family: str | None = None,
    params_b: float | None = None,
    developer: str | None = None,
) -> str:
    """Paper 002's variant-level key: "claude-3-5-sonnet-20241022" → "claude 3.5 sonnet".

    Steps run in the paper's order (org prefix; parentheses; separators, effort phrases, dates,
    bare 4-digit numbers; hyphenated versions; family stem; token drops with tier tokens kept;
    parameter count). The key is lower-case, single-spaced, ordered stem → tier → size.

    The key is re-collapsed until it is a fixed point, so collapsing a key always returns that
    key even for input the rules were not written for (the property tests feed arbitrary text).
    ``developer`` in {OpenAI, Anthropic} turns on the version guard for bare numbers.
    """
    guarded = bool(developer) and _space(_ascii(developer)).lower() in _T.guard_developers
    key = _collapse_once(name, family, params_b, guarded)
    for _ in range(4):
        again = _collapse_once(key, None, None, guarded)
        if again == key:
            break
        key = again
    return key


def collapse_aggressive(name: str, *, family: str | None = None) -> str:
    """Paper 002's family-level key: first alphabetic token of the family, else of the name.

    "GPT-4o (May '24)" → "gpt", "Meta-Llama-3-8B" → "llama", "o3-mini" → "o". Organisation,
    region and other dropped words are skipped: they are prefixes, not the family.
    """
    for source in (family, name):
        if source is None or not str(source).strip():
            continue
        text = _strip_dates(_reduce_parentheticals(_strip_org_prefix(_space(_ascii(source)))))
        for token in _tokenise(text):
            match = _ALPHA_RUN.match(token)
            if match and match.group(0) not in _T.org and match.group(0) not in _T.drop:
                return match.group(0)
    return ""


def strip_variant_suffixes(name: str) -> str:
    """Paper 000's base-model display name: serving-configuration suffixes off, case kept.

    Removed: a parenthetical whose first item is a reasoning mode, effort, preview, thinking
    budget or context window ("(Reasoning)", "(Adaptive Reasoning, Max Effort)", "(xhigh)",
    "(Preview)", "(16K thinking)", "(1M)"); the words "Preview"/"Experimental" ("Gemini 3.1 Pro
    Preview", "Hy3-preview"); Epoch tails ("_high", "_16K", "_thinking").
    Kept: dated parentheticals ("DeepSeek R1 (Jan '25)") — they name different checkpoints —
    and name-embedded words ("Kimi K2 Thinking", "Mistral Medium"), which AA uses for distinct
    models or product tiers.
    """
    text = _space(str(name))
    previous = None
    while previous != text:
        previous = text
        text = _strip_variant_parentheticals(text)
        text = _T.underscore_variant.sub("", text)
        text = _T.preview_word.sub("", text)
        text = _space(re.sub(r"[\s\-_:,;|]+$", "", text))
    return text


def _strip_variant_parentheticals(text: str) -> str:
    def replace(match: re.Match[str]) -> str:
        first = match.group(1).split(",")[0].strip()
        return "" if _T.variant_parenthetical.match(first) else match.group(0)

    return _space(re.sub(r"\s*\(([^()]*)\)", replace, text))


def paper000_base_name(name: str) -> str:
    """The base name paper 000's released notebook used for its R1 dedup (n = 89).

    Kept only to reproduce that number: it leaves "(xhigh)", "(max)", "(Adaptive Reasoning, …)",
    "(Non-Reasoning)" and " Preview" on the name and strips product tiers such as the "Medium"
    of "Mistral Medium". Use :func:`strip_variant_suffixes` for new work.
    """
    text = _T.legacy_parenthetical.sub("", str(name))
    return _T.legacy_trailing.sub("", text).strip()


# --------------------------------------------------------------------------------------------
# Configuration flags
# --------------------------------------------------------------------------------------------


class ConfigFlags(BaseModel):
    """What a configuration's suffixes say. ``None`` means the name does not say."""

    model_config = ConfigDict(frozen=True)

    reasoning_mode: ReasoningMode | None = None
    effort: Effort | None = None
    thinking_budget: int | None = None
    context_variant: str | None = None
    preview: bool = False
    date_tag: str | None = None


_EFFORT_ALT = "minimal|low|medium|high|xhigh|x-high|extra[ -]high|max|maximum"
_RE_ADAPTIVE = re.compile(r"\badaptive\b")
_RE_NON_REASONING = re.compile(
    r"\bnon[\s_-]?(?:reasoning|thinking|think)\b|\bno[\s_-]?(?:thinking|reasoning)\b|\bnothink"
)
_RE_REASONING = re.compile(r"(?<![a-z])(?:reasoning|reasoner|thinking|think|thinker)(?![a-z])")
_RE_EFFORT = (
    re.compile(rf"\(\s*({_EFFORT_ALT})\s*[),]"),
    re.compile(rf"\b({_EFFORT_ALT})[\s_-]+(?:effort|reasoning)\b"),
    re.compile(rf"\b(?:effort|reasoning)[\s_:=-]+(?:effort[\s_:=-]+)?({_EFFORT_ALT})\b"),
    re.compile(rf"_({_EFFORT_ALT})(?![a-z])"),
    re.compile(r"-(xhigh|minimal)$"),
)
_RE_BUDGET = (
    re.compile(r"_(\d+(?:\.\d+)?)k\b"),
    re.compile(r"(\d+(?:\.\d+)?)k[\s_-]*thinking\b"),
    re.compile(r"thinking[\s_-]*(?:budget[\s_:=-]*)?(\d+(?:\.\d+)?)k\b"),
)
_RE_CONTEXT = (
    re.compile(r"\(\s*(\d+(?:\.\d+)?\s*[km])\s*\)"),
    re.compile(r"(?<![a-z0-9._])(\d+(?:\.\d+)?k)(?![a-z0-9])"),
    re.compile(r"[-\s]([1-9]m)$"),
)
_RE_PREVIEW = re.compile(r"(?<![a-z])(?:preview|experimental|exp|beta)(?![a-z])")
_MONTH_NUMBER = {
    m: i
    for i, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for m in names
}
_RE_DATE_TAGS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], str]], ...] = (
    (
        re.compile(r"(?<![0-9])((?:19|20)\d{2})([-_./]?)(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])(?![0-9])"),
        lambda m: f"{m.group(1)}-{m.group(3)}-{m.group(4)}",
    ),
    (
        re.compile(r"(?<![0-9])(0[1-9]|1[0-2])[-_/](0[1-9]|[12]\d|3[01])[-_/]((?:19|20)\d{2})(?![0-9])"),
        lambda m: f"{m.group(3)}-{m.group(1)}-{m.group(2)}",
    ),
    (
        re.compile(rf"\b({_MONTH_ALT})\b\.?\s*(?:'\s*(\d{{2}})\b|\s((?:19|20)\d{{2}})\b)"),
        lambda m: f"{m.group(3) or '20' + m.group(2)}-{_MONTH_NUMBER[m.group(1)]:02d}",
    ),
    (
        re.compile(r"(?<![0-9])(0[1-9]|1[0-2])[-_/]((?:19|20)\d{2})(?![0-9])"),
        lambda m: f"{m.group(2)}-{m.group(1)}",
    ),
    (
        re.compile(r"(?<![0-9.])((?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01]))(?![0-9a-z.])"),
        lambda m: m.group(1),
    ),
    (re.compile(r"(?<![0-9a-z.])(\d{4})(?![0-9a-z.])"), lambda m: m.group(1)),
)


def _first_group(patterns: Iterable[re.Pattern[str]], text: str) -> str | None:
    for pattern in patterns:
        match = pattern.search(text)
        if match:
            return match.group(1)
    return None


def _effort(text: str) -> Effort | None:
    found = _first_group(_RE_EFFORT, text)
    if found is None:
        return None
    level = _T.effort_aliases.get(re.sub(r"\s+", " ", found), found)
    return cast(Effort, level) if level in _T.efforts else None


def _budget(text: str) -> int | None:
    found = _first_group(_RE_BUDGET, text)
    return None if found is None else round(float(found) * 1000)


def _context(text: str, budget_free: str) -> str | None:
    found = _first_group(_RE_CONTEXT, budget_free)
    if found is None:
        return None
    found = found.replace(" ", "")
    if found.endswith("m") and float(found[:-1]) >= _T.min_params_millions:
        return None  # "Gemma 3 270M": a size, not a context window
    return found


def _date_tag(text: str) -> str | None:
    for pattern, render in _RE_DATE_TAGS:
        match = pattern.search(text)
        if match:
            return render(match)
    return None


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


def config_flags(name: str) -> ConfigFlags:
    """Read the configuration from a name: "GPT-5 (high)" → reasoning, effort high;
    "claude-opus-4-20250514_16K" → reasoning, 16,000-token thinking budget, dated 2025-05-14."""
    text = _space(_ascii(name)).lower()
    if "/" in text:
        text = text.split("/", 1)[1]
    effort = _effort(text)
    budget = _budget(text)
    budget_free = text
    for pattern in _RE_BUDGET:
        budget_free = pattern.sub(" ", budget_free)
    return ConfigFlags(
        reasoning_mode=_reasoning_mode(text, effort, budget),
        effort=effort,
        thinking_budget=budget,
        context_variant=_context(text, budget_free),
        preview=_RE_PREVIEW.search(text) is not None,
        date_tag=_date_tag(text),
    )


# --------------------------------------------------------------------------------------------
# One configuration per base model
# --------------------------------------------------------------------------------------------


def _row_name(row: Mapping[str, Any]) -> str:
    return str(row.get("name", ""))


def _default_key(row: Mapping[str, Any]) -> str:
    return strip_variant_suffixes(_row_name(row)).casefold()


def _default_score(row: Mapping[str, Any]) -> float | None:
    return _finite(row.get("intelligenceIndex"))


def _finite(value: Any) -> float | None:
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def best_default_configuration(
    rows: Iterable[Mapping[str, Any]],
    *,
    key: Callable[[Mapping[str, Any]], str] = _default_key,
    score: Callable[[Mapping[str, Any]], Any] = _default_score,
    name: Callable[[Mapping[str, Any]], str] = _row_name,
) -> list[Mapping[str, Any]]:
    """Pick one configuration per base model, as paper 000's R1 robustness check does.

    Winner: highest score (AA's intelligence index by default); a missing or non-finite score
    loses to any number. Ties: a non-preview configuration first, then the lexicographically
    smallest name, so the pick never depends on row order. Whole rows are returned — never
    columns mixed from different configurations. Output is in order of first appearance.
    """
    best: dict[str, tuple[tuple[float, bool, str], Mapping[str, Any]]] = {}
    order: list[str] = []
    for row in rows:
        group = key(row)
        value = _finite(score(row))
        label = name(row)
        rank = (
            -value if value is not None else math.inf,
            config_flags(label).preview,
            label,
        )
        if group not in best:
            order.append(group)
            best[group] = (rank, row)
        elif rank < best[group][0]:
            best[group] = (rank, row)
    return [best[group][1] for group in order]


# --------------------------------------------------------------------------------------------
# resolve(): configuration, base model, family
# --------------------------------------------------------------------------------------------


class ModelIdentity(BaseModel):
    """One source identifier resolved to configuration → base model → family."""

    model_config = ConfigDict(frozen=True)

    input: str
    source: str | None
    configuration: str
    base_model: str
    family: str
    flags: ConfigFlags

    @property
    def is_scoped(self) -> bool:
        """True when the identity is only meaningful inside one source (or no source at all)."""
        return "::" in self.base_model


def _generic_form(name: str) -> str:
    return _space(re.sub(r"[^a-z0-9]+", " ", _ascii(name).lower()))


def is_generic_name(name: str) -> bool:
    """True for names that denote a role, not a model ("Ours", "Baseline", "Model A")."""
    form = _generic_form(name)
    if not form:
        return True
    return form in _T.generic_names or any(p.match(form) for p in _T.generic_patterns)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "-", _ascii(text).lower()).strip("-")


def _scope(source: str | None) -> str:
    return _slug(source) if source and _slug(source) else "generic"


def _apply_aliases(name: str) -> str:
    lowered = _space(_ascii(name)).lower()
    for pattern, replacement in _T.base_aliases:
        if pattern.match(lowered):
            return pattern.sub(replacement, lowered)
    return name


def _alias_stems(key: str) -> str:
    return " ".join(_T.stem_aliases.get(t, t) for t in key.split())


@lru_cache(maxsize=65536)
def _base_key(name: str, developer: str | None) -> tuple[str, str]:
    aliased = _apply_aliases(strip_variant_suffixes(name))
    base = _alias_stems(collapse_standard(aliased, developer=developer))
    family = _T.stem_aliases.get(collapse_aggressive(aliased), collapse_aggressive(aliased))
    return base, family


def _qualifiers(flags: ConfigFlags) -> str:
    parts = [
        ("mode", flags.reasoning_mode),
        ("effort", flags.effort),
        ("budget", flags.thinking_budget),
        ("context", flags.context_variant),
        ("preview", "yes" if flags.preview else None),
        ("date", flags.date_tag),
    ]
    return "".join(f"|{k}={v}" for k, v in parts if v is not None)


def resolve(name: str, *, source: str | None = None, developer: str | None = None) -> ModelIdentity:
    """Resolve a source's model name to configuration, base model and family.

    ``base_model`` is the same for one base model across sources: AA "GPT-5 (high)" and Epoch
    "gpt-5-2025-08-07_high" both give "gpt 5". Preview and experimental checkpoints belong to
    their release's base model ("gemini-2.5-pro-preview-06-05" → "gemini 2.5 pro"), as dates do
    in paper 002; ``flags.preview`` and ``flags.date_tag`` keep the difference.

    Generic names ("Ours", "Baseline") are scoped to their source ("papers-with-code::ours") so
    two papers' "Ours" never merge; without a source they are scoped to "generic". A name with
    nothing left after collapsing (only dates, only non-Latin script) is scoped the same way, by
    a digest of the name. Never raises on a string.
    """
    text = str(name)
    flags = config_flags(text)
    if is_generic_name(text):
        scoped = f"{_scope(source)}::{_generic_form(text) or 'unknown'}"
        return ModelIdentity(
            input=text,
            source=source,
            configuration=scoped,
            base_model=scoped,
            family=scoped,
            flags=flags,
        )
    base, family = _base_key(text, developer)
    if not base:
        digest = hashlib.sha256(text.encode("utf-8", "replace")).hexdigest()[:12]
        base = f"{_scope(source)}::unnamed-{digest}"
        family = family or base
    return ModelIdentity(
        input=text,
        source=source,
        configuration=base + _qualifiers(flags),
        base_model=base,
        family=family,
        flags=flags,
    )


def match_rate(
    pairs: Iterable[tuple[str, str]],
    *,
    sources: tuple[str | None, str | None] = ("artificial-analysis", "epoch"),
) -> tuple[float, list[tuple[str, str, str, str]]]:
    """Share of (name_a, name_b) pairs — the same base model in two sources — that resolve to one
    ``base_model``; unmatched pairs come back as (name_a, name_b, base_a, base_b)."""
    pairs = list(pairs)
    if not pairs:
        raise ValueError("match_rate needs at least one pair")
    unmatched = []
    for a, b in pairs:
        base_a = resolve(a, source=sources[0]).base_model
        base_b = resolve(b, source=sources[1]).base_model
        if base_a != base_b:
            unmatched.append((a, b, base_a, base_b))
    return 1 - len(unmatched) / len(pairs), unmatched
