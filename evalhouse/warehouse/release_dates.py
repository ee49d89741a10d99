"""Release-date provenance: every claim is an evidence row; the choice is a view; fixes are rows.

``v_release_date`` picks one date per base model by evidence precedence
(``registries/evidence_kinds.yaml``), ``v_config_release_date`` one per configuration (its own
evidence first). A correction never overwrites: it adds a ``manual_correction`` row with its
reason, which outranks every other kind, so the old claims and the reason for overriding them
stay side by side. A correction of a name that means one configuration is that configuration's
(a dated snapshot such as gpt-4o-2024-08-06 has its own date); a verified correction resolves the
conflict it sits with.
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


def find_configurations(con: duckdb.DuckDBPyConnection, name: str) -> list[str]:
    """Configurations NAME names itself: a configuration id or name, or a source's id or name of one."""
    rows = con.execute(
        "SELECT DISTINCT config_id FROM ("
        " SELECT config_id FROM model_config WHERE config_id = $1 OR name = $1"
        " UNION ALL SELECT config_id FROM model_alias WHERE source_model_id = $1 OR model_name = $1)",
        [name],
    ).fetchall()
    found = sorted(r[0] for r in rows)
    if found:
        return found
    key = resolve(name, load_registry()).configuration
    return [r[0] for r in con.execute("SELECT config_id FROM model_config WHERE config_id = ?", [key]).fetchall()]


_EVIDENCE = (
    "SELECT e.evidence_id, e.date, e.precision, e.kind, k.rank, e.lower_bound, e.verification,"
    " e.source_key, e.url, e.raw_sha256, e.config_id, e.reason, e.recorded_by, e.recorded_at"
    " FROM release_date_evidence e LEFT JOIN release_date_kind k USING (kind)"
)


def _records(cur: duckdb.DuckDBPyConnection) -> list[dict[str, Any]]:
    cols = [d[0] for d in cur.description]
    return [dict(zip(cols, row, strict=True)) for row in cur.fetchall()]


def evidence(con: duckdb.DuckDBPyConnection, base_model_id: str) -> list[dict[str, Any]]:
    """Every claim about the base model and its configurations, best-ranked kind first."""
    return _records(
        con.execute(
            _EVIDENCE + " WHERE e.base_model_id = ? ORDER BY coalesce(k.rank, 99), e.date, e.recorded_at DESC",
            [base_model_id],
        )
    )


def config_evidence(con: duckdb.DuckDBPyConnection, config_id: str) -> list[dict[str, Any]]:
    """The claims about one configuration, best-ranked kind first."""
    return _records(
        con.execute(
            _EVIDENCE + " WHERE e.config_id = ? ORDER BY coalesce(k.rank, 99), e.date, e.recorded_at DESC",
            [config_id],
        )
    )


def config_chosen(con: duckdb.DuckDBPyConnection, config_id: str) -> dict[str, Any] | None:
    rows = _records(con.execute("SELECT * FROM v_config_release_date WHERE config_id = ?", [config_id]))
    return rows[0] if rows else None


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


def correct(
    con: duckdb.DuckDBPyConnection, base_model_id: str, fix: Correction, *, config_id: str | None = None
) -> str:
    """Add a manual correction (never an overwrite) of the base model, or of one of its
    configurations; returns its evidence id."""
    if not fix.reason.strip():
        raise InputError("a correction needs a reason")
    if fix.day > datetime.now(UTC).date() or fix.day < EARLIEST:
        raise InputError(f"release date {fix.day} is outside [{EARLIEST}, today]")
    known = con.execute("SELECT count(*) FROM base_model WHERE base_model_id = ?", [base_model_id]).fetchall()[0][0]
    if not known:
        raise NotFound(f"unknown base model {base_model_id!r}")
    if (
        config_id is not None
        and not con.execute(
            "SELECT count(*) FROM model_config WHERE config_id = ? AND base_model_id = ?", [config_id, base_model_id]
        ).fetchall()[0][0]
    ):
        raise NotFound(f"{config_id!r} is not a configuration of {base_model_id!r}")
    stamp = datetime.now(UTC)
    subject = f"{base_model_id}|{config_id or ''}"
    evidence_id = hashlib.sha256(f"{subject}|{fix.day}|manual|{stamp.isoformat()}".encode()).hexdigest()[:20]
    insert_rows(
        con,
        "release_date_evidence",
        [
            {
                "evidence_id": evidence_id,
                "config_id": config_id,
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
    """For each base model ``model`` may mean: first the configurations ``model`` names itself,
    each with its own chosen date and evidence, then the base model's chosen date and evidence.

    Raises :class:`NotFound` when no base model matches.
    """
    found = find_base_models(con, model)
    if not found:
        raise NotFound(f"no base model matches {model!r}; try 'evalhouse audit model {model}' or a base model id")
    named = set(find_configurations(con, model))
    report = []
    for base in found:
        configs = [
            r[0]
            for r in con.execute(
                "SELECT config_id FROM model_config WHERE base_model_id = ? ORDER BY config_id", [base]
            ).fetchall()
            if r[0] in named
        ]
        report.append(
            {
                "configurations": [
                    {"config_id": c, "chosen": config_chosen(con, c), "evidence": config_evidence(con, c)}
                    for c in configs
                ],
                "base_model": base,
                "chosen": chosen(con, base),
                "evidence": evidence(con, base),
            }
        )
    return report


def correct_model(con: duckdb.DuckDBPyConnection, model: str, fix: Correction) -> str:
    """A correction for what ``model`` names: its one configuration when it names one (and is not
    the base model's own id), else its one base model. Ambiguous or unknown names are input errors."""
    found = find_base_models(con, model)
    if not found:
        raise NotFound(f"no base model matches {model!r}")
    if len(found) > 1:
        raise InputError(f"{model!r} matches several base models ({', '.join(found)}); name one")
    configs = [] if model == found[0] else find_configurations(con, model)
    if len(configs) > 1:
        raise InputError(
            f"{model!r} names several configurations ({', '.join(configs)}); name one, or the base model {found[0]!r}"
        )
    return correct(con, found[0], fix, config_id=configs[0] if configs else None)
