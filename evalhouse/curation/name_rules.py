"""The name rules: every token list and pattern of ``registries/model_tokens.yaml``, validated once.

A curator changes data, not code, and the rules travel with the :class:`~evalhouse.curation.registry.Registry`
they came from (their version is part of the registry version), so a key always says which lists
produced it. :func:`rules_from` builds them from the registry's ``model_tokens`` document; every
malformed entry is an error when the registry is built, not in the middle of a load.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from evalhouse.curation.snapshot_rules import EMPTY, SnapshotBook, book_from
from evalhouse.errors import InputError


class NameRulesError(InputError):
    """``model_tokens.yaml`` is malformed; the message names the key."""


@dataclass(frozen=True, eq=False)  # compared and hashed by identity: one compiled set per registry
class NameRules:
    version: str
    org: frozenset[str]
    providers: frozenset[str]
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
    source_base_aliases: dict[str, tuple[tuple[re.Pattern[str], str], ...]]
    stem_aliases: dict[str, str]
    variants: dict[str, str]
    packaging: frozenset[str]
    quant_words: frozenset[str]
    precisions: dict[str, str]
    tier_stems: frozenset[str]
    generic_family_words: frozenset[str]
    family_aliases: dict[str, str]
    date_patterns: tuple[re.Pattern[str], ...]  # every date format a name may carry (from the months)
    tier_efforts: tuple[str, ...]  # "<tier stem> <effort>" ("mistral medium"): an effort word that is a tier's
    variant_words: frozenset[str]  # what the variant tokens become ("instruct", "chat", "dpo" ...)
    # identity only: parentheticals that state a setting the paper-000 pattern does not know
    setting_parenthetical: re.Pattern[str] = re.compile(r"(?!x)x")
    edit_format: re.Pattern[str] = re.compile(r"(?!x)x")  # an edit format written into a name ("diff")
    edit_format_hint: re.Pattern[str] = re.compile(r"(?!x)x")  # ... its words anywhere (a cheap first look)
    source_rewrites: dict[str, tuple[tuple[re.Pattern[str], str], ...]] = field(default_factory=dict)
    snapshots: SnapshotBook = EMPTY  # registries/model_snapshots.yaml


def _date_patterns(months: frozenset[str]) -> tuple[re.Pattern[str], ...]:
    alt = "|".join(sorted(months, key=len, reverse=True))
    return tuple(
        re.compile(p, re.IGNORECASE)
        for p in (
            # 2025-08-07, 2025_08_07, 2025.08.07, 20250514
            r"(?<![0-9])(?:19|20)\d{2}([-_./]?)(?:0[1-9]|1[0-2])\1(?:0[1-9]|[12]\d|3[01])(?![0-9])",
            # 03-27-2025
            r"(?<![0-9])(?:0[1-9]|1[0-2])[-_/](?:0[1-9]|[12]\d|3[01])[-_/](?:19|20)\d{2}(?![0-9])",
            # 09-2025, 2025-09
            r"(?<![0-9])(?:0[1-9]|1[0-2])[-_/](?:19|20)\d{2}(?![0-9])",
            r"(?<![0-9])(?:19|20)\d{2}[-_/](?:0[1-9]|1[0-2])(?![0-9a-z])",
            # Jan '25, Mar' 25, Feb 2026, June 2026, Dec 2024, "February 2025"
            rf"\b(?:{alt})\b\.?\s*(?:'\s*\d{{2}}\b|\s(?:19|20)\d{{2}}\b|,\s*(?:19|20)\d{{2}}\b)",
            # 06-05 (zero-padded month-day, as in gemini-2.5-pro-preview-06-05)
            r"(?<![0-9.])(?:0[1-9]|1[0-2])-(?:0[1-9]|[12]\d|3[01])(?![0-9a-z.])",
            # '25
            r"'\s?\d{2}\b",
        )
    )


def _words(raw: Mapping[str, Any], key: str) -> frozenset[str]:
    values = raw.get(key)
    if not isinstance(values, list) or not all(isinstance(v, str) and v for v in values):
        raise NameRulesError(f"model_tokens.yaml: {key!r} must be a list of non-empty strings")
    if any(v != v.lower().strip() for v in values):
        raise NameRulesError(f"model_tokens.yaml: {key!r} must be lower-case and trimmed")
    return frozenset(values)


def _table(raw: Mapping[str, Any], key: str) -> dict[str, str]:
    values = raw.get(key)
    if not isinstance(values, dict) or not all(isinstance(k, str) and isinstance(v, str) for k, v in values.items()):
        raise NameRulesError(f"model_tokens.yaml: {key!r} must map strings to strings")
    return {str(k): str(v) for k, v in values.items()}


def _regex(pattern: Any, key: str, flags: int = re.IGNORECASE) -> re.Pattern[str]:
    if not isinstance(pattern, str):
        raise NameRulesError(f"model_tokens.yaml: {key!r} must be a regex string")
    try:
        return re.compile(pattern, flags)
    except re.error as exc:
        raise NameRulesError(f"model_tokens.yaml: {key!r} is not a valid regex: {exc}") from exc


def _vocabularies(raw: Mapping[str, Any]) -> dict[str, Any]:
    """The word lists, with the cross-checks between them."""
    drop = (
        _words(raw, "generic_tokens")
        | _words(raw, "language_tokens")
        | _words(raw, "engine_tokens")
        | _words(raw, "month_tokens")
    )
    tiers = _words(raw, "tier_tokens")
    if tiers & drop:
        raise NameRulesError(f"model_tokens.yaml: tier tokens are also dropped: {sorted(tiers & drop)}")
    efforts = tuple(raw.get("effort_levels") or ())
    aliases = _table(raw, "effort_aliases")
    if not efforts or not set(aliases.values()) <= set(efforts):
        raise NameRulesError("model_tokens.yaml: effort_aliases must map onto effort_levels")
    return {
        "org": _words(raw, "org_tokens"),
        "providers": _words(raw, "provider_tokens"),
        "efforts": efforts,
        "effort_aliases": aliases,
        "effort_context": _words(raw, "effort_context_tokens"),
        "unambiguous_effort": _words(raw, "unambiguous_effort_suffixes"),
        "months": _words(raw, "month_tokens"),
        "drop": drop,
        "reasoning": _words(raw, "reasoning_tokens"),
        "negations": _words(raw, "negation_tokens"),
        "api": _words(raw, "api_tokens"),
        "tiers": tiers,
        "guard_developers": _words(raw, "version_guard_developers"),
        "generic_names": _words(raw, "generic_names"),
        "stem_aliases": _table(raw, "stem_aliases"),
        "variants": _table(raw, "variant_tokens"),
        "packaging": _words(raw, "packaging_tokens"),
        "quant_words": _words(raw, "quantisation_tokens"),
        "precisions": _table(raw, "precision_tokens"),
        "tier_stems": _words(raw, "tier_stems"),
        "generic_family_words": _words(raw, "generic_family_words"),
        "family_aliases": _table(raw, "family_aliases"),
    }


def _patterns(raw: Mapping[str, Any]) -> dict[str, Any]:
    legacy = raw.get("paper000_legacy") or {}
    try:
        base_aliases = tuple(
            (_regex(a["pattern"], "base_model_aliases"), str(a["replace"])) for a in raw["base_model_aliases"]
        )
        sizes = frozenset(float(s) for s in raw["common_sizes_b"])
        min_params = float(raw["min_params_millions"])
    except (KeyError, TypeError, ValueError) as exc:
        raise NameRulesError(f"model_tokens.yaml: malformed entry: {exc}") from exc
    source_aliases = raw.get("source_base_aliases") or {}
    if not isinstance(source_aliases, dict):
        raise NameRulesError("model_tokens.yaml: 'source_base_aliases' must map source keys to alias lists")
    try:
        by_source = {
            str(src): tuple((_regex(a["pattern"], "source_base_aliases"), str(a["replace"])) for a in entries)
            for src, entries in source_aliases.items()
        }
    except (KeyError, TypeError) as exc:
        raise NameRulesError(f"model_tokens.yaml: malformed source_base_aliases entry: {exc}") from exc
    return {
        "source_base_aliases": by_source,
        "serving_revision": _regex(raw.get("serving_revision_pattern"), "serving_revision_pattern"),
        "tail_separator": _regex(raw.get("tail_separator_pattern"), "tail_separator_pattern"),
        "underscore_variant": _regex(raw.get("underscore_variant_pattern"), "underscore_variant_pattern"),
        "api_prefixes": tuple(_regex(p, "api_prefix_patterns") for p in raw.get("api_prefix_patterns") or ()),
        "quantisation": _regex(raw.get("quantisation_pattern"), "quantisation_pattern"),
        "revision": _regex(raw.get("revision_token_pattern"), "revision_token_pattern"),
        "checkpoint_stamp": _regex(raw.get("checkpoint_stamp_pattern"), "checkpoint_stamp_pattern"),
        "common_sizes": sizes,
        "version_guard": _regex(raw.get("version_guard_pattern"), "version_guard_pattern"),
        "min_params_millions": min_params,
        "variant_parenthetical": _regex(raw.get("variant_parenthetical_pattern"), "variant_parenthetical_pattern"),
        "preview_word": _regex(raw.get("preview_word_pattern"), "preview_word_pattern"),
        # The legacy rule is case-sensitive on purpose: that is how paper 000 applied it.
        "legacy_parenthetical": _regex(legacy.get("parenthetical_pattern", r"(?!x)x"), "paper000_legacy", 0),
        "legacy_trailing": _regex(legacy.get("trailing_pattern", r"(?!x)x"), "paper000_legacy", 0),
        "generic_patterns": tuple(_regex(p, "generic_name_patterns") for p in raw.get("generic_name_patterns") or ()),
        "base_aliases": base_aliases,
    }


def _identity_patterns(raw: Mapping[str, Any]) -> dict[str, Any]:
    """What only model identity reads: setting parentheticals, edit formats, per-source rewrites."""
    formats = raw.get("edit_format_words") or []
    if not isinstance(formats, list) or not all(isinstance(f, str) and f == f.lower().strip() for f in formats):
        raise NameRulesError("model_tokens.yaml: 'edit_format_words' must be a list of lower-case strings")
    alternatives = "|".join(re.escape(f) for f in sorted(formats, key=len, reverse=True)) or "(?!x)x"
    rewrites = raw.get("source_name_rewrites") or {}
    if not isinstance(rewrites, dict):
        raise NameRulesError("model_tokens.yaml: 'source_name_rewrites' must map source keys to rewrite lists")
    try:
        by_source = {
            str(src): tuple((_regex(a["pattern"], "source_name_rewrites"), str(a["replace"])) for a in entries)
            for src, entries in rewrites.items()
        }
    except (KeyError, TypeError) as exc:
        raise NameRulesError(f"model_tokens.yaml: malformed source_name_rewrites entry: {exc}") from exc
    pattern = raw.get("setting_parenthetical_pattern", r"(?!x)x")
    return {
        "setting_parenthetical": _regex(pattern, "setting_parenthetical_pattern"),
        "edit_format": re.compile(rf"(?<![a-z0-9-])({alternatives})(?![a-z0-9-])", re.IGNORECASE),
        "edit_format_hint": re.compile(alternatives, re.IGNORECASE),
        "source_rewrites": by_source,
    }


def rules_from(raw: Mapping[str, Any], snapshots: Mapping[str, Any] | None = None) -> NameRules:
    """Validate a ``model_tokens.yaml`` document (and ``model_snapshots.yaml``) and compile them."""
    if not isinstance(raw, Mapping) or not isinstance(raw.get("version"), str):
        raise NameRulesError("model_tokens.yaml: a string 'version' field is required")
    vocab = _vocabularies(raw)
    return NameRules(
        version=str(raw["version"]),
        date_patterns=_date_patterns(vocab["months"]),
        tier_efforts=tuple(f"{stem} {e}" for stem in sorted(vocab["tier_stems"]) for e in vocab["efforts"]),
        variant_words=frozenset(vocab["variants"].values()),
        snapshots=book_from(snapshots),
        **vocab,
        **_patterns(raw),
        **_identity_patterns(raw),
    )
