"""Loose keys for comparing names: paper 002's collapses and paper 000's display base name.

These keys deliberately forget what makes models distinct (instruction tuning, chat, revisions,
context variants), so they are *never* identities: evalhouse uses them to find candidate links
between base models that might be one model written two ways (``v_identity_candidates``), and the
analyses of papers 000 and 002 use them as the papers did.

- :func:`collapse_standard` / :func:`collapse_aggressive` — paper 002 Appendix E (variant level
  and family level), in the paper's order;
- :func:`strip_variant_suffixes` — paper 000's display-level base name (serving suffixes off,
  dated checkpoints kept);
- :func:`is_generic_name` — names that denote a role ("Ours", "Baseline"), never a model.
"""

from __future__ import annotations

import re
from functools import lru_cache

from evalhouse.curation.name_rules import NameRules
from evalhouse.curation.names import text as T

_TRAILING_PUNCTUATION = re.compile(r"[\s\-_:,;|]+$")
_PARENTHETICAL = re.compile(r"\s*\(([^()]*)\)")
_NON_ALNUM = re.compile(r"[^a-z0-9]+")


def _clean(name: str, r: NameRules) -> list[str]:
    """Steps 1-4 of paper 002's standard collapse, returning tokens."""
    text = T.strip_org_prefix(T.fold(name), r)
    text = T.reduce_parentheticals(text)
    text = T.strip_variant_tail(T.space(text), r)
    text = r.quantisation.sub(" ", T.strip_dates(text, r))
    return T.tokenise(T.normalise_numbers(text))


@lru_cache(maxsize=T.TOKEN_CACHE)
def _is_dropped(token: str, has_other_number: bool, r: NameRules) -> bool:
    return (
        token in r.drop
        or token in r.reasoning
        or token in r.api
        or token in r.org
        or T.CONTEXT_K.match(token) is not None
        or r.revision.match(token) is not None
        or (has_other_number and r.checkpoint_stamp.match(token) is not None)
        or T.is_context_m(token, r)
        or token in r.unambiguous_effort
    )


def _family_tokens(family: str | None, r: NameRules) -> list[str]:
    if not family or not str(family).strip():
        return []
    tokens = _clean(str(family), r)
    return [] if all(T.NUMBER.match(t) for t in tokens) else tokens


def _with_family_stem(tokens: list[str], family: list[str]) -> list[str]:
    """Step 5: a recorded non-numeric family is the stem; the rest of the identifier follows."""
    if not family:
        return tokens
    rest = list(tokens)
    for token in family:
        if token in rest:
            rest.remove(token)
    return [*family, *rest]


@lru_cache(maxsize=T.TEXT_CACHE)
def _collapse_once(name: str, family: str | None, params_b: float | None, guarded: bool, r: NameRules) -> str:
    """One pass of the standard collapse. Cached: many names share a key ("llama 3 8b"), and the
    pass that checks a key is a fixed point then costs a look-up."""
    cleaned = _with_family_stem(_clean(name, r), _family_tokens(family, r))
    guarded = guarded or any(r.version_guard.match(t) for t in cleaned)
    tokens = T.drop_active_expert_counts(T.drop_phrases(cleaned, r))
    has_other_number = T.count_numbers(tokens, r) > 1
    kept = [t for t in tokens if not _is_dropped(t, has_other_number, r)]
    if not kept:  # everything was a generic word: the identifier *is* that word
        kept = cleaned
    kept = T.merge_versions(kept)
    stem, sizes, active = T.assign_params(kept, params_b, guarded, r)
    return " ".join([*T.order_tiers(stem, r), *sizes, *active])


def collapse_standard(
    name: str,
    r: NameRules,
    *,
    family: str | None = None,
    params_b: float | None = None,
    developer: str | None = None,
) -> str:
    """Paper 002's variant-level key: "claude-3-5-sonnet-20241022" → "claude 3.5 sonnet".

    Steps run in the paper's order (org prefix; parentheses; separators, effort phrases, dates,
    bare 4-digit numbers; hyphenated versions; family stem; token drops with tier tokens kept;
    parameter count). The key is lower-case, single-spaced, ordered stem → tier → size, and
    re-collapsed until it is a fixed point. ``developer`` in {OpenAI, Anthropic} turns on the
    version guard for bare numbers.
    """
    guarded = bool(developer) and T.fold(developer).lower() in r.guard_developers
    key = _collapse_once(name, family, params_b, guarded, r)
    for _ in range(4):
        again = _collapse_once(key, None, None, guarded, r)
        if again == key:
            break
        key = again
    return key


def collapse_aggressive(name: str, r: NameRules, *, family: str | None = None) -> str:
    """Paper 002's family-level key: first alphabetic token of the family, else of the name.

    "GPT-4o (May '24)" → "gpt", "Meta-Llama-3-8B" → "llama", "o3-mini" → "o". Organisation,
    region and other dropped words are skipped: they are prefixes, not the family.
    """
    for source in (family, name):
        if source is None or not str(source).strip():
            continue
        text = T.strip_dates(T.reduce_parentheticals(T.strip_org_prefix(T.fold(source), r)), r)
        for token in T.tokenise(text):
            match = T.ALPHA_RUN.match(token)
            if match and match.group(0) not in r.org and match.group(0) not in r.drop:
                return match.group(0)
    return ""


def strip_variant_suffixes(name: str, r: NameRules) -> str:
    """Paper 000's base-model display name: serving-configuration suffixes off, case kept.

    Removed: a parenthetical whose first item is a reasoning mode, effort, preview, thinking
    budget or context window ("(Reasoning)", "(Adaptive Reasoning, Max Effort)", "(xhigh)",
    "(Preview)", "(16K thinking)", "(1M)"); the words "Preview"/"Experimental"; Epoch tails
    ("_high", "_16K", "_thinking"). Kept: dated parentheticals ("DeepSeek R1 (Jan '25)") and
    name-embedded words ("Kimi K2 Thinking", "Mistral Medium").
    """
    text = T.space(str(name))
    previous = None
    while previous != text:
        previous = text
        text = _strip_variant_parentheticals(text, r)
        text = r.underscore_variant.sub("", text)
        text = r.preview_word.sub("", text)
        text = T.space(_TRAILING_PUNCTUATION.sub("", text))
    return text


def _strip_variant_parentheticals(text: str, r: NameRules) -> str:
    def replace(match: re.Match[str]) -> str:
        first = match.group(1).split(",")[0].strip()
        return "" if r.variant_parenthetical.match(first) else match.group(0)

    return T.space(_PARENTHETICAL.sub(replace, text))


def generic_form(name: str) -> str:
    return T.space(_NON_ALNUM.sub(" ", T.fold(name).lower()))


def is_generic_name(name: str, r: NameRules) -> bool:
    """True for names that denote a role, not a model ("Ours", "Baseline", "Model A")."""
    form = generic_form(name)
    if not form:
        return True
    return form in r.generic_names or any(p.match(form) for p in r.generic_patterns)
