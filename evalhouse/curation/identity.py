"""Model identity at load time: an EEE ``model_info`` -> configuration -> base model -> family.

The name rules are :mod:`evalhouse.curation.names` (pure functions of strings and the registry);
this module applies them to what a record says about its model: the identifier a source uses
(``model_info.id`` for sources whose ids are repositories, the display name for leaderboards whose
ids are slugs), the stated developer, and the settings the source states beside the name
(``model_info.additional_details``: precision, inference effort, quantisation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import lru_cache
from typing import Any, Literal

from evalhouse.common.dates import parse_date
from evalhouse.curation.names import Link, ModelIdentity, NameHints, resolve
from evalhouse.curation.registry import Registry

#: Which ``model_info`` field names the artefact: ``id`` for repository ids (EEE datastore, model
#: cards, harness logs), ``name`` for leaderboards whose ids are slugs of the display name.
IdentityFrom = Literal["id", "name"]


@dataclass(frozen=True)
class ResolvedModel:
    source_model_id: str
    source_model_name: str | None
    developer_raw: str | None
    developer_id: str
    developer_name: str
    developer_inferred: bool
    config_id: str
    config_name: str
    base_model_id: str
    base_model_name: str
    family_id: str
    family_name: str
    scope: str | None
    derived_from: str | None = None
    match_key: str = ""
    flags: dict[str, Any] = field(default_factory=dict)
    name_date: tuple[date, str] | None = None
    setup: dict[str, str] = field(default_factory=dict)  # evaluation setup the name states ("(8-shot)")
    links: tuple[Link, ...] = ()  # how the date and alias were resolved; candidates not merged


def _name_date(written: str | None) -> tuple[date, str] | None:
    """The date the name itself writes ("gpt-4o-2024-05-13", "(February 2025)"), day or month
    precision; a month-day without a year ("0613") is no release evidence."""
    return parse_date(written) if written else None


def _settings_details(details: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    keys = ("inference_effort", "reasoning_effort", "effort", "precision", "torch_dtype", "dtype")
    keys += ("quantization", "quantisation", "thinking_budget", "provider", "inference_provider")
    return tuple((k, str(details[k])) for k in keys if details.get(k) not in (None, ""))


def observed_day(*timestamps: Any) -> date | None:
    """The day of the first timestamp that reads as one (ISO 8601 text, unix seconds, a date).

    Pass when the source ran the model (a record's evaluation timestamp): which snapshot an alias
    denoted depends on it. A retrieval timestamp is no such day — a page fetched in 2026 may list
    a 2023 result — so an undated alias seen only through one stays undated (linked as candidates)
    unless it only ever denoted one snapshot."""
    for value in timestamps:
        if isinstance(value, datetime):
            return value.date()
        if isinstance(value, date):
            return value
        text = str(value or "").strip()
        if not text:
            continue
        try:
            if text.replace(".", "", 1).isdigit():
                seconds = float(text)
                if 0 < seconds < 4e9:
                    return datetime.fromtimestamp(seconds, UTC).date()
                continue
            return datetime.fromisoformat(text.replace("Z", "+00:00")).date()
        except (ValueError, OverflowError):
            continue
    return None


#: Distinct model names whose resolution is remembered, in each of the two caches below (≈ 4 KB a
#: name in all): every name of a nightly refresh or of a datastore collection fits, and a load of
#: 40,000 new names (10^6 scores) holds 16,384 of them, not all (65,536 each held ≈ 140 MB more at
#: the import's 1 GB peak). A name past the bound is resolved again (≈ 150 µs) when it comes back.
RESOLVED_CACHE = 16384


#: (name, display name, source key, stated developer, setting details, source id, release date,
#: observation day): what one resolution depends on.
Query = tuple[str, str | None, str, str | None, tuple[tuple[str, str], ...], str | None, str | None, date | None]


@lru_cache(maxsize=RESOLVED_CACHE)
def _resolve(query: Query, registry: Registry) -> ModelIdentity:
    # Name rules are pure and a load sees the same few hundred names again and again.
    name, display, source_key, developer, details, source_id, release, observed = query
    hints = NameHints(
        display_name=display, details=dict(details), source_id=source_id, release_date=release, observed_on=observed
    )
    return resolve(name, registry, source=source_key, developer=developer, hints=hints)


def resolve_model(
    model_info: dict[str, Any],
    source_key: str,
    registry: Registry,
    *,
    identity_from: IdentityFrom = "name",
    observed_on: date | None = None,
) -> ResolvedModel:
    """Resolve an EEE ``model_info`` seen in ``source_key`` to its identity rows.

    ``observed_on`` is the day the source ran the model (the record's evaluation date:
    :func:`observed_day`); it decides which snapshot an undated alias denoted, and is read only
    for a name that needs it.

    The answer depends only on the id, name, developer, setting details and release date of
    ``model_info`` (and, for an undated alias, the observation day), so it is remembered per those
    (a load sees one model in record after record); the returned :class:`ResolvedModel` is shared
    between the records that named the same model: read it, never change its dicts."""
    model_id = str(model_info.get("id") or "")
    display = model_info.get("name")
    developer_raw = model_info.get("developer")
    details = model_info.get("additional_details") or {}
    settings = _settings_details(details)
    release = details.get("release_date")
    release = str(release) if release not in (None, "") else None
    first = _resolved(model_id, display, developer_raw, settings, release, None, source_key, registry, identity_from)
    if observed_on is None or not first.waits:
        return first.model
    return _resolved(
        model_id, display, developer_raw, settings, release, observed_on, source_key, registry, identity_from
    ).model


@dataclass(frozen=True)
class _Resolution:
    model: ResolvedModel
    waits: bool  # an undated alias whose snapshot depends on the observation day


@lru_cache(maxsize=RESOLVED_CACHE)
def _resolved(  # noqa: PLR0913, PLR0917 - the fields of model_info the identity depends on, and its context
    model_id: str,
    display: Any,
    developer_raw: Any,
    settings: tuple[tuple[str, str], ...],
    release: str | None,
    observed: date | None,
    source_key: str,
    registry: Registry,
    identity_from: IdentityFrom,
) -> _Resolution:
    name = model_id if identity_from == "id" and model_id else (display or model_id)
    stated = developer_raw if developer_raw and str(developer_raw).lower() != "unknown" else None
    if stated is None and "/" in model_id and identity_from == "name":
        # the repository's organisation, unless the registry documents the repository as a copy
        stated = registry.reuploads.get(model_id.lower()) or model_id.split("/", 1)[0]
    shown = display if display != name else None
    source_id = model_id if model_id and model_id != name else None
    ident = _resolve((name, shown, source_key, stated, settings, source_id, release, observed), registry)
    flags = ident.settings.model_dump()
    dev = registry.developers.get(ident.developer)
    model = ResolvedModel(
        source_model_id=model_id,
        source_model_name=display,
        developer_raw=developer_raw,
        developer_id=ident.developer,
        developer_name=dev.name if dev else (stated or ident.developer),
        developer_inferred=ident.developer_inferred,
        config_id=ident.configuration,
        config_name=str(display or model_id),
        base_model_id=ident.base_model,
        base_model_name=ident.base_model.split("/", 1)[-1],
        family_id=ident.family,
        family_name=ident.family,
        scope=source_key if ident.is_scoped else None,
        derived_from=ident.derived_from,
        match_key=ident.match_key,
        flags=flags,
        name_date=_name_date(ident.name_date),
        setup=dict(ident.setup),
        links=ident.links,
    )
    return _Resolution(model, ident.needs_observation)


def describe_name(
    name: str,
    registry: Registry,
    *,
    source: str | None = None,
    developer: str | None = None,
    hints: NameHints | None = None,
) -> dict[str, Any]:
    """A model name as evalhouse resolves it: configuration, base model, family and settings, the
    setup the name states, and the links that dated it or were not merged (JSON-able)."""
    ident = resolve(name, registry, source=source, developer=developer, hints=hints)
    return {
        "input": ident.input,
        "source": ident.source,
        "developer": ident.developer,
        "developer_inferred": ident.developer_inferred,
        "configuration": ident.configuration,
        "base_model": ident.base_model,
        "family": ident.family,
        "derived_from": ident.derived_from,
        "match_key": ident.match_key,
        "flags": ident.settings.model_dump(),
        "setup": dict(ident.setup),
        "links": [link.model_dump() for link in ident.links],
    }
