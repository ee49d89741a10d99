"""Rows the loader writes for one record: its evaluation, its scores, the model's identity and facts.

Pure functions of a validated record and what canonicalisation decided, so the loader itself is
only bookkeeping (dedup, quarantine, counts) around them. Score ids are derived from content
(the record's fingerprint and the result), so a score keeps its id through every reparse.
"""

from __future__ import annotations

import hashlib
import json
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

import orjson

from evalhouse.common.dates import parse_date
from evalhouse.curation.identity import ResolvedModel
from evalhouse.curation.names import Link
from evalhouse.curation.plausibility import instant
from evalhouse.schema import records as R

RELATIONSHIP_TO_EVALUATOR = {
    "first_party": "model_developer",
    "third_party": "independent_evaluator",
    "collaborative": "model_developer",
    "other": "unknown",
}
MODEL_FACT_SKIP = {
    "deployment_type",
    "model_availability",
    R.RELEASE_DATE,
    R.RELEASE_DATE_KIND,
    R.RELEASE_DATE_PRECISION,
}
_MAX_ID = (1 << 62) - 1


@dataclass(frozen=True)
class RecordContext:
    """What every score of one record shares."""

    source_key: str
    run_id: str
    eval_id: str
    fingerprint: str
    model: ResolvedModel
    evaluated_by: str
    details: dict[str, str]
    harness: str | None
    raw_sha256: str
    observed_at: Any
    migration_steps: tuple[str, ...] = ()
    lower_bound_kinds: frozenset[str] = frozenset()  # evidence kinds that only bound a release from below


def observed_at(retrieved_timestamp: Any) -> datetime | None:
    """When the record's bytes were retrieved (EEE writes unix seconds, some sources ISO 8601)."""
    return instant(retrieved_timestamp or "")


_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS


def dump(value: Any, *, sort_keys: bool = False) -> str:
    """Compact JSON text for a JSON column (orjson; the standard library for what orjson cannot
    write, such as integers beyond 64 bits)."""
    try:
        return orjson.dumps(value, default=str, option=_SORTED if sort_keys else 0).decode()
    except (TypeError, orjson.JSONEncodeError):
        return json.dumps(value, ensure_ascii=False, default=str, sort_keys=sort_keys, separators=(",", ":"))


def score_id(fingerprint: str) -> int:
    """A positive 62-bit integer id from a score fingerprint (``audit score`` accepts either)."""
    return int(fingerprint[:16], 16) & _MAX_ID


def evaluation_row(
    ctx: RecordContext, record: dict[str, Any], locator: str, extra: dict[str, Any], record_json: str | None = None
) -> dict[str, Any]:
    """The record's ``evaluation`` row (``record_json``: its JSON as :func:`dump` writes it, when
    the reader wrote that already)."""
    meta = record["source_metadata"]
    library = record["eval_library"]
    return {
        "evaluation_id": ctx.eval_id,
        "fingerprint": ctx.fingerprint,
        "source_key": ctx.source_key,
        "run_id": ctx.run_id,
        "raw_sha256": ctx.raw_sha256,
        "locator": locator,
        "schema_version": record["schema_version"],
        "retrieved_timestamp": record["retrieved_timestamp"],
        "evaluation_timestamp": record.get("evaluation_timestamp"),
        "model_source_id": record["model_info"]["id"],
        "model_name": record["model_info"].get("name"),
        "developer_raw": record["model_info"].get("developer"),
        "config_id": ctx.model.config_id,
        "eval_library": library["name"],
        "eval_library_version": library["version"],
        "eval_library_details": dump(library.get("additional_details") or {}),
        "source_type": meta["source_type"],
        "evaluator_relationship": meta["evaluator_relationship"],
        "source_metadata": dump(meta),
        "record": dump(record) if record_json is None else record_json,
        "source_evaluation_id": None,  # the source's id when two records shared it (set in extra)
        # what every score of the record shares (the score view joins it)
        "evaluated_by": ctx.evaluated_by,
        "original_source": ctx.details.get(R.ORIGINAL_SOURCE),
        "original_source_url": ctx.details.get(R.ORIGINAL_SOURCE_URL),
        "observed_at": ctx.observed_at,
        "migration_steps": list(ctx.migration_steps) or None,  # NULL: not migrated
        **extra,
    }


def identity_rows(m: ResolvedModel, source_key: str, run_id: str) -> dict[str, dict[str, Any]]:
    """One row per identity table for a resolved model (inserted OR IGNORE: first writer wins)."""
    return {
        "developer": {"developer_id": m.developer_id, "name": m.developer_name},
        "model_family": {"family_id": m.family_id, "name": m.family_name, "developer_id": m.developer_id},
        "base_model": {
            "base_model_id": m.base_model_id,
            "name": m.base_model_name,
            "family_id": m.family_id,
            "developer_id": m.developer_id,
            "scope": m.scope,
            "derived_from": m.derived_from,
            "match_key": m.match_key,
            "developer_inferred": m.developer_inferred,
        },
        "model_config": {
            "config_id": m.config_id,
            "base_model_id": m.base_model_id,
            "name": m.config_name,
            "reasoning_mode": m.flags.get("reasoning_mode"),
            "effort": m.flags.get("effort"),
            "context_variant": m.flags.get("context_variant"),
            "preview": bool(m.flags.get("preview")),
            "flags": dump(m.flags, sort_keys=True),
        },
        "model_alias": {
            "source_key": source_key,
            "source_model_id": m.source_model_id,
            "config_id": m.config_id,
            "model_name": m.source_model_name,
            "developer_raw": m.developer_raw,
            "first_run_id": run_id,
        },
    }


def identity_link(m: ResolvedModel, link: Link, source_key: str) -> tuple[str, str, str]:
    """``(kind, subject, detail)`` of the curation decision an identity link is recorded as: a date
    or alias resolved with its evidence (``identity_link``), or a configuration the model's may be
    and was not merged with (``identity_candidate``)."""
    kind = "identity_candidate" if link.kind == "candidate" else "identity_link"
    subject = {"config_id": m.config_id, "source_key": source_key, "source_model_id": m.source_model_id}
    detail = {
        "step": link.kind,
        "written": link.written,
        "model_name": m.source_model_name,
        "configurations": list(link.configurations),
        "evidence": link.evidence,
    }
    return kind, dump(subject, sort_keys=True), dump(detail, sort_keys=True)


def model_facts(ctx: RecordContext, record: dict[str, Any]) -> list[dict[str, Any]]:
    """What the source states about the model (parameters, compute, availability ...)."""
    details = record["model_info"]["additional_details"]
    rows = []
    for key, value in details.items():
        if key in MODEL_FACT_SKIP and key not in ("deployment_type", "model_availability"):
            continue
        if key in ("deployment_type", "model_availability") and value in (None, "unknown"):
            continue
        rows.append(
            {
                "config_id": ctx.model.config_id,
                "source_key": ctx.source_key,
                "key": key,
                "value": json.dumps(value),
                "evaluation_id": ctx.eval_id,
                "raw_sha256": ctx.raw_sha256,
            }
        )
    return rows


def release_evidence(ctx: RecordContext, record: dict[str, Any], *, stated: bool = True) -> list[dict[str, Any]]:
    """Release-date claims: the source's own field (unless not ``stated``: the loader refused it)
    and a date written in the model's name."""
    details = record["model_info"]["additional_details"]
    m = ctx.model
    evidence: list[tuple[date, str, str]] = []
    parsed = parse_date(details.get(R.RELEASE_DATE)) if stated else None
    if parsed is not None:
        day, precision = parsed
        kind = details.get(R.RELEASE_DATE_KIND) or "unknown"
        evidence.append((day, details.get(R.RELEASE_DATE_PRECISION) or precision, kind))
    if m.name_date is not None:
        evidence.append((m.name_date[0], m.name_date[1], "model_name"))
    url = first_url(record)
    rows = []
    for day, precision, kind in evidence:
        key = f"{m.base_model_id}|{m.config_id}|{day}|{kind}|{ctx.source_key}|{ctx.raw_sha256}"
        rows.append(
            {
                "evidence_id": hashlib.sha256(key.encode()).hexdigest()[:20],
                "config_id": m.config_id,
                "base_model_id": m.base_model_id,
                "date": day,
                "precision": precision,
                "kind": kind,
                "source_key": ctx.source_key,
                "url": url,
                "raw_sha256": ctx.raw_sha256,
                "lower_bound": kind in ctx.lower_bound_kinds,
                "verification": "unverified",
                "reason": f"stated by source {ctx.source_key} in evaluation {ctx.eval_id}",
                "recorded_by": "loader",
            }
        )
    return rows


def first_url(record: dict[str, Any]) -> str | None:
    details = record["source_metadata"].get("additional_details") or {}
    if details.get(R.ORIGINAL_SOURCE_URL):
        return details[R.ORIGINAL_SOURCE_URL]
    for result in record["evaluation_results"]:
        urls = (result.get("source_data") or {}).get("url")
        if urls:
            return urls[0]
    return record["source_metadata"].get("source_organization_url")


def provisional_row(table: str, r: dict[str, Any], source_key: str) -> dict[str, Any]:
    version = f"provisional:{source_key}"
    if table == "benchmark":
        return {
            "benchmark_id": r["id"],
            "display_name": r["name"],
            "description": r["description"],
            "registry_version": version,
        }
    lo, hi = r["bounds"]
    return {
        "metric_id": r["id"],
        "kind": r["kind"],
        "unit": r["unit"],
        "min_value": lo,
        "max_value": hi,
        "lower_is_better": r["lower_is_better"],
        "description": r["description"],
        "registry_version": version,
    }
