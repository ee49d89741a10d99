"""One score's provenance: score → evaluation record → raw fetches → source, and every decision.

A score is named by its id or by a prefix of its fingerprint (ids are derived from content, so
both survive a reparse). The chain says where the bytes came from (the canonical URL and, for a
mirror replay, the URL actually fetched), what the locators count, every canonicalisation step,
who ran / reported / originally published the number, the curation decisions touching it, whether
it is current, and — for its cell — every candidate value with its source, the spread and the rule
that chose the canonical value.
"""

from __future__ import annotations

import re
from typing import Any

import duckdb

from evalhouse.warehouse.audit.queries import AuditError, as_json, rows
from evalhouse.warehouse.audit.raw import payload_status
from evalhouse.warehouse.raw.store import RawStore

_HEX = re.compile(r"^[0-9a-f]{6,64}$")
LOCATORS = (
    "a locator names the record inside its payload and the result inside the record: "
    "'<file or table row> / evaluation_results[i]'; CSV sources count data rows (the header is "
    "not a row), JSONL sources count file lines from 1"
)


def find_score(con: duckdb.DuckDBPyConnection, ident: str | int) -> int:
    """The score id ``ident`` names: an id, or a fingerprint prefix of at least 6 hex digits."""
    text = str(ident).strip().lower()
    if text.isdigit():
        found = con.execute("SELECT score_id FROM score WHERE score_id = ?", [int(text)]).fetchall()
        if found:
            return int(found[0][0])
    if _HEX.match(text):
        found = con.execute(
            "SELECT score_id FROM score WHERE starts_with(fingerprint, ?) ORDER BY score_id LIMIT 3", [text]
        ).fetchall()
        if len(found) == 1:
            return int(found[0][0])
        if len(found) > 1:
            raise AuditError(f"fingerprint prefix {text!r} matches several scores; give more digits")
    raise AuditError(f"no score with id {ident} (nor a fingerprint starting with it)")


def score_chain(con: duckdb.DuckDBPyConnection, ident: str | int, store: RawStore | None = None) -> dict[str, Any]:
    """The full provenance of one score; ``store`` adds whether its bytes are still intact."""
    score_id = find_score(con, ident)
    s = rows(con, "audit_score.sql", score_id=score_id)[0]
    fetches = rows(con, "audit_fetches.sql", sha256=s["raw_sha256"]) if s["raw_sha256"] else []
    return {
        "score": _score_part(s),
        "canonicalisation": _canonicalisation(s),
        "evaluation": _evaluation_part(s),
        "raw": _raw_part(s, fetches, store),
        "source": {
            "key": s["source_key"],
            "name": s["source_name"],
            "kind": s["source_kind"],
            "tier": s["source_tier"],
            "organisation": s["source_organisation"],
            "homepage": s["source_homepage"],
        },
        "attribution": {
            "evaluated_by": s["evaluated_by"],
            "reported_by": s["reported_by"],
            "original_source": s["original_source"],
            "original_source_url": s["original_source_url"],
            "evaluator_relationship": s["evaluator_relationship"],
            "source_type": s["source_type"],
        },
        "run": {
            "run_id": s["run_id"],
            "trigger": s["run_trigger"],
            "started_at": s["run_started_at"],
            "status": s["run_status"],
            "parser_version": s["parser_version"],
            "registry_version": s["registry_version"],
            "evalhouse_version": s["evalhouse_version"],
        },
        "model": {
            "config_id": s["config_id"],
            "config_name": s["config_name"],
            "base_model_id": s["base_model_id"],
            "base_model_name": s["base_model_name"],
            "derived_from": s["derived_from"],
            "family_id": s["family_id"],
            "developer_id": s["developer_id"],
            "source_model_id": s["model_source_id"],
            "source_model_name": s["model_name"],
        },
        "decisions": _decisions(con, s),
        "current": _current(con, s),
        "canonical": _canonical(con, s),
        "release_dates": rows(con, "audit_release_dates.sql", base_model_ids=[s["base_model_id"]])
        if s["base_model_id"]
        else [],
    }


def _score_part(s: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "score_id", "fingerprint", "config_id", "benchmark_id", "benchmark_raw", "subset", "metric_id",
        "metric_raw", "metric_params_key", "setup_key", "raw_value", "raw_unit", "value", "unit",
        "lower_is_better", "stderr", "ci_lower", "ci_upper", "ci_level", "n_samples", "score_locator",
        "source_row_key", "observed_at", "loaded_at",
    )  # fmt: skip
    return {k: s[k] for k in keys} | {
        "setup": as_json(s["setup"]),
        "metric_params": as_json(s["metric_params"]),
        "uncertainty": as_json(s["uncertainty"]),
    }


def _canonicalisation(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "raw": {"value": s["raw_value"], "unit": s["raw_unit"], "benchmark": s["benchmark_raw"],
                "metric": s["metric_raw"]},
        "canonical": {"value": s["value"], "unit": s["unit"], "benchmark": s["benchmark_id"],
                      "subset": s["subset"], "metric": s["metric_id"], "lower_is_better": s["lower_is_better"]},
        "steps": as_json(s["canonical_steps"]) or [],
    }  # fmt: skip


def _evaluation_part(s: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "evaluation_id", "source_evaluation_id", "evaluation_fingerprint", "record_locator", "datastore_path",
        "collection", "raw_sha256", "samples_sha256", "retrieved_timestamp", "evaluation_timestamp",
        "eval_library", "eval_library_version", "migrated_from",
    )  # fmt: skip
    return {k: s[k] for k in keys}


def _raw_part(s: dict[str, Any], fetches: list[dict[str, Any]], store: RawStore | None) -> dict[str, Any]:
    part: dict[str, Any] = {
        "sha256": s["raw_sha256"],
        "score_locator": s["score_locator"],
        "record_locator": s["record_locator"],
        "locators": LOCATORS,
        "fetches": fetches,
        "url": None,
        "fetched_from": None,
        "retrieved_at": None,
        "storage_path": None,
    }
    if fetches:
        first = fetches[0]
        params = as_json(first.get("request_params")) or {}
        part |= {
            "url": first["url"],
            "fetched_from": params.get("mirror") if isinstance(params, dict) else None,
            "retrieved_at": first["retrieved_at"],
            "storage_path": first["storage_path"],
        }
    if store is not None and s["raw_sha256"]:
        part["bytes"] = payload_status(store, s["raw_sha256"])
    return part


def _decisions(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> list[dict[str, Any]]:
    found = rows(
        con,
        "audit_decisions.sql",
        fingerprint=s["evaluation_fingerprint"],
        cell_id=s["cell_id"],
        score_id=str(s["score_id"]),
        benchmark_id=s["benchmark_id"],
        metric_id=s["metric_id"],
    )
    return [r | {"subject": as_json(r["subject"]), "detail": as_json(r["detail"])} for r in found]


def _current(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> dict[str, Any]:
    """Is this score its source row's current value, or superseded (by which score)?"""
    current = [
        r[0]
        for r in con.execute(
            "SELECT score_id FROM v_score_current WHERE source_row_key = ? ORDER BY score_id", [s["source_row_key"]]
        ).fetchall()
    ]
    return {
        "is_current": s["score_id"] in current,
        "current_score_ids": current,
        "rule": "v_score_current: the row of the latest fetch per source row (score.source_row_key)",
    }


def _canonical(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical value of the score's cell, every candidate it was chosen from, and the rule."""
    found = rows(con, "audit_canonical.sql", cell_id=s["cell_id"])
    if not found:
        return None
    cell = found[0]
    candidates = rows(con, "audit_candidates.sql", cell_id=s["cell_id"])
    chosen = set(cell["score_ids"] or [])
    for c in candidates:
        c["used"] = c["score_id"] in chosen
        c["setup"] = as_json(c["setup"])
    return cell | {
        "used": s["score_id"] in chosen,
        "candidates": candidates,
        "rule": POLICY_RULES.get(cell["policy"], cell["policy"]),
        "order": CANONICAL_ORDER,
    }


#: The total order a cell's candidates are put in (v_scores_canonical); the first is used.
CANONICAL_ORDER = (
    "policy (the rows it allows first), then source tier (best first), then who ran it (a third party "
    "that ran it itself, the benchmark's creators, the community, an unnamed runner, the model's "
    "developer), then observation date (latest first), then the lowest score id (a tiebreak)"
)

POLICY_RULES = {
    "prefer-independent": "prefer-independent: rows not reported by the model's developer first (the developer's "
    "own number only when no other exists); then source tier, who ran it, observation date, lowest score id; "
    "never an average",
    "prefer-first-party": "prefer-first-party: the developer's own rows first; then source tier, who ran it, "
    "observation date, lowest score id",
    "prefer-tier": "prefer-tier: rows of the best source tier only; then who ran it, observation date, lowest score id",
    "latest": "latest: the most recently observed row; then source tier, who ran it, lowest score id",
    "mean": "mean: the average of every candidate (chosen by a person with 'evalhouse curate policy mean')",
}
