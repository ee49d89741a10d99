"""Writing a whole ``score`` row (the view's columns) into the tables it is stored in, for tests
that plant a score by hand: a copy of a real one with a field changed, a duplicate, a ghost.

``score`` is a view of ``score_value`` (per score), ``evaluation`` (what a record's scores share),
``score_group`` (benchmark, metric, units, steps) and ``score_setup`` (parameters, setup,
generation config); see migration 0080. A row whose record-level fields differ from its
evaluation's gets an evaluation of its own (a copy under a new id and fingerprint), so the
planted score reads back through the view with the values asked for.
"""

from __future__ import annotations

import json
import uuid
from typing import Any

GROUP = ("benchmark_raw", "benchmark_id", "subset", "metric_raw", "metric_id", "raw_unit", "unit", "lower_is_better")
SETUP = ("metric_params", "metric_params_key", "setup_key", "setup", "generation_config")
RECORD = ("run_id", "config_id", "evaluated_by", "original_source", "original_source_url", "observed_at")
VALUE = (
    "score_id", "fingerprint", "evaluation_id", "source_key", "result_index", "evaluation_result_id", "raw_value",
    "value", "stderr", "ci_lower", "ci_upper", "ci_level", "n_samples", "uncertainty", "llm_scoring",
    "source_row_key",
)  # fmt: skip


def score_id_of(fingerprint: str) -> int:
    return int(fingerprint[:16], 16) & ((1 << 62) - 1)


def first_score(con: Any, where: str = "true", params: list[Any] | None = None) -> dict[str, Any]:
    cursor = con.execute(f"SELECT * FROM score WHERE {where} ORDER BY score_id LIMIT 1", params or [])
    return dict(zip([d[0] for d in cursor.description], cursor.fetchall()[0], strict=True))


def _evaluation_for(con: Any, row: dict[str, Any]) -> str:
    """The evaluation the row's scores belong to: its own when the record-level fields match."""
    cursor = con.execute("SELECT * FROM evaluation WHERE evaluation_id = ?", [row["evaluation_id"]])
    found = cursor.fetchall()
    if not found:
        return row["evaluation_id"]  # a ghost: planted without its evaluation on purpose
    evaluation = dict(zip([d[0] for d in cursor.description], found[0], strict=True))
    if all(evaluation.get(k) == row[k] for k in RECORD if k in row):
        return row["evaluation_id"]
    copy = {**evaluation, **{k: row[k] for k in RECORD if k in row}}
    copy["evaluation_id"] = f"{evaluation['evaluation_id']}#planted-{uuid.uuid4().hex[:8]}"
    copy["fingerprint"] = uuid.uuid4().hex * 2
    columns = list(copy)
    con.execute(
        f"INSERT INTO evaluation ({', '.join(columns)}) VALUES ({', '.join('?' for _ in columns)})",
        [copy[c] for c in columns],
    )
    return copy["evaluation_id"]


def insert_score(con: Any, row: dict[str, Any]) -> None:
    """Write ``row`` (a ``score`` view row; ``score_id`` may be left out: it follows the fingerprint)."""
    row = dict(row)
    row.setdefault("score_id", score_id_of(row["fingerprint"]))
    row["evaluation_id"] = _evaluation_for(con, row)
    steps = json.loads(row["canonical_steps"] or "[]")
    migration = con.execute(
        "SELECT coalesce(migration_steps, []) FROM evaluation WHERE evaluation_id = ?", [row["evaluation_id"]]
    ).fetchall()
    group_steps = steps[len(migration[0][0]) if migration else 0 : -1]
    con.execute(
        f"INSERT OR IGNORE INTO score_group SELECT score_group_id({', '.join('?' for _ in range(9))}),"
        f" {', '.join('?' for _ in range(9))}",
        [*(row[k] for k in GROUP), group_steps] * 2,
    )
    con.execute(
        "INSERT OR IGNORE INTO score_setup SELECT score_setup_id(?, ?, ?, ?, ?), ?, ?, ?, ?, ?",
        [*(row[k] for k in SETUP)] * 2,
    )
    con.execute(
        f"INSERT INTO score_value ({', '.join(VALUE)}, group_id, setup_id)"
        f" SELECT {', '.join('?' for _ in VALUE)}, score_group_id({', '.join('?' for _ in range(9))}),"
        " score_setup_id(?, ?, ?, ?, ?)",
        [*(row[k] for k in VALUE), *(row[k] for k in GROUP), group_steps, *(row[k] for k in SETUP)],
    )
