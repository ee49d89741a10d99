"""Release-date provenance: every claim is an evidence row; the choice is a view; fixes are rows.

``v_release_date`` picks one date per base model by evidence precedence
(``registries/evidence_kinds.yaml``). A correction never overwrites: it adds a
``manual_correction`` row with its reason, which outranks every other kind, so the old claims and
the reason for overriding them stay side by side.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import UTC, date, datetime
from typing import Any, Literal

import duckdb

from evalhouse.curation.names import resolve
from evalhouse.curation.registry import load_registry
from evalhouse.errors import InputError, NotFound
from evalhouse.warehouse.insert import insert_rows

Precision = Literal["day", "month", "year"]
EARLIEST = date(2015, 1, 1)


def find_base_models(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    """Base models NAME may mean: a base model id, a configuration, a source id or name."""
    rows = con.execute(
        "SELECT DISTINCT base_model_id FROM ("
        " SELECT base_model_id FROM base_model WHERE base_model_id = $1 OR name = $1"
        " UNION ALL SELECT base_model_id FROM model_config WHERE config_id = $1 OR name = $1"
        " UNION ALL SELECT mc.base_model_id FROM model_alias a JOIN model_config mc USING (config_id)"
        "   WHERE a.source_model_id = $1 OR a.model_name = $1)",
        [name],
    ).fetchall()
    found = sorted(r[0] for r in rows)
    if found:
        return found
    key = resolve(name, load_registry()).base_model
    return [r[0] for r in con.execute("SELECT base_model_id FROM base_model WHERE base_model_id = ?", [key]).fetchall()]


def evidence(con: duckdb.DuckDBPyConnection, base_model_id: str) -> list[dict[str, Any]]:
    cur = con.execute(
        "SELECT e.evidence_id, e.date, e.precision, e.kind, k.rank, e.lower_bound, e.verification,"
        " e.source_key, e.url, e.raw_sha256, e.config_id, e.reason, e.recorded_by, e.recorded_at"
        " FROM release_date_evidence e LEFT JOIN release_date_kind k USING (kind)"
        " WHERE e.base_model_id = ? ORDER BY coalesce(k.rank, 99), e.date",
        [base_model_id],
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def chosen(con: duckdb.DuckDBPyConnection, base_model_id: str) -> dict[str, Any] | None:
    cur = con.execute("SELECT * FROM v_release_date WHERE base_model_id = ?", [base_model_id])
    cols = [d[0] for d in cur.description]
    rows = cur.fetchall()
    return dict(zip(cols, rows[0], strict=True)) if rows else None


def conflicts(con: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cur = con.execute(
        "SELECT base_model_id, release_date, kind, earliest, latest, n_evidence FROM v_release_date"
        " WHERE conflict ORDER BY base_model_id"
    )
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


@dataclass(frozen=True)
class Correction:
    """A curator's release date for a base model: the date, why, how precise, where to check."""

    day: date
    reason: str
    precision: Precision = "day"
    url: str | None = None
    recorded_by: str = "curator"


def correct(con: duckdb.DuckDBPyConnection, base_model_id: str, fix: Correction) -> str:
    """Add a manual correction (never an overwrite); returns its evidence id."""
    if not fix.reason.strip():
        raise InputError("a correction needs a reason")
    if fix.day > datetime.now(UTC).date() or fix.day < EARLIEST:
        raise InputError(f"release date {fix.day} is outside [{EARLIEST}, today]")
    known = con.execute("SELECT count(*) FROM base_model WHERE base_model_id = ?", [base_model_id]).fetchall()[0][0]
    if not known:
        raise NotFound(f"unknown base model {base_model_id!r}")
    stamp = datetime.now(UTC)
    evidence_id = hashlib.sha256(f"{base_model_id}|{fix.day}|manual|{stamp.isoformat()}".encode()).hexdigest()[:20]
    insert_rows(
        con,
        "release_date_evidence",
        [
            {
                "evidence_id": evidence_id,
                "config_id": None,
                "base_model_id": base_model_id,
                "date": fix.day,
                "precision": fix.precision,
                "kind": "manual_correction",
                "source_key": None,
                "url": fix.url,
                "raw_sha256": None,
                "lower_bound": False,
                "verification": "verified",
                "reason": fix.reason,
                "recorded_by": fix.recorded_by,
                "recorded_at": stamp,
            }
        ],
    )
    return evidence_id


def dates_report(con: duckdb.DuckDBPyConnection, model: str) -> list[dict[str, Any]]:
    """For each base model ``model`` may mean: the chosen date and every evidence row.

    Raises :class:`NotFound` when no base model matches.
    """
    found = find_base_models(con, model)
    if not found:
        raise NotFound(f"no base model matches {model!r}; try 'evalhouse audit model {model}' or a base model id")
    return [{"base_model": b, "chosen": chosen(con, b), "evidence": evidence(con, b)} for b in found]


def correct_model(con: duckdb.DuckDBPyConnection, model: str, fix: Correction) -> str:
    """A correction for the one base model ``model`` names (ambiguous or unknown names are input errors)."""
    found = find_base_models(con, model)
    if not found:
        raise NotFound(f"no base model matches {model!r}")
    if len(found) > 1:
        raise InputError(f"{model!r} matches several base models ({', '.join(found)}); name one")
    return correct(con, found[0], fix)
