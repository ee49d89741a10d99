"""Loading parsed records into the warehouse: validate, fingerprint, dedup, canonicalise, insert.

The caller wraps :func:`load_items` in one transaction together with its ``ingest_run`` row, so a
crash leaves the previous state. Every item ends up in exactly one place — an ``evaluation``
(its results as ``score`` rows, or as ``quarantine`` rows when a result cannot be canonicalised),
a logged duplicate (``curation_decision`` kind ``exact_duplicate``), or ``quarantine`` — and the
:class:`LoadReport` counts say so.
"""

from __future__ import annotations

import hashlib
import json
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import ValidationError

from evalhouse.curation.canonicalise import (
    Canonicaliser,
    CanonicalScore,
    Rejection,
    setup_key,
    setup_of,
)
from evalhouse.curation.identity import ResolvedModel, resolve_model
from evalhouse.curation.registry import Registry, load_registry, scale
from evalhouse.schema import records as R
from evalhouse.schema.eee import SCHEMA_VERSION, EvaluationLog, SchemaVersionError
from evalhouse.schema.fingerprint import canonical_json, record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem

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


@dataclass
class LoadReport:
    records_read: int = 0
    records_loaded: int = 0
    records_duplicate: int = 0
    records_quarantined: int = 0
    scores_read: int = 0
    scores_loaded: int = 0
    scores_quarantined: int = 0
    scores_in_duplicates: int = 0
    parse_failures: int = 0
    fingerprints: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def quarantined(self) -> int:
        return self.records_quarantined + self.scores_quarantined + self.parse_failures

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in {"fingerprints", "reasons"}}
        d["quarantine_reasons"] = dict(self.reasons.most_common(20))
        return d


def summarise_validation_error(exc: ValidationError, limit: int = 5) -> str:
    """A one-line, location-first summary of a pydantic error (the full list can be hundreds)."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "<record>"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def validate_record(record: Any) -> tuple[EvaluationLog | None, str | None]:
    """The validated log, or a reason naming what is wrong (schema version first)."""
    if not isinstance(record, dict):
        return None, f"expected a JSON object, got {type(record).__name__}"
    try:
        return EvaluationLog.model_validate(record), None
    except SchemaVersionError as exc:
        return None, str(exc)
    except ValidationError as exc:
        version_errors = [e for e in exc.errors() if isinstance(e.get("ctx", {}).get("error"), SchemaVersionError)]
        if version_errors:
            return None, str(version_errors[0]["ctx"]["error"])
        return None, f"not a valid EEE {SCHEMA_VERSION} record: {summarise_validation_error(exc)}"


@dataclass(frozen=True)
class _RecordContext:
    """What every score of one record shares."""

    eval_id: str
    fingerprint: str
    model: ResolvedModel
    evaluated_by: str
    details: dict[str, str]
    harness: str


class Loader:
    """Loads items for one run of one source into an open connection (inside a transaction)."""

    def __init__(
        self,
        con: duckdb.DuckDBPyConnection,
        *,
        source_key: str,
        run_id: str,
        collection: str | None = None,
        registry: Registry | None = None,
        allow_provisional: bool = False,
    ) -> None:
        self.con = con
        self.source_key = source_key
        self.run_id = run_id
        self.collection = collection or source_key
        self.registry = registry or load_registry()
        self.canonicaliser = Canonicaliser(self.registry, allow_provisional=allow_provisional)
        self.report = LoadReport()
        self._rows: dict[str, list[dict[str, Any]]] = {
            "evaluation": [],
            "score": [],
            "quarantine": [],
            "curation_decision": [],
            "model_attribute": [],
            "release_date_evidence": [],
        }
        self._identity: dict[str, dict[str, dict[str, Any]]] = {
            "developer": {},
            "model_family": {},
            "base_model": {},
            "model_config": {},
            "model_alias": {},
        }
        self._provisional: dict[str, dict[str, dict[str, Any]]] = {"benchmark": {}, "metric": {}}
        self._seen: set[str] = set()
        self._seen_ids: set[str] = set()

    # -- public -----------------------------------------------------------------------------

    def load(self, items: Iterable[ParseItem], *, raw_sha256: str) -> LoadReport:
        batch: list[tuple[ParsedRecord, EvaluationLog, str, dict[str, Any]]] = []
        for item in items:
            if isinstance(item, ParseFailure):
                self.report.parse_failures += 1
                self._quarantine(item.raw_sha256 or raw_sha256, item.locator, "parse", item.reason, item.payload)
                continue
            self.report.records_read += 1
            log, reason = validate_record(item.record)
            if log is None:
                self.report.records_quarantined += 1
                self._quarantine(
                    item.raw_sha256 or raw_sha256,
                    item.locator,
                    "validate",
                    reason or "invalid",
                    _dump(item.record),
                )
                continue
            record = dict(item.record)
            fingerprint = record_fingerprint(record)
            if not record.get("evaluation_id"):
                record["evaluation_id"] = f"{self.collection}/{log.model_info.id}/{fingerprint[:16]}"
            batch.append((item, log, fingerprint, record))
        self._load_batch(batch, raw_sha256)
        self._flush()
        return self.report

    # -- internals --------------------------------------------------------------------------

    def _load_batch(
        self,
        batch: list[tuple[ParsedRecord, EvaluationLog, str, dict[str, Any]]],
        batch_sha256: str,
    ) -> None:
        if not batch:
            return
        known_fp = self._existing("evaluation", "fingerprint", [fp for _, _, fp, _ in batch])
        known_ids = self._existing("evaluation", "evaluation_id", [r["evaluation_id"] for *_, r in batch])
        for item, log, fingerprint, record in batch:
            raw_sha256 = item.raw_sha256 or batch_sha256
            n_results = len(log.evaluation_results)
            self.report.scores_read += n_results
            if fingerprint in known_fp or fingerprint in self._seen:
                self.report.records_duplicate += 1
                self.report.scores_in_duplicates += n_results
                self._rows["curation_decision"].append(
                    {
                        "kind": "exact_duplicate",
                        "rule": "fingerprint: EEE normalised hash already in the warehouse",
                        "subject": json.dumps({"fingerprint": fingerprint, "evaluation_id": record["evaluation_id"]}),
                        "detail": json.dumps(
                            {
                                "locator": item.locator,
                                "raw_sha256": raw_sha256,
                                "source_key": self.source_key,
                            }
                        ),
                        "run_id": self.run_id,
                    }
                )
                continue
            eval_id = record["evaluation_id"]
            if eval_id in known_ids or eval_id in self._seen_ids:
                self.report.records_quarantined += 1
                self._quarantine(
                    raw_sha256,
                    item.locator,
                    "load",
                    f"evaluation_id {eval_id!r} is already in the warehouse with different content "
                    "(EEE ids should be unique per record)",
                    _dump(record),
                )
                continue
            self._seen.add(fingerprint)
            self._seen_ids.add(eval_id)
            self.report.fingerprints.append(fingerprint)
            self._load_record(item, log, fingerprint, record, raw_sha256)

    def _load_record(
        self,
        item: ParsedRecord,
        log: EvaluationLog,
        fingerprint: str,
        record: dict[str, Any],
        raw_sha256: str,
    ) -> None:
        model = resolve_model(record["model_info"], self.source_key, self.registry)
        self._remember_identity(model)
        meta = record["source_metadata"]
        details = meta.get("additional_details") or {}
        evaluated_by = details.get(R.EVALUATED_BY) or RELATIONSHIP_TO_EVALUATOR[meta["evaluator_relationship"]]
        eval_id = record["evaluation_id"]
        self._rows["evaluation"].append(
            {
                "evaluation_id": eval_id,
                "fingerprint": fingerprint,
                "source_key": self.source_key,
                "collection": self.collection,
                "datastore_path": item.datastore_path,
                "run_id": self.run_id,
                "raw_sha256": raw_sha256,
                "locator": item.locator,
                "schema_version": record["schema_version"],
                "retrieved_timestamp": record["retrieved_timestamp"],
                "evaluation_timestamp": record.get("evaluation_timestamp"),
                "model_source_id": record["model_info"]["id"],
                "model_name": record["model_info"].get("name"),
                "developer_raw": record["model_info"].get("developer"),
                "config_id": model.config_id,
                "eval_library": record["eval_library"]["name"],
                "eval_library_version": record["eval_library"]["version"],
                "source_type": meta["source_type"],
                "evaluator_relationship": meta["evaluator_relationship"],
                "samples_sha256": item.samples_sha256,
                "record": json.dumps(record, ensure_ascii=False, allow_nan=False),
            }
        )
        self.report.records_loaded += 1
        ctx = _RecordContext(eval_id, fingerprint, model, evaluated_by, details, record["eval_library"]["name"])
        for index, result in enumerate(record["evaluation_results"]):
            outcome = self.canonicaliser.canonicalise(result, source_key=self.source_key, collection=self.collection)
            locator = f"{item.locator} / evaluation_results[{index}]"
            if isinstance(outcome, Rejection):
                self.report.scores_quarantined += 1
                self._quarantine(raw_sha256, locator, "canonicalise", outcome.reason, _dump(result))
                continue
            self._add_score(ctx, index, result, outcome, locator)
        self._model_facts(record, model, eval_id, raw_sha256)

    def _add_score(
        self, ctx: _RecordContext, index: int, result: dict[str, Any], c: CanonicalScore, locator: str
    ) -> None:
        for prov, table in (
            (c.provisional_benchmark, "benchmark"),
            (c.provisional_metric, "metric"),
        ):
            if prov is not None and prov.id not in self._provisional[table]:
                self._provisional[table][prov.id] = prov.model_dump()
        unc = result["score_details"].get("uncertainty") or {}
        se = (unc.get("standard_error") or {}).get("value")
        ci = unc.get("confidence_interval") or {}
        setup = setup_of(result)
        self._rows["score"].append(
            {
                "fingerprint": hashlib.sha256(f"{ctx.fingerprint}:{canonical_json(result)}".encode()).hexdigest(),
                "evaluation_id": ctx.eval_id,
                "result_index": index,
                "evaluation_result_id": result.get("evaluation_result_id"),
                "source_key": self.source_key,
                "run_id": self.run_id,
                "config_id": ctx.model.config_id,
                "benchmark_raw": c.benchmark_raw,
                "benchmark_id": c.benchmark_id,
                "metric_raw": c.metric_raw,
                "metric_id": c.metric_id,
                "setup_key": setup_key(setup),
                "setup": json.dumps({**setup, "harness": ctx.harness}, sort_keys=True),
                "raw_value": c.raw_value,
                "raw_unit": c.raw_unit,
                "value": c.value,
                "unit": c.unit,
                "lower_is_better": c.lower_is_better,
                "stderr": None if se is None else scale(se, c.factor),
                "ci_lower": None if ci.get("lower") is None else scale(ci["lower"], c.factor),
                "ci_upper": None if ci.get("upper") is None else scale(ci["upper"], c.factor),
                "ci_level": ci.get("confidence_level"),
                "n_samples": unc.get("num_samples"),
                "evaluated_by": ctx.evaluated_by,
                "reported_by": self.source_key,
                "original_source": ctx.details.get(R.ORIGINAL_SOURCE),
                "original_source_url": ctx.details.get(R.ORIGINAL_SOURCE_URL),
                "locator": locator,
                "source_row_key": _source_row_key(self.source_key, ctx, c, setup, result),
                "canonical_steps": json.dumps(_value_steps(c)),
            }
        )
        self.report.scores_loaded += 1

    def _model_facts(self, record: dict[str, Any], model: ResolvedModel, eval_id: str, raw_sha256: str) -> None:
        details = record["model_info"]["additional_details"]
        for key, value in details.items():
            if key in MODEL_FACT_SKIP:
                continue
            self._rows["model_attribute"].append(
                {
                    "config_id": model.config_id,
                    "source_key": self.source_key,
                    "key": key,
                    "value": json.dumps(value),
                    "evaluation_id": eval_id,
                    "raw_sha256": raw_sha256,
                }
            )
        for avail_key in ("deployment_type", "model_availability"):
            if details.get(avail_key) not in (None, "unknown"):
                self._rows["model_attribute"].append(
                    {
                        "config_id": model.config_id,
                        "source_key": self.source_key,
                        "key": avail_key,
                        "value": json.dumps(details[avail_key]),
                        "evaluation_id": eval_id,
                        "raw_sha256": raw_sha256,
                    }
                )
        raw_date = details.get(R.RELEASE_DATE)
        evidence = []
        if raw_date:
            parsed = _parse_date(raw_date)
            if parsed is not None:
                day, precision = parsed
                kind = details.get(R.RELEASE_DATE_KIND) or "unknown"
                evidence.append((day, details.get(R.RELEASE_DATE_PRECISION) or precision, kind, False))
        if model.name_date is not None:
            evidence.append((model.name_date[0], model.name_date[1], "model_name", False))
        url = _first_url(record)
        for day, precision, kind, lower in evidence:
            key = f"{model.base_model_id}|{model.config_id}|{day}|{kind}|{self.source_key}|{raw_sha256}"
            self._rows["release_date_evidence"].append(
                {
                    "evidence_id": hashlib.sha256(key.encode()).hexdigest()[:20],
                    "config_id": model.config_id,
                    "base_model_id": model.base_model_id,
                    "date": day,
                    "precision": precision,
                    "kind": kind,
                    "source_key": self.source_key,
                    "url": url,
                    "raw_sha256": raw_sha256,
                    "lower_bound": lower,
                    "verification": "unverified",
                    "reason": f"stated by source {self.source_key} in evaluation {eval_id}",
                    "recorded_by": "loader",
                }
            )

    def _remember_identity(self, m: ResolvedModel) -> None:
        ident = self._identity
        ident["developer"].setdefault(m.developer_id, {"developer_id": m.developer_id, "name": m.developer_name})
        ident["model_family"].setdefault(
            m.family_id,
            {"family_id": m.family_id, "name": m.family_name, "developer_id": m.developer_id},
        )
        ident["base_model"].setdefault(
            m.base_model_id,
            {
                "base_model_id": m.base_model_id,
                "name": m.base_model_name,
                "family_id": m.family_id,
                "developer_id": m.developer_id,
                "scope": m.scope,
            },
        )
        ident["model_config"].setdefault(
            m.config_id,
            {
                "config_id": m.config_id,
                "base_model_id": m.base_model_id,
                "name": m.config_name,
                "reasoning_mode": m.flags.get("reasoning_mode"),
                "effort": m.flags.get("effort"),
                "context_variant": m.flags.get("context_variant"),
                "preview": bool(m.flags.get("preview")),
                "flags": json.dumps(m.flags, sort_keys=True, default=str),
            },
        )
        ident["model_alias"].setdefault(
            m.source_model_id,
            {
                "source_key": self.source_key,
                "source_model_id": m.source_model_id,
                "config_id": m.config_id,
                "model_name": m.source_model_name,
                "developer_raw": m.developer_raw,
                "first_run_id": self.run_id,
            },
        )

    def _quarantine(self, raw_sha256: str | None, locator: str, stage: str, reason: str, payload: str | None) -> None:
        self.report.reasons[reason.split(":", maxsplit=1)[0][:80]] += 1
        self._rows["quarantine"].append(
            {
                "run_id": self.run_id,
                "source_key": self.source_key,
                "raw_sha256": raw_sha256,
                "locator": locator,
                "stage": stage,
                "reason": reason,
                "payload": payload,
            }
        )

    def _existing(self, table: str, column: str, values: list[str]) -> set[str]:
        if not values:
            return set()
        rows = self.con.execute(
            f"SELECT {column} FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))",
            [values],
        ).fetchall()
        return {r[0] for r in rows}

    def _flush(self) -> None:
        for table, rows in self._identity.items():
            insert_rows(self.con, table, list(rows.values()), or_ignore=True)
        for table, rows in self._provisional.items():
            insert_rows(
                self.con,
                table,
                [_provisional_row(table, r, self.source_key) for r in rows.values()],
                or_ignore=True,
            )
            if rows:
                self._rows["curation_decision"].extend(
                    {
                        "kind": f"provisional_{table}",
                        "rule": "self-describing EEE record; not in the registry",
                        "subject": json.dumps({"id": rid}),
                        "detail": json.dumps(r, default=str),
                        "run_id": self.run_id,
                    }
                    for rid, r in rows.items()
                )
        for table, rows in self._rows.items():
            insert_rows(
                self.con,
                table,
                rows,
                or_ignore=table in {"model_attribute", "release_date_evidence"},
            )


def _value_steps(c: CanonicalScore) -> list[str]:
    """The group's steps plus this value's own conversion, as the audit prints them."""
    if c.raw_unit == c.unit:
        return [*c.steps, f"value {c.raw_value!r} {c.unit} kept as is"]
    return [*c.steps, f"{c.raw_value!r} {c.raw_unit} -> {c.value!r} {c.unit}"]


def _source_row_key(
    source_key: str, ctx: _RecordContext, c: CanonicalScore, setup: dict[str, str], result: dict[str, Any]
) -> str:
    details = result["score_details"].get("details") or {}
    # The model *name* is in the key too: sources reuse one identifier for two configurations
    # (Epoch lists claude-3-7-sonnet with and without thinking under one model version).
    parts = [
        source_key,
        ctx.model.source_model_id,
        ctx.model.source_model_name or "",
        c.benchmark_raw,
        c.metric_id,
        setup_key(setup),
        ctx.details.get(R.ORIGINAL_SOURCE) or "",
        ctx.details.get(R.ORIGINAL_SOURCE_URL) or "",
        details.get(R.SOURCE_RECORD_ID) or "",
    ]
    return hashlib.sha256("\x1f".join(parts).encode()).hexdigest()[:32]


def _provisional_row(table: str, r: dict[str, Any], source_key: str) -> dict[str, Any]:
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


def insert_rows(
    con: duckdb.DuckDBPyConnection,
    table: str,
    rows: list[dict[str, Any]],
    *,
    or_ignore: bool = False,
) -> None:
    """Bulk insert through Arrow: one statement per table instead of one per row."""
    if not rows:
        return
    columns = list(rows[0])
    data = pa.Table.from_pylist(rows)
    con.register("_load_rows", data)
    try:
        verb = "INSERT OR IGNORE INTO" if or_ignore else "INSERT INTO"
        cols = ", ".join(columns)
        con.execute(f"{verb} {table} ({cols}) SELECT {cols} FROM _load_rows")
    finally:
        con.unregister("_load_rows")


def _dump(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, default=str)


def _parse_date(text: str) -> tuple[date, str] | None:
    text = text.strip()
    for fmt, precision in (("%Y-%m-%d", "day"), ("%Y-%m", "month"), ("%Y", "year")):
        try:
            return datetime.strptime(text, fmt).date(), precision
        except ValueError:
            continue
    return None


def _first_url(record: dict[str, Any]) -> str | None:
    details = record["source_metadata"].get("additional_details") or {}
    if details.get(R.ORIGINAL_SOURCE_URL):
        return details[R.ORIGINAL_SOURCE_URL]
    for result in record["evaluation_results"]:
        urls = result.get("source_data", {}).get("url")
        if urls:
            return urls[0]
    return record["source_metadata"].get("source_organization_url")
