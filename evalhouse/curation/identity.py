"""Model identity at load time: an EEE ``model_info`` -> configuration -> base model -> family.

The name rules are :mod:`evalhouse.curation.names` (pure functions of strings and the registry);
this module applies them to what a record says about its model: the identifier a source uses
(``model_info.id`` for sources whose ids are repositories, the display name for leaderboards whose
ids are slugs), the stated developer, and the settings the source states beside the name
(``model_info.additional_details``: precision, inference effort, quantisation).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache
from typing import Any, Literal

from evalhouse.common.dates import parse_date
from evalhouse.curation.names import ModelIdentity, NameHints, resolve
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


def _name_date(flags: dict[str, Any]) -> tuple[date, str] | None:
    """A date written into the name ("gpt-4o-2024-05-13", "(February 2025)") as day/month precision."""
    tag = str(flags.get("date_tag") or "")
    if len(tag) < 7:  # "0613", "06-05": a stamp, not a date
        return None
    return parse_date(tag)


def _settings_details(details: dict[str, Any]) -> tuple[tuple[str, str], ...]:
    keys = ("inference_effort", "reasoning_effort", "effort", "precision", "torch_dtype", "dtype")
    keys += ("quantization", "quantisation", "thinking_budget", "provider", "inference_provider")
    return tuple((k, str(details[k])) for k in keys if details.get(k) not in (None, ""))


#: Distinct model names whose resolution is remembered, in each of the two caches below (≈ 4 KB a
#: name in all): every name of a nightly refresh or of a datastore collection fits, and a load of
#: 40,000 new names (10^6 scores) holds 16,384 of them, not all (65,536 each held ≈ 140 MB more at
#: the import's 1 GB peak). A name past the bound is resolved again (≈ 150 µs) when it comes back.
RESOLVED_CACHE = 16384


@lru_cache(maxsize=RESOLVED_CACHE)
def _resolve(
    query: tuple[str, str | None, str, str | None, tuple[tuple[str, str], ...]], registry: Registry
) -> ModelIdentity:
    # Name rules are pure and a load sees the same few hundred names again and again.
    name, display, source_key, developer, details = query
    hints = NameHints(display_name=display, details=dict(details))
    return resolve(name, registry, source=source_key, developer=developer, hints=hints)


def resolve_model(
    model_info: dict[str, Any], source_key: str, registry: Registry, *, identity_from: IdentityFrom = "name"
) -> ResolvedModel:
    """Resolve an EEE ``model_info`` seen in ``source_key`` to its identity rows.

    The answer depends only on the id, name, developer and setting details of ``model_info``, so
    it is remembered per those (a load sees one model in record after record); the returned
    :class:`ResolvedModel` is shared between the records that named the same model: read it, never
    change its dicts."""
    model_id = str(model_info.get("id") or "")
    display = model_info.get("name")
    developer_raw = model_info.get("developer")
    settings = _settings_details(model_info.get("additional_details") or {})
    return _resolved(model_id, display, developer_raw, settings, source_key, registry, identity_from)


@lru_cache(maxsize=RESOLVED_CACHE)
def _resolved(  # noqa: PLR0913, PLR0917 - the fields of model_info the identity depends on, and its context
    model_id: str,
    display: Any,
    developer_raw: Any,
    settings: tuple[tuple[str, str], ...],
    source_key: str,
    registry: Registry,
    identity_from: IdentityFrom,
) -> ResolvedModel:
    name = model_id if identity_from == "id" and model_id else (display or model_id)
    stated = developer_raw if developer_raw and str(developer_raw).lower() != "unknown" else None
    if stated is None and "/" in model_id and identity_from == "name":
        # the repository's organisation, unless the registry documents the repository as a copy
        stated = registry.reuploads.get(model_id.lower()) or model_id.split("/", 1)[0]
    shown = display if display != name else None
    ident = _resolve((name, shown, source_key, stated, settings), registry)
    flags = ident.settings.model_dump()
    dev = registry.developers.get(ident.developer)
    return ResolvedModel(
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
        name_date=_name_date(flags),
        setup=dict(ident.setup),
    )


def describe_name(
    name: str, registry: Registry, *, source: str | None = None, developer: str | None = None
) -> dict[str, Any]:
    """A model name as evalhouse resolves it: configuration, base model, family and settings (JSON-able)."""
    ident = resolve(name, registry, source=source, developer=developer)
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
    }
