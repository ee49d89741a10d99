"""Provenance audit: where a number came from, and whether its bytes are still the same bytes.

"Every score can be traced to its raw bytes" is a promise the warehouse makes; these functions
keep it checkable. They are pure reads over a connection (plus, where bytes matter, the raw
store) and return plain JSON-ready dicts, so the CLI renders them and scripts consume them as is:

* :func:`score_chain` — score → evaluation record → raw fetches (url, retrieved_at, sha256,
  storage path, locators) → source, the canonicalisation steps, who ran / reported / originally
  published it, the curation decisions touching it, whether it is current and canonical, and the
  release-date evidence of its base model;
* :func:`model_report` — a model named any way a user would name it, with its scores' chains
  summarised;
* :func:`verify_raw` — re-hash the raw store and check every payload the warehouse refers to is
  present and unchanged.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.curation.model_names import resolve
from evalhouse.errors import NotFound
from evalhouse.warehouse.raw_store import RawStore

PARAM_RE = re.compile(r"\$([a-z_][a-z0-9_]*)")


class AuditError(NotFound):
    """The thing to audit is not in the warehouse (with what was tried)."""


# -- queries ---------------------------------------------------------------------------------


@cache
def _sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def _rows(con: duckdb.DuckDBPyConnection, query_file: str, /, **params: Any) -> list[dict[str, Any]]:
    """Rows of ``expectations/<query_file>`` as dicts, passing only the parameters it names."""
    sql = _sql(query_file)
    wanted = set(PARAM_RE.findall(sql))
    cursor = con.execute(sql, {k: v for k, v in params.items() if k in wanted})
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


def _json(text: str | None) -> Any:
    return None if text is None else json.loads(text)


# -- one score -------------------------------------------------------------------------------


def score_chain(con: duckdb.DuckDBPyConnection, score_id: int, store: RawStore | None = None) -> dict[str, Any]:
    """The full provenance of one score; ``store`` adds whether its bytes are still intact."""
    found = _rows(con, "audit_score.sql", score_id=score_id)
    if not found:
        raise AuditError(f"no score with id {score_id}")
    s = found[0]
    fetches = _rows(con, "audit_fetches.sql", sha256=s["raw_sha256"]) if s["raw_sha256"] else []
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
            "family_id": s["family_id"],
            "developer_id": s["developer_id"],
            "source_model_id": s["model_source_id"],
            "source_model_name": s["model_name"],
        },
        "decisions": _decisions(con, s),
        "current": _current(con, s),
        "canonical": _canonical(con, s),
        "release_dates": release_dates(con, [s["base_model_id"]]) if s["base_model_id"] else [],
    }


def _score_part(s: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "score_id", "fingerprint", "config_id", "benchmark_id", "benchmark_raw", "metric_id",
        "metric_raw", "setup_key", "raw_value", "raw_unit", "value", "unit", "lower_is_better",
        "stderr", "ci_lower", "ci_upper", "ci_level", "n_samples", "score_locator", "source_row_key",
        "loaded_at",
    )  # fmt: skip
    return {k: s[k] for k in keys} | {"setup": _json(s["setup"])}


def _canonicalisation(s: dict[str, Any]) -> dict[str, Any]:
    return {
        "raw": {"value": s["raw_value"], "unit": s["raw_unit"], "benchmark": s["benchmark_raw"],
                "metric": s["metric_raw"]},
        "canonical": {"value": s["value"], "unit": s["unit"], "benchmark": s["benchmark_id"],
                      "metric": s["metric_id"], "lower_is_better": s["lower_is_better"]},
        "steps": _json(s["canonical_steps"]) or [],
    }  # fmt: skip


def _evaluation_part(s: dict[str, Any]) -> dict[str, Any]:
    keys = (
        "evaluation_id", "evaluation_fingerprint", "record_locator", "datastore_path", "collection",
        "raw_sha256", "samples_sha256", "retrieved_timestamp", "evaluation_timestamp", "eval_library",
        "eval_library_version",
    )  # fmt: skip
    return {k: s[k] for k in keys}


def _raw_part(s: dict[str, Any], fetches: list[dict[str, Any]], store: RawStore | None) -> dict[str, Any]:
    part: dict[str, Any] = {
        "sha256": s["raw_sha256"],
        "score_locator": s["score_locator"],
        "record_locator": s["record_locator"],
        "fetches": fetches,
    }
    if fetches:
        first = fetches[0]
        part |= {
            "url": first["url"],
            "retrieved_at": first["retrieved_at"],
            "storage_path": first["storage_path"],
        }
    else:
        part |= {"url": None, "retrieved_at": None, "storage_path": None}
    if store is not None and s["raw_sha256"]:
        part["bytes"] = payload_status(store, s["raw_sha256"])
    return part


def payload_status(store: RawStore, sha256: str) -> dict[str, Any]:
    """Whether the bytes of ``sha256`` are in ``store`` and still hash to it (re-hashed here)."""
    path = store.find(sha256)
    if path is None:
        return {"status": "missing", "path": None}
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    status = "ok" if actual == sha256 else f"corrupt: sha256 is now {actual}"
    return {"status": status, "path": str(path)}


def _decisions(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> list[dict[str, Any]]:
    rows = _rows(
        con,
        "audit_decisions.sql",
        fingerprint=s["evaluation_fingerprint"],
        config_id=s["config_id"],
        benchmark_id=s["benchmark_id"],
        metric_id=s["metric_id"],
        setup_key=s["setup_key"],
    )
    return [r | {"subject": _json(r["subject"]), "detail": _json(r["detail"])} for r in rows]


def _current(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> dict[str, Any]:
    """Is this score its source row's current value, or superseded (by which score)?"""
    rows = con.execute(
        "SELECT score_id FROM v_score_current WHERE source_row_key = ?", [s["source_row_key"]]
    ).fetchall()
    current_id = rows[0][0] if rows else None
    return {
        "is_current": current_id == s["score_id"],
        "current_score_id": current_id,
        "rule": "v_score_current: the newest run's row per source row (source_row_key)",
    }


def _canonical(con: duckdb.DuckDBPyConnection, s: dict[str, Any]) -> dict[str, Any] | None:
    """The canonical value of the score's cell and whether this score is one of its inputs."""
    rows = _rows(
        con,
        "audit_canonical.sql",
        config_id=s["config_id"],
        benchmark_id=s["benchmark_id"],
        metric_id=s["metric_id"],
        setup_key=s["setup_key"],
    )
    if not rows:
        return None
    cell = rows[0]
    return cell | {"used": s["score_id"] in (cell["score_ids"] or [])}


def release_dates(con: duckdb.DuckDBPyConnection, base_model_ids: list[str]) -> list[dict[str, Any]]:
    return _rows(con, "audit_release_dates.sql", base_model_ids=list(base_model_ids))


# -- one model -------------------------------------------------------------------------------


@dataclass
class ModelMatch:
    query: str
    matched_by: str
    config_ids: list[str] = field(default_factory=list)


def resolve_model_name(con: duckdb.DuckDBPyConnection, name: str) -> ModelMatch:
    """Configurations ``name`` refers to: a config id, a source model id, a model name or a base
    model id (best kind of match first); failing all, the base model the name-collapse rules give.
    """
    hits = _rows(con, "audit_resolve_model.sql", name=name)
    if hits:
        best = hits[0]["rank"]
        chosen = [h for h in hits if h["rank"] == best]
        return ModelMatch(name, chosen[0]["matched_by"], list(dict.fromkeys(h["config_id"] for h in chosen)))
    base = resolve(name).base_model
    configs = [
        r[0]
        for r in con.execute(
            "SELECT config_id FROM model_config WHERE base_model_id = ? ORDER BY config_id", [base]
        ).fetchall()
    ]
    if not configs:
        raise AuditError(
            f"no model matches {name!r} as a config id, source model id, model name or base model id "
            f"(the name rules give base model {base!r}, which has no configurations either)"
        )
    return ModelMatch(name, f"name rules (base model {base!r})", configs)


def model_report(con: duckdb.DuckDBPyConnection, name: str, benchmark: str | None = None) -> dict[str, Any]:
    """A model's scores (optionally for one benchmark) with their chains, and its release dates."""
    match = resolve_model_name(con, name)
    configs = _rows_for_configs(con, match.config_ids)
    scores = _rows(con, "audit_model_scores.sql", config_ids=match.config_ids, benchmark=benchmark)
    for row in scores:
        row["canonical_steps"] = _json(row["canonical_steps"]) or []
    bases = sorted({c["base_model_id"] for c in configs if c["base_model_id"]})
    return {
        "query": name,
        "matched_by": match.matched_by,
        "benchmark": benchmark,
        "configs": configs,
        "other_configs_of_base_models": _sibling_configs(con, bases, match.config_ids),
        "scores": scores,
        "release_dates": release_dates(con, bases),
    }


def _sibling_configs(con: duckdb.DuckDBPyConnection, base_model_ids: list[str], config_ids: list[str]) -> list[str]:
    """Configurations of the same base models left out: a base model's default configuration
    often shares its id, so a user typing the base name may have meant all of them."""
    rows = con.execute(
        "SELECT config_id FROM model_config WHERE list_contains(?, base_model_id)"
        " AND NOT list_contains(?, config_id) ORDER BY config_id",
        [base_model_ids, config_ids],
    ).fetchall()
    return [r[0] for r in rows]


def _rows_for_configs(con: duckdb.DuckDBPyConnection, config_ids: list[str]) -> list[dict[str, Any]]:
    cursor = con.execute(
        "SELECT mc.config_id, mc.name, mc.base_model_id, bm.family_id, bm.developer_id,"
        " (SELECT count(*) FROM score s WHERE s.config_id = mc.config_id) AS n_scores"
        " FROM model_config mc LEFT JOIN base_model bm USING (base_model_id)"
        " WHERE list_contains(?, mc.config_id) ORDER BY mc.config_id",
        [config_ids],
    )
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]


# -- the raw store ---------------------------------------------------------------------------


@dataclass
class RawVerification:
    """What ``verify_raw`` found: files whose bytes changed, and referenced payloads with no file."""

    files_checked: int = 0
    payloads_referenced: int = 0
    corrupt: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.corrupt and not self.missing

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "files_checked": self.files_checked,
            "payloads_referenced": self.payloads_referenced,
            "corrupt": self.corrupt,
            "missing": self.missing,
        }


def verify_raw(con: duckdb.DuckDBPyConnection, store: RawStore) -> RawVerification:
    """Re-hash every stored file and check every referenced payload has its bytes present.

    A corrupt file is reported with what refers to it (a corrupt file nothing refers to is still
    reported: the store's promise is that a name is the hash of its bytes).
    """
    referenced = {r["sha256"]: r for r in _rows(con, "audit_payloads.sql")}
    report = RawVerification(
        files_checked=sum(1 for p in store.root.glob("??/*") if not p.name.startswith(".tmp-"))
        if store.root.is_dir()
        else 0,
        payloads_referenced=len(referenced),
    )
    for path, problem in store.verify():
        sha = Path(path).name.split(".")[0]
        ref = referenced.get(sha)
        report.corrupt.append(
            {
                "sha256": sha,
                "path": path,
                "problem": problem,
                "referenced_by": ref["referenced_by"] if ref else [],
                "n_evaluations": ref["n_evaluations"] if ref else 0,
                "url": ref["url"] if ref else None,
            }
        )
    for sha, ref in referenced.items():
        if store.find(sha) is None:
            report.missing.append(
                {
                    "sha256": sha,
                    "problem": "bytes not in the raw store",
                    "referenced_by": ref["referenced_by"],
                    "n_evaluations": ref["n_evaluations"],
                    "url": ref["url"],
                }
            )
    return report
