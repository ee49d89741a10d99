"""Record the curation decisions the canonical views make, so each one can be audited later.

The views (``v_scores_canonical``, ``v_benchmark_metric``) decide on every query; this module
writes a ``curation_decision`` row whenever a decision is new or changed — which rows a conflict
policy used for a cell, which metric represents a benchmark — so "why is this the value?" has an
answer with a date, a rule and a run id.
"""

from __future__ import annotations

import json

import duckdb

from evalhouse.common.choices import require_choice
from evalhouse.common.resources import read_sql
from evalhouse.errors import WarehouseError
from evalhouse.warehouse.db import first_row

POLICIES = ("prefer-independent", "prefer-first-party", "prefer-tier", "mean", "latest")


RUN_DECISIONS = (("supersession", "record_supersessions.sql"),)
VIEW_DECISIONS = (
    ("conflict_resolution", "record_conflicts.sql"),
    ("canonical_metric", "record_metric_choices.sql"),
)
#: A query that says whether a decision script can find anything (when not, it is not run).
ONLY_IF = {"record_supersessions.sql": "supersession_possible.sql"}
#: What a decision script reads that is built first (temporary relations, dropped after it ran).
PREPARED = {
    "record_conflicts.sql": (
        "conflicted_candidates.sql",
        ("VIEW _conflicted_candidates", "VIEW _conflicted_current", "TABLE _conflicted_scores"),
    )
}


def record_decisions(con: duckdb.DuckDBPyConnection, run_id: str | None, *, views: bool = True) -> dict[str, int]:
    """Insert the run's supersessions and, with ``views``, every new or changed conflict resolution
    and canonical-metric choice of the whole warehouse; returns how many of each.

    The view decisions read ``v_scores_canonical`` over the whole warehouse, so a refresh of several
    sources and an import of many collections record them once, after their last run, instead of
    once per run. The supersessions are looked for only when another run holds scores of the
    run's sources (:data:`ONLY_IF`)."""
    counts = {}
    for kind, script in RUN_DECISIONS + (VIEW_DECISIONS if views else ()):
        if script in ONLY_IF and not first_row(con, read_sql("evalhouse.warehouse", ONLY_IF[script]), [run_id])[0]:
            counts[kind] = 0
            continue
        before = first_row(con, "SELECT count(*) FROM curation_decision WHERE kind = ?", [kind])[0]
        prepared = PREPARED.get(script)
        if prepared is not None:
            con.execute(read_sql("evalhouse.warehouse", prepared[0]))
        try:
            con.execute(read_sql("evalhouse.warehouse", script), [run_id])
        finally:
            for relation in prepared[1] if prepared is not None else ():
                con.execute(f"DROP {relation.split()[0]} IF EXISTS {relation.split()[1]}")
        after = first_row(con, "SELECT count(*) FROM curation_decision WHERE kind = ?", [kind])[0]
        counts[kind] = after - before
    return counts


def current_policy(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The conflict policy in force: ``{"policy", "updated_at", "reason"}``."""
    row = first_row(con, read_sql("evalhouse.warehouse", "current_policy.sql"))
    if row is None:
        raise WarehouseError("the warehouse has no conflict_policy setting; run 'evalhouse migrate'")
    return {"policy": row[0], "updated_at": str(row[1]), "reason": row[2]}


def set_policy(con: duckdb.DuckDBPyConnection, policy: str, reason: str) -> None:
    """Choose the conflict policy the canonical view applies (recorded as a decision)."""
    require_choice(policy, POLICIES, "conflict policy")
    con.execute(
        "UPDATE curation_setting SET value = ?, updated_at = now(), reason = ? WHERE key = 'conflict_policy'",
        [policy, reason],
    )
    con.execute(
        "INSERT INTO curation_decision (kind, rule, subject, detail) VALUES ('policy_change', ?, ?, ?)",
        [
            f"conflict policy set to {policy}",
            json.dumps({"setting": "conflict_policy"}),
            json.dumps({"reason": reason}),
        ],
    )
