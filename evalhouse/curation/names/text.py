"""Text steps every name rule shares: folding, organisation prefixes, dates, tokens, sizes, versions.

Pure functions of a string and the :class:`~evalhouse.curation.name_rules.NameRules`; the
collapses (paper 002), the settings reader and model identity are built from them.
"""

from __future__ import annotations

import math
import re
from functools import lru_cache

from evalhouse.common.naming import ascii_fold
from evalhouse.curation.name_rules import NameRules

#: Tokens recur across names ("instruct", "7b", "3.1"): what a token is gets read once, not per name.
TOKEN_CACHE = 16384
#: One resolution reads a name three ways (settings, identity key, paper 002's collapse), and their
#: steps meet the same strings (a name without parentheses or shot counts is the same text after
#: each one's first steps): the costlier steps remember their recent results.
TEXT_CACHE = 4096

# Patterns that describe *formats* (numbers, sizes), not vocabularies, so they stay in code.
BARE_FOUR = re.compile(r"(?<![0-9a-z.])\d{4}(?![0-9a-z.])", re.IGNORECASE)
PAREN = re.compile(r"[(\[]([^()\[\]]*)[)\]]")
PAREN_PARAMS = re.compile(r"(?<![a-z0-9.])(\d+(?:\.\d+)?(?:x\d+(?:\.\d+)?)?)\s*b(?![a-z])", re.I)
HYPHEN_VERSION = re.compile(r"(?<![0-9.])(\d)-(\d)(?![0-9.a-z])", re.IGNORECASE)
UNDERSCORE_DECIMAL = re.compile(r"(?<=\d)_(?=\d)")
NON_TOKEN = re.compile(r"[^a-z0-9.]+")
STRAY_DOT = re.compile(r"(?<![0-9])\.|\.(?![0-9])")
ALPHA_VERSION = re.compile(r"^([a-z]{3,})(\d+(?:\.\d+)*)$")
NUMBER = re.compile(r"^\d+(?:\.\d+)*$")
PARAMS_B = re.compile(r"^(\d+(?:\.\d+)?)b$")
PARAMS_MIX = re.compile(r"^\d+x\d+(?:\.\d+)?b$")
PARAMS_M = re.compile(r"^(\d+(?:\.\d+)?)m$")
PARAMS_T = re.compile(r"^\d+(?:\.\d+)?t$")
ACTIVE = re.compile(r"^a\d+(?:\.\d+)?b$")
EXPERTS = re.compile(r"^\d+e$")
CONTEXT_K = re.compile(r"^\d+(?:\.\d+)?k$")
ALPHA_RUN = re.compile(r"[a-z]+")
#: A leading word and its separator ("us.", "meta-"): an organisation prefix when the word is one.
LEADING_WORD = re.compile(r"^([a-z0-9]+)[\s._:-]+(?=\S)", re.IGNORECASE)
TRAILING_SEPARATORS = re.compile(r"[\s\-_:./|,;]+$")
#: An identifier that is a repository id ("org/name", no spaces): its prefix is an organisation.
REPO_ID = re.compile(r"^[A-Za-z0-9][\w.-]*/[\w.+@:-]+$")


def space(text: str) -> str:
    return " ".join(text.split())


def fold(text: str) -> str:
    """ASCII, single-spaced: "Tülu  3" → "Tulu 3"."""
    return space(ascii_fold(text))


def strip_org_prefix(text: str, r: NameRules, *, any_slash: bool = True) -> str:
    """Drop an organisation prefix: before the first "/" (``any_slash``) and leading org words."""
    if "/" in text and (any_slash or REPO_ID.match(text.strip())):
        text = text.split("/", 1)[1]
    text = r.serving_revision.sub("", text.strip())
    for pattern in r.api_prefixes:
        text = pattern.sub("", text)
    while True:
        match = LEADING_WORD.match(text)
        if not match or match.group(1).lower() not in r.org:
            return text
        text = text[match.end() :]


def reduce_parentheticals(text: str) -> str:
    """Paper 002 step 2: "(70B)" → " 70B ", any other parenthesised content → nothing."""
    while True:
        match = PAREN.search(text)
        if not match:
            return text.replace("(", " ").replace(")", " ").replace("[", " ").replace("]", " ")
        params = PAREN_PARAMS.findall(match.group(1))
        text = f"{text[: match.start()]} {' '.join(p + 'b' for p in params)} {text[match.end() :]}"


@lru_cache(maxsize=TEXT_CACHE)
def strip_variant_tail(text: str, r: NameRules) -> str:
    """Trailing separators, Epoch "_high"/"_16K" tails, and the text after them."""
    previous = None
    while previous != text:
        previous = text
        text = r.tail_separator.sub("", text)
        text = r.underscore_variant.sub("", text.rstrip())
        text = TRAILING_SEPARATORS.sub("", text)
    return text


@lru_cache(maxsize=TEXT_CACHE)
def strip_dates(text: str, r: NameRules) -> str:
    """Every date format we know, then any bare four-digit number."""
    for pattern in r.date_patterns:
        text = pattern.sub(" ", text)
    return BARE_FOUR.sub(" ", text)


def tokenise(text: str) -> list[str]:
    """Lower-case tokens of letters, digits and decimal points ("qwen3" → "qwen", "3")."""
    return list(_tokens(text.lower()))


@lru_cache(maxsize=TEXT_CACHE)
def _tokens(text: str) -> tuple[str, ...]:
    text = text.replace("+", " plus ")
    text = STRAY_DOT.sub(" ", NON_TOKEN.sub(" ", text))
    tokens: list[str] = []
    for word in text.split():
        tokens.extend(_split_version(word))
    return tuple(tokens)


@lru_cache(maxsize=TOKEN_CACHE)
def _split_version(word: str) -> tuple[str, ...]:
    """ "qwen3" → ("qwen", "3"); a word without a version stays whole."""
    match = ALPHA_VERSION.match(word)
    return match.groups() if match else (word,)


@lru_cache(maxsize=TEXT_CACHE)
def normalise_numbers(text: str) -> str:
    """ "Qwen-1_8B" → "Qwen-1.8B", "claude-3-5" → "claude-3.5"."""
    return HYPHEN_VERSION.sub(r"\1.\2", UNDERSCORE_DECIMAL.sub(".", text))


def effort_level(token: str, r: NameRules) -> str | None:
    token = r.effort_aliases.get(token, token)
    return token if token in r.efforts else None


def drop_phrases(tokens: list[str], r: NameRules) -> list[str]:
    """Drop reasoning-effort phrases and negated markers: "medium effort", "non reasoning"."""

    def in_phrase(i: int) -> bool:
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        prv = tokens[i - 1] if i > 0 else None
        near_context = nxt in r.effort_context or prv in r.effort_context
        return (
            token in r.effort_context
            or (effort_level(token, r) is not None and near_context)
            or (token in r.negations and nxt in r.reasoning)
        )

    if r.effort_context.isdisjoint(tokens) and r.negations.isdisjoint(tokens):
        return list(tokens)  # no phrase can start or end here (the usual name)
    return [t for i, t in enumerate(tokens) if not in_phrase(i)]


def is_context_m(token: str, r: NameRules) -> bool:
    match = PARAMS_M.match(token)
    return match is not None and float(match.group(1)) < r.min_params_millions


@lru_cache(maxsize=TOKEN_CACHE)
def is_param(token: str, r: NameRules) -> bool:
    """A parameter count: "7b", "8x7b", "1.8t", "350m" (a size, not a context window)."""
    if PARAMS_B.match(token) or PARAMS_MIX.match(token) or PARAMS_T.match(token):
        return True
    return PARAMS_M.match(token) is not None and not is_context_m(token, r)


@lru_cache(maxsize=TOKEN_CACHE)
def is_number_or_size(token: str, r: NameRules) -> bool:
    """A version number or a parameter count: "3.1", "70b"."""
    return NUMBER.match(token) is not None or is_param(token, r)


def count_numbers(tokens: list[str], r: NameRules) -> int:
    """How many tokens are version numbers or sizes (with more than one, a stamp reads as a checkpoint)."""
    return sum(1 for t in tokens if is_number_or_size(t, r))


def drop_active_expert_counts(tokens: list[str]) -> list[str]:
    """ "17b 128e" is an active size plus an expert count, not the model's size: drop both."""
    out: list[str] = []
    for token in tokens:
        if EXPERTS.match(token):
            if out and PARAMS_B.match(out[-1]):
                out.pop()
            continue
        out.append(token)
    return out


def merge_versions(tokens: list[str]) -> list[str]:
    """Merge a version into the stem when one extends the other ("llama 3" + "3.1" → 3.1)."""
    out: list[str] = []
    for token in tokens:
        if out and NUMBER.match(token) and NUMBER.match(out[-1]):
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


def assign_params(
    tokens: list[str], params_b: float | None, guarded: bool, r: NameRules
) -> tuple[list[str], list[str], list[str]]:
    """Split tokens into (stem, sizes, active sizes), reading bare numbers as sizes if safe."""
    stem: list[str] = []
    sizes: list[str] = []
    active: list[str] = []
    for t in tokens:  # a size starts with a digit, an active size with "a": never both
        (sizes if is_param(t, r) else active if ACTIVE.match(t) else stem).append(t)
    numbers = [i for i, t in enumerate(stem) if NUMBER.match(t)]
    if not sizes and len(numbers) > 1 and not guarded:
        for i in numbers[1:]:
            value = _as_size(stem[i])
            if value is None:
                continue
            recorded = params_b is not None and math.isclose(value, params_b)
            if recorded or (params_b is None and value in r.common_sizes):
                sizes = [f"{value:g}b"]
                stem = stem[:i] + stem[i + 1 :]
                break
    if not sizes and params_b is not None and math.isfinite(params_b) and params_b > 0:
        sizes = [f"{params_b:g}b"]
    return stem, sizes, active


def order_tiers(stem: list[str], r: NameRules) -> list[str]:
    """Tier words written before the version go right after it: "claude sonnet 4.5" ≡ "claude
    4.5 sonnet", so AA's and Anthropic's word orders give one key."""
    if r.tiers.isdisjoint(stem):
        return stem
    first_number = next((i for i, t in enumerate(stem) if NUMBER.match(t)), None)
    if first_number is None:
        return stem
    head = stem[:first_number]
    moved = [t for t in head if t in r.tiers]
    if not moved:
        return stem
    kept = [t for t in head if t not in r.tiers]
    return [*kept, stem[first_number], *moved, *stem[first_number + 1 :]]


def apply_base_aliases(name: str, r: NameRules) -> str:
    """Curated aliases for dated API identifiers whose product version is not in the name."""
    lowered = fold(name).lower()
    for pattern, replacement in r.base_aliases:
        if pattern.match(lowered):
            return pattern.sub(replacement, lowered)
    return name
