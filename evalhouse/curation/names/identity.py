"""Model identity from a name: developer, base model, configuration, family — readable, developer-scoped.

A **configuration** is one model artefact plus its settings; a **base model** is the artefact
without them. Distinct models stay distinct:

- ``-Instruct``/``-it``/``-Chat``/``-Base`` and preference-tuned (``-DPO`` …) models are models of
  their own (``qwen/qwen-2.5-72b-instruct`` is not ``qwen/qwen-2.5-72b``; the parent is kept as
  ``derived_from``);
- two repositories are never one configuration (a repack of another developer's model keeps its
  repository in the configuration id);
- names with ``/``, parentheses or ``w/`` keep what those say ("LLaVA (ViT-L/16-224)", "GLaM
  (64B/64E)", "Aguvis-72B w/ GPT-4o" are three different systems, none of them GPT-4o);
- settings — reasoning mode and effort, thinking budget, context variant, preview, date snapshot,
  checkpoint, quantisation, precision, provider — are flags on the configuration and fold at the
  base model (:mod:`evalhouse.curation.names.settings`).

Ids are ``<developer>/<key>`` with the key's tokens in a fixed order (stem and tiers, sizes, active
parameters and experts, variants), so sources that write one model differently ("Llama 3.1
Instruct 70B", "Meta-Llama-3.1-70B-Instruct") give one id. Paper 002's loose collapse is kept as
``match_key``: base models that share it but not their id are candidate links for a curator.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field

from evalhouse.common.naming import slug
from evalhouse.curation.name_rules import NameRules
from evalhouse.curation.names import text as T
from evalhouse.curation.names.collapse import collapse_standard, generic_form, is_generic_name
from evalhouse.curation.names.dates import combine, name_dates, stated_day, without_dates
from evalhouse.curation.names.settings import SHOTS, SUFFIX_EFFORT, Settings, name_setup, read_settings
from evalhouse.curation.names.snapshots import DateEvidence, IdentityLink, find_line, resolve_alias, resolve_date
from evalhouse.curation.registry import Developer, Registry

UNKNOWN_DEVELOPER = "unknown"
_WITH = re.compile(r"\s+w/\s*", re.IGNORECASE)
_REGIONS = frozenset({"us", "eu", "apac", "global"})
#: An underscore beside a long number separates words ("ifd_max_2600_3B"), it is no decimal point.
_LONG_NUMBER_UNDERSCORE = re.compile(r"(?<=\d\d\d)_(?=\d)|(?<=\d)_(?=\d\d\d)")
#: "<organisation> API" ("Alibaba API") and a bare "API": how a model was served, never which.
_ORG_API = re.compile(r"\b([a-z0-9]+)[\s_-]+api\b|\bapi\b", re.IGNORECASE)
#: The head of a name whose "(ChatGPT)" means its ChatGPT version ("GPT-4o (ChatGPT)"), not a backbone.
_GPT_HEAD = re.compile(r"^\s*(?:openai[/ ])?(?:gpt|o\d)", re.IGNORECASE)
_TRAILING_EFFORT = re.compile(r"(?<=\S)\s+(?:minimal|low|medium|high|xhigh)$", re.IGNORECASE)
_EXTENDED_THINKING = re.compile(r",?\s*extended thinking\b", re.IGNORECASE)
_ONLY_LATEST = re.compile(r"[\s,]*(?:latest|[a-z0-9.-]*latest)[\s,]*")


class Link(BaseModel):
    """A step from what a source wrote to the configuration (``date``, ``alias``), or a configuration
    it may be but was not merged with (``candidate``); every one is recorded as a curation decision
    with its rule and evidence when the identity is loaded."""

    model_config = ConfigDict(frozen=True)

    kind: str  # "date" | "alias" | "candidate"
    rule: str
    written: str  # what the name (or the source's identifier) wrote
    configurations: tuple[str, ...]  # the configuration it became, or the candidates
    evidence: str | None = None  # a URL (the snapshot registry's), or None when the source said it


class ModelIdentity(BaseModel):
    """One source identifier resolved to configuration → base model → family."""

    model_config = ConfigDict(frozen=True)

    input: str
    source: str | None
    developer: str
    developer_inferred: bool = False  # read from the name's pattern, not stated by the source
    base_model: str
    configuration: str
    family: str
    settings: Settings
    derived_from: str | None = None
    match_key: str = ""
    repo: str | None = None
    setup: dict[str, str] = Field(default_factory=dict)  # evaluation setup the name states ("(8-shot)")
    links: tuple[Link, ...] = ()  # how the date and alias were resolved, and candidates not merged
    name_date: str | None = None  # the date the name itself writes, when it has a year (ISO)
    #: the undated name's snapshot depends on when the source observed it (and no date was given)
    needs_observation: bool = False

    @property
    def flags(self) -> Settings:
        return self.settings

    @property
    def is_scoped(self) -> bool:
        """True when the identity is only meaningful inside one source (or no source at all)."""
        return "::" in self.base_model


def _setting_parenthetical(content: str, r: NameRules, head: str = "") -> bool:
    first = content.split(",", maxsplit=1)[0].strip()
    if r.variant_parenthetical.match(first) or r.setting_parenthetical.match(first):
        return True
    if first.lower() == "chatgpt" and _GPT_HEAD.match(head):
        return True  # "GPT-4o (ChatGPT)": the ChatGPT version (alias=chatgpt), not a backbone
    lowered = content.lower()
    if any(p.fullmatch(lowered.strip()) for p in r.date_patterns):
        return True
    rest = T.strip_dates(lowered, r)
    return not T.tokenise(rest) or bool(_ONLY_LATEST.fullmatch(rest))


def _drop_setting_parentheticals(text: str, r: NameRules) -> str:
    """ "(Reasoning)", "(high)", "(Jan '25)", "(February 2025)" go; "(ViT-L/16-224)", "(T5)" stay."""

    def replace(match: re.Match[str]) -> str:
        head = match.string[: match.start()]
        return " " if _setting_parenthetical(match.group(1), r, head) else f" {match.group(1)} "

    previous = None
    while previous != text:
        previous = text
        text = T.PAREN.sub(replace, text)
    return T.space(text)


@lru_cache(maxsize=T.TEXT_CACHE)
def _identity_tokens(name: str, r: NameRules) -> tuple[str, ...]:
    """The tokens that make a base model: settings, dates, packaging and providers removed.

    Cached: a resolution reads them twice from one string (for its key, and to check whether the
    repository's own words are the key's)."""
    text = T.strip_org_prefix(T.fold(name), r, any_slash=False)
    text = _EXTENDED_THINKING.sub(" ", text)
    text = SHOTS.sub(" ", text)
    if "api" in text.lower():
        text = _ORG_API.sub(lambda m: _served_by(m, r), text)
    if r.edit_format_hint.search(text):
        text = r.edit_format.sub(" ", text)
    text = _drop_setting_parentheticals(text, r)
    text = T.strip_variant_tail(T.space(text), r)
    if not text.lower().rstrip().endswith(r.tier_efforts):  # "Mistral Medium": a tier, not an effort
        text = _TRAILING_EFFORT.sub("", text)
    text = SUFFIX_EFFORT.sub("", text)
    text = r.quantisation.sub(" ", without_dates(text))
    tokens = T.tokenise(T.normalise_numbers(_LONG_NUMBER_UNDERSCORE.sub(" ", text)))
    while len(tokens) > 1 and (tokens[0] in r.org or tokens[0] in _REGIONS):  # "us.anthropic.claude-..."
        tokens = tokens[1:]
    tokens = T.drop_phrases(tokens, r)
    has_other_number = T.count_numbers(tokens, r) > 1
    kept = [t for t in tokens if not _is_setting_token(t, has_other_number, r)] or tokens
    # "chatgpt-4o" is GPT-4o (its ChatGPT version, a setting); a bare "ChatGPT" is the product
    return tuple(
        r.stem_aliases.get(t, t) if i + 1 < len(kept) and kept[i + 1][:1].isdigit() else t for i, t in enumerate(kept)
    )


def _served_by(match: re.Match[str], r: NameRules) -> str:
    """ "Alibaba API" goes whole (the provider setting says it); "Foo API" keeps "Foo"."""
    word = match.group(1)
    if word is None or word.lower() in r.org or word.lower() in r.providers:
        return " "
    return f" {word} "


#: API words the settings capture (preview, alias); other release words stay part of the name.
_CAPTURED_API = frozenset({"preview", "exp", "experimental", "beta", "latest"})


@lru_cache(maxsize=T.TOKEN_CACHE)
def _is_setting_token(token: str, has_other_number: bool, r: NameRules) -> bool:
    """A token the configuration's settings already say (so dropping it from the base loses nothing)."""
    return (
        token == "cot"
        or token in r.reasoning
        or token in _CAPTURED_API
        or token in r.packaging
        or token in r.quant_words
        or token in r.precisions
        or token in r.providers
        or token in r.unambiguous_effort
        or T.CONTEXT_K.match(token) is not None
        or T.is_context_m(token, r)
        or (has_other_number and r.checkpoint_stamp.match(token) is not None)
    )


def _ordered_key(tokens: tuple[str, ...], guarded: bool, r: NameRules) -> list[str]:
    """Stem (tiers after the version), sizes, active sizes and experts, then variants."""
    variants = [r.variants[t] for t in tokens if t in r.variants]
    rest = [t for t in tokens if t not in r.variants]
    experts = [t for t in rest if T.EXPERTS.match(t)]
    rest = T.merge_versions([t for t in rest if not T.EXPERTS.match(t)])
    guarded = guarded or any(r.version_guard.match(t) for t in rest)
    stem, sizes, active = T.assign_params(rest, None, guarded, r)
    ordered_variants = list(dict.fromkeys(variants))
    return [*T.order_tiers(stem, r), *sizes, *active, *experts, *ordered_variants]


def _source_alias(name: str, r: NameRules, source: str | None) -> str:
    """A source's curated name for an artefact its leaderboard writes without saying which."""
    aliases = r.source_base_aliases.get(source or "", ())
    if not aliases:
        return name
    bare = _drop_setting_parentheticals(T.fold(name).lower(), r)
    for pattern, replacement in aliases:
        if pattern.match(bare):
            return pattern.sub(replacement, bare)
    return name


def identity_key(name: str, r: NameRules, *, developer: str | None = None, source: str | None = None) -> str:
    """The developer-free part of a base model id: ``"qwen-2.5-72b-instruct"``."""
    aliased = T.apply_base_aliases(_source_alias(name, r, source), r)
    guarded = bool(developer) and T.fold(developer).lower() in r.guard_developers
    return "-".join(_ordered_key(_identity_tokens(aliased, r), guarded, r))


def _family(key_tokens: list[str], r: NameRules, fallback: str) -> str:
    for token in key_tokens:
        if token in r.family_aliases:
            return r.family_aliases[token]
        match = T.ALPHA_RUN.fullmatch(token) or T.ALPHA_RUN.match(token)
        if match is None or token in r.generic_family_words or match.group(0) in r.generic_family_words:
            continue
        return r.family_aliases.get(match.group(0), match.group(0))
    return fallback


def _developer(name: str, stated: str | None, registry: Registry, *, repack: bool) -> tuple[str, bool, str | None]:
    """``(developer id, inferred from the name?, repository org)`` for a name and a stated developer."""
    rules = registry.name_rules
    assert rules is not None
    repo_org = name.split("/", 1)[0] if T.REPO_ID.match(name.strip()) else None
    core = _WITH.split(name.split("/", 1)[1] if repo_org else name)[0]

    def named() -> Developer | None:  # what the name's own patterns say (read only when needed)
        return (
            registry.developer_from_model_name(core)
            or registry.developer_from_model_name(T.strip_org_prefix(T.fold(core), rules))
            or registry.developer_from_model_name(" ".join(_identity_tokens(core, rules)))
        )

    if repo_org is not None and name.strip().lower() in registry.reuploads:
        return registry.reuploads[name.strip().lower()], True, repo_org  # a documented copy of the weights
    documented = registry.documented_developer(core)
    org_is_provider = repo_org is not None and repo_org.lower() in rules.providers
    for candidate in (stated, None if org_is_provider else repo_org):
        if not candidate or candidate.strip().lower() == UNKNOWN_DEVELOPER:
            continue
        dev = _known_developer(candidate, registry)
        if documented is not None and dev is not None and dev.id != documented.id:
            return documented.id, True, repo_org  # the registry documents who made it
        if repack and (by_name := named()) is not None and (dev is None or dev.id != by_name.id):
            return by_name.id, True, repo_org  # a repack of another developer's model
        return (dev.id if dev else slug(candidate, keep=".") or UNKNOWN_DEVELOPER), False, repo_org
    by_name = named()
    if by_name is not None:
        return by_name.id, True, repo_org
    return UNKNOWN_DEVELOPER, False, repo_org


_JOINT = re.compile(r"\s*(?:,|&|\+|\band\b)\s*", re.IGNORECASE)


def _known_developer(stated: str, registry: Registry) -> Developer | None:
    """The registry's developer for a stated organisation; for a joint statement ("EleutherAI,LAION")
    the first organisation the registry knows."""
    dev = registry.developer_for(stated)
    if dev is not None:
        return dev
    for part in _JOINT.split(stated):
        dev = registry.developer_for(part)
        if dev is not None:
            return dev
    return None


@dataclass(frozen=True)
class NameHints:
    """What a source says beside the identifier: its display name and stated details, its own
    identifier (when the identity is built from the display name), the model's release date it
    states, and the day it ran the model (its evaluation date; not the day its bytes were fetched)."""

    display_name: str | None = None
    details: Mapping[str, Any] = field(default_factory=dict)
    source_id: str | None = None
    release_date: date | str | None = None
    observed_on: date | None = None


def _rewrite(text: str, r: NameRules, source: str | None) -> str:
    """A source's way of writing a setting, in the words the rules read ("DeepSeek Chat V3 (prev)")."""
    for pattern, replacement in (*r.source_rewrites.get(source or "", ()), *r.source_rewrites.get("*", ())):
        if pattern.search(text):  # the patterns are ASCII: a name that needs folding to match is rare
            return pattern.sub(replacement, T.fold(text))
    return text


def _release(value: date | str | None) -> date | None:
    if value is None or isinstance(value, date):
        return value
    try:
        return date.fromisoformat(str(value).strip()[:10])
    except ValueError:
        return None


def resolve(
    name: str,
    registry: Registry,
    *,
    source: str | None = None,
    developer: str | None = None,
    hints: NameHints | None = None,
) -> ModelIdentity:
    """Resolve a source's model identifier (and what the source says beside it) to its identity.

    ``name`` is the identifier the identity is built from (a repository id such as
    ``Qwen/Qwen2.5-72B-Instruct``, or a leaderboard's name such as ``GPT-5 (high)``); ``hints``
    (display name, stated details) may add settings the identifier does not carry (HAL's
    ``o4-mini High (April 2025)`` beside ``openai/o4-mini``), and the source's own identifier,
    release date and observation date make the configuration's date as precise as they allow
    (:mod:`evalhouse.curation.names.snapshots`; each step is a :class:`Link`). Generic names
    ("Ours", "Baseline") are scoped to their source so two papers' "Ours" never merge. A pure
    function of its arguments and the registry; never raises on a string.
    """
    r = registry.name_rules
    assert r is not None, "the registry has no model_tokens.yaml"
    text = str(name)
    hints = hints or NameHints()
    rules_text = _rewrite(text, r, source)
    settings = read_settings(rules_text, r, hints.details)
    if hints.display_name and hints.display_name != text:
        shown = read_settings(hints.display_name, r)
        added = {k: v for k, v in shown.model_dump().items() if v not in (None, False) and not getattr(settings, k)}
        if added:
            settings = settings.model_copy(update=added)
    scope = slug(source or "") or "generic"
    if is_generic_name(text, r):
        scoped = f"{scope}::{generic_form(text) or 'unknown'}"
        return ModelIdentity(
            input=text,
            source=source,
            developer=UNKNOWN_DEVELOPER,
            base_model=scoped,
            configuration=scoped,
            family=scoped,
            settings=settings,
        )
    repack = settings.quantisation is not None
    dev, inferred, repo_org = _developer(text, developer, registry, repack=repack)
    key = identity_key(rules_text, r, developer=dev, source=source)
    if not key:
        key = f"{scope}::unnamed-{hashlib.sha256(text.encode('utf-8', 'replace')).hexdigest()[:12]}"
    base = f"{dev}/{key}"
    repo = _repo_qualifier(text, dev, key, repo_org, registry)
    settings, links, written, waits = _dated(rules_text, base, settings, r, hints)
    tokens = key.split("-")
    parent_tokens = [t for t in tokens if t not in r.variant_words]
    derived = f"{dev}/{'-'.join(parent_tokens)}" if parent_tokens and parent_tokens != tokens else None
    tail = f"|repo={repo}" if repo else ""
    return ModelIdentity(
        input=text,
        source=source,
        developer=dev,
        developer_inferred=inferred,
        base_model=base,
        configuration=base + settings.qualifiers() + tail,
        family=_family(tokens, r, key),
        settings=settings,
        derived_from=derived,
        match_key=collapse_standard(SHOTS.sub(" ", text), r, developer=dev),
        repo=repo,
        setup={**name_setup(hints.display_name or "", r), **name_setup(rules_text, r)},
        links=tuple(_link(link, base, settings, tail) for link in links),
        name_date=written,
        needs_observation=waits,
    )


def _dated(
    text: str, base: str, settings: Settings, r: NameRules, hints: NameHints
) -> tuple[Settings, tuple[IdentityLink, ...], str | None, bool]:
    """The settings with the configuration's date (and default reasoning mode) resolved, the links
    that did it, the date the name itself writes (when it has a year), and whether an undated
    name waits for an observation date to say which snapshot it is."""
    book = r.snapshots
    found = None
    if settings.date_tag is not None:  # the name (or its display name) writes a date: which one
        folded = T.fold(text).lower()
        if "/" in folded and T.REPO_ID.match(folded):
            folded = folded.split("/", 1)[1]
        found = combine(name_dates(folded))
        if found is None and hints.display_name:
            found = combine(name_dates(T.fold(hints.display_name).lower()))
    said = hints.source_id if hints.source_id and hints.source_id != text else None
    evidence = DateEvidence(stated_day(said), _release(hints.release_date), hints.observed_on, said or "")
    line = find_line(book, base, settings.preview, settings.alias)
    iso, links = resolve_date(found, line, evidence, month_year=book.writes_month_year(base))
    waits = False
    if iso is None and settings.checkpoint is None:
        iso, links = resolve_alias(line, text, evidence)
        waits = iso is None and evidence.observed is None and line is not None and bool(line.aliases)
    update: dict[str, Any] = {}
    if iso != settings.date_tag:
        update["date_tag"] = iso
    if iso is not None and settings.alias == "latest":
        update["alias"] = None  # a dated version of a moving alias is that snapshot
    mode_free = settings.reasoning_mode is None and settings.thinking_budget is None and settings.effort is None
    if line is not None and line.default_mode and mode_free:
        update["reasoning_mode"] = line.default_mode
        rule = f"{line.line} runs {line.default_mode.replace('_', '-')} unless a name says otherwise"
        links = (*links, IdentityLink("mode", rule, "", (iso,) if iso else (None,), line.mode_evidence))  # type: ignore[arg-type]
    written = found.iso if found is not None and found.year is not None else None
    return (settings.model_copy(update=update) if update else settings), links, written, waits


def _link(link: IdentityLink, base: str, settings: Settings, tail: str) -> Link:
    alias = None if settings.alias == "latest" else settings.alias  # a dated alias is its snapshot
    configurations = tuple(
        base + settings.model_copy(update={"date_tag": d, "alias": alias}).qualifiers() + tail for d in link.dates
    )
    return Link(
        kind=link.kind, rule=link.rule, written=link.written, configurations=configurations, evidence=link.evidence
    )


def _repo_qualifier(text: str, dev: str, key: str, repo_org: str | None, registry: Registry) -> str | None:
    """The repository, unless the configuration id already says it: two repositories are never one
    configuration. A repo whose organisation is not the model's developer (a repack, a fine-tune)
    or whose words the key rewrites ("mllama-3.1-8b-it" next to "mllama-3.1-8b-instruct") keeps its
    name in the configuration id; one the key only reorders or recases does not."""
    rules = registry.name_rules
    if repo_org is None or (rules is not None and repo_org.lower() in rules.providers):
        return None  # no repository, or a provider serving the model (the `provider` setting says so)
    org_dev = registry.developer_for(repo_org)
    same_org = (org_dev.id if org_dev else slug(repo_org, keep=".")) == dev
    assert rules is not None
    # the repo's own words (after the registry's curated aliases), before synonyms and order
    spelled = sorted(_identity_tokens(T.apply_base_aliases(text, rules), rules))
    if same_org and spelled == sorted(key.split("-")):
        return None
    return text.strip().lower()
