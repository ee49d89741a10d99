"""Model identity at load time: source identifier -> configuration -> base model -> family.

The name rules live in :mod:`evalhouse.curation.model_names` (pure functions over strings); this
module applies them to an EEE ``model_info`` and adds the developer from the registry's alias
table, so the warehouse can keep the raw spelling beside one canonical slug.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import date, datetime
from functools import lru_cache
from typing import Any

from evalhouse.curation.model_names import ModelIdentity, resolve
from evalhouse.curation.registry import Registry


@dataclass(frozen=True)
class ResolvedModel:
    source_model_id: str
    source_model_name: str | None
    developer_raw: str | None
    developer_id: str
    developer_name: str
    config_id: str
    config_name: str
    base_model_id: str
    base_model_name: str
    family_id: str
    family_name: str
    scope: str | None
    flags: dict[str, Any] = field(default_factory=dict)
    name_date: tuple[date, str] | None = None


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9.]+", "-", text.casefold()).strip("-") or "unknown"


def developer_of(model_info: dict[str, Any], registry: Registry) -> tuple[str, str, str | None]:
    """``(developer_id, display name, raw spelling)``: ``developer`` field, else the id's prefix, else the
    developer the name points to (``registries/developers.yaml`` name patterns; not a source's statement)."""
    raw = model_info.get("developer")
    model_id = model_info.get("id", "")
    candidates = [raw, model_id.split("/")[0] if "/" in model_id else None]
    for cand in candidates:
        dev = registry.developer_for(cand)
        if dev is not None:
            return dev.id, dev.name, raw
    named = registry.developer_from_model_name(model_id or model_info.get("name"))
    if named is not None:
        return named.id, named.name, raw
    fallback = next((c for c in candidates if c), None)
    return (_slug(fallback), fallback, raw) if fallback else ("unknown", "unknown", raw)


def _name_date(flags: dict[str, Any]) -> tuple[date, str] | None:
    tag = flags.get("date_tag")
    if not tag:
        return None
    text = str(tag)
    for fmt, precision in (("%Y-%m-%d", "day"), ("%Y%m%d", "day"), ("%Y-%m", "month")):
        try:
            return datetime.strptime(text, fmt).date(), precision
        except ValueError:
            continue
    return None


@lru_cache(maxsize=65536)
def _resolve(name: str, source_key: str, developer: str | None) -> ModelIdentity:
    # Name rules are pure and a refresh sees the same few hundred names again and again.
    return resolve(name, source=source_key, developer=developer)


def resolve_model(model_info: dict[str, Any], source_key: str, registry: Registry) -> ResolvedModel:
    """Resolve an EEE ``model_info`` seen in ``source_key`` to its identity rows."""
    model_id = model_info.get("id") or ""
    name = model_info.get("name") or model_id
    developer_id, developer_name, developer_raw = developer_of(model_info, registry)
    ident = _resolve(name, source_key, developer_raw)
    flags = ident.flags.model_dump()
    scope = source_key if ident.is_scoped else None
    return ResolvedModel(
        source_model_id=model_id,
        source_model_name=model_info.get("name"),
        developer_raw=developer_raw,
        developer_id=developer_id,
        developer_name=developer_name,
        config_id=ident.configuration,
        config_name=name,
        base_model_id=ident.base_model,
        base_model_name=ident.base_model,
        family_id=ident.family,
        family_name=ident.family,
        scope=scope,
        flags=flags,
        name_date=_name_date(flags),
    )


def describe_name(name: str, *, source: str | None = None, developer: str | None = None) -> dict[str, Any]:
    """A model name as evalhouse resolves it: configuration, base model, family and flags (JSON-able)."""
    ident = resolve(name, source=source, developer=developer)
    return {
        "input": ident.input,
        "source": ident.source,
        "configuration": ident.configuration,
        "base_model": ident.base_model,
        "family": ident.family,
        "flags": ident.flags.model_dump(),
    }
