"""The expectation suites as set-based SQL: the checkpoint that runs inside every load.

The suites, their checks and levels are those of :mod:`evalhouse.warehouse.checks.suites` (one
list, :data:`~evalhouse.warehouse.checks.suites.CHECKS`). great-expectations runs them on pandas
frames, which costs seconds to import and memory proportional to the warehouse; inside a load the
same expectations run here as one aggregate query per frame over the frame's SQL, with
great-expectations' semantics: a column-map expectation ignores missing values (and counts them as
``missing_count``), ``unexpected_percent`` is relative to the non-missing rows, a uniqueness check
flags every row whose value repeats, and up to 20 offending index values are kept as examples.
``evalhouse validate`` still runs the real great-expectations checkpoint; ``tests/warehouse``
holds the two to the same outcomes on the same warehouse.
"""

from __future__ import annotations

import time
import uuid
from datetime import UTC, date, datetime
from typing import Any

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import EPSILON
from evalhouse.warehouse.checks.suites import (
    CHECKS,
    EXAMPLES,
    FRAMES,
    PARAM_RE,
    Check,
    ExpectationOutcome,
    Frame,
    ValidationFailed,
    ValidationSummary,
    frame_sql,
    levels,
    store_results,
)
from evalhouse.warehouse.db import cursor as second_cursor


def _literal(value: Any) -> str:
    if isinstance(value, datetime):
        return f"TIMESTAMP '{value:%Y-%m-%d %H:%M:%S}'"
    if isinstance(value, date):
        return f"DATE '{value:%Y-%m-%d}'"
    if isinstance(value, bool) or not isinstance(value, int | float):
        raise TypeError(f"unsupported bound {value!r}")
    return repr(value)


_UNIQUE = "ExpectColumnValuesToBeUnique"


def _condition(check: Check, today: datetime) -> tuple[str, str]:
    """``(considered, unexpected)``: SQL predicates over the frame's row ``f``."""
    kw = check.kwargs
    if check.gx_type == "ExpectColumnValuesToNotBeNull":
        col = f'f."{kw["column"]}"'
        return "true", f"{col} IS NULL"
    if check.gx_type == "ExpectColumnValuesToBeBetween":
        col = f'f."{kw["column"]}"'
        bounds = []
        for key, op in (("min_value", ">="), ("max_value", "<=")):
            value = kw.get(key)
            if isinstance(value, dict) and value.get("$PARAMETER") == "today":
                value = today
            if value is not None:
                bounds.append(f"{col} {op} {_literal(value)}")
        return f"{col} IS NOT NULL", f"NOT ({' AND '.join(bounds) or 'true'})"
    if check.gx_type == "ExpectColumnPairValuesAToBeGreaterThanB":
        a, b = f'f."{kw["column_A"]}"', f'f."{kw["column_B"]}"'
        op = ">=" if kw.get("or_equal") else ">"
        return f"{a} IS NOT NULL AND {b} IS NOT NULL", f"NOT ({a} {op} {b})"
    if check.gx_type == _UNIQUE:  # the repeats are counted by their own grouped query (_repeats)
        return f'f."{kw["column"]}" IS NOT NULL', "false"
    raise ValueError(f"no SQL form for expectation {check.gx_type}")


def _example(check: Check, frame: Frame) -> str:
    """An offending row as great-expectations lists it: the checked column(s), then the index."""
    columns = [check.kwargs[k] for k in ("column", "column_A", "column_B") if k in check.kwargs]
    fields = [*dict.fromkeys([*columns, frame.index])]
    return "{" + ", ".join(f"'{c}': \"{c}\"" for c in fields) + "}"


def _frame_query(frame: Frame, checks: list[Check], today: datetime, current_scores: str | None = None) -> str:
    """One pass over the frame: per check, rows considered, unexpected rows and examples."""
    flags, aggregates = [], []
    for i, check in enumerate(checks):
        considered, unexpected = _condition(check, today)
        flags.append(f"({considered}) AS c{i}, ({considered}) AND ({unexpected}) AS u{i}")
        aggregates.append(
            f"count(*) FILTER (WHERE c{i}) AS considered_{i}, count(*) FILTER (WHERE u{i}) AS unexpected_{i}, "
            f'list({_example(check, frame)} ORDER BY "{frame.index}") FILTER (WHERE u{i})[1:{EXAMPLES}] '
            f"AS examples_{i}"
        )
    return (
        f"WITH f AS ({frame_sql(frame, current_scores=current_scores)}), "
        f"flagged AS (SELECT f.*, {', '.join(flags)} FROM f) "
        f"SELECT count(*) AS element_count, {', '.join(aggregates)} FROM flagged"
    )


def _repeats_query(frame: Frame, check: Check, *, examples: bool) -> str:
    """Uniqueness as a grouped count: every row whose value repeats is unexpected (as in
    great-expectations). Grouping one column keeps one entry per distinct value, where a window
    over the frame held every row of the warehouse with all its columns; the examples (the first
    offending rows by the frame's index) are fetched only when there are repeats."""
    col = f'"{check.kwargs["column"]}"'
    repeated = (
        f"WITH f AS ({frame_sql(frame)}), repeated AS (SELECT {col} AS v, count(*) AS n FROM f "
        f"WHERE {col} IS NOT NULL GROUP BY {col} HAVING count(*) > 1) "
    )
    if not examples:
        return repeated + "SELECT coalesce(sum(n), 0) FROM repeated"
    return (
        repeated + f'SELECT list({_example(check, frame)} ORDER BY "{frame.index}")[1:{EXAMPLES}] FROM f '
        f"WHERE {col} IN (SELECT v FROM repeated)"
    )


def enforced(con: duckdb.DuckDBPyConnection, frame: Frame, check: Check) -> bool:
    """Whether the warehouse's constraints make the check's column unique (``Frame.unique_by``):
    the table's key is that column, or a key derived from it with a CHECK tying the two; a
    temporary table of the same name (which has no constraints and is what the name reads) or a
    dropped constraint means the rows are counted."""
    column = check.kwargs["column"]
    found = frame.unique_by.get(column)
    if found is None:
        return False
    table, key = found
    shadowed = _first(con, "SELECT count(*) FROM duckdb_tables() WHERE temporary AND table_name = $t", {"t": table})
    if shadowed:
        return False
    rows = con.execute(
        "SELECT constraint_type, constraint_column_names, coalesce(expression, '') FROM duckdb_constraints()"
        " WHERE database_name = current_database() AND schema_name = 'main' AND table_name = ?",
        [table],
    ).fetchall()
    keyed = any(kind in ("PRIMARY KEY", "UNIQUE") and list(cols) == [key] for kind, cols, _ in rows)
    if key == column:
        return keyed
    return keyed and any(kind == "CHECK" and key in expr and column in expr for kind, _, expr in rows)


def _repeats(con: duckdb.DuckDBPyConnection, frame: Frame, check: Check, params: dict[str, Any]) -> tuple[int, list]:
    """How many rows of the frame repeat the check's column, and up to 20 of them (none, without
    counting, where the warehouse's constraints make them unique: :func:`enforced`)."""
    if enforced(con, frame, check):
        return 0, []
    unexpected = int(_first(con, _repeats_query(frame, check, examples=False), params))
    if not unexpected:
        return 0, []
    return unexpected, _first(con, _repeats_query(frame, check, examples=True), params) or []


def _first(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any]) -> Any:
    """The one value of a one-row query, with the parameters the query names."""
    return con.execute(sql, {p: params[p] for p in set(PARAM_RE.findall(sql))}).fetchall()[0][0]


def evaluate_sql(
    con: duckdb.DuckDBPyConnection, run_id: str | None = None, *, today: date | None = None
) -> ValidationSummary:
    """Run every suite as SQL on the warehouse (nothing stored)."""
    t0 = time.perf_counter()
    stamp = datetime.now(UTC)
    summary = ValidationSummary(f"val-{stamp:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}", run_id)
    today_ts = datetime.combine(today or stamp.date(), datetime.min.time())
    level_of = levels(con)
    # the current scores, which two frames count, computed once
    current = "_checkpoint_current_scores"
    con.execute(
        f"CREATE OR REPLACE TEMPORARY TABLE {current} AS {read_sql('evalhouse.warehouse', 'current_scores.sql')}",
        {"run_id": run_id},
    )
    try:
        _evaluate_frames(con, summary, today_ts, level_of, run_id=run_id, current=current)
    finally:
        con.execute(f"DROP TABLE IF EXISTS {current}")
    order = {(c.suite, c.name): i for i, c in enumerate(CHECKS)}
    summary.outcomes.sort(key=lambda o: order[(o.suite, o.name)])
    summary.duration_s = time.perf_counter() - t0
    return summary


def _evaluate_frames(  # noqa: PLR0913 - the summary it fills and what each frame query needs
    con: duckdb.DuckDBPyConnection,
    summary: ValidationSummary,
    today_ts: datetime,
    level_of: dict[str, Any],
    *,
    run_id: str | None,
    current: str,
) -> None:
    for name, frame in FRAMES.items():
        checks = [c for c in CHECKS if c.frame == name]
        sql = _frame_query(frame, checks, today_ts, current)
        available = {"run_id": run_id, "epsilon": EPSILON}
        params = {p: available[p] for p in set(PARAM_RE.findall(sql))}
        cursor = con.execute(sql, params)
        values = cursor.fetchall()[0]  # one aggregate row; fetched to the end so the connection is free
        row = dict(zip([d[0] for d in cursor.description], values, strict=True))
        total = int(row["element_count"])
        summary.frame_rows[name] = total
        for i, check in enumerate(checks):
            if check.gx_type == _UNIQUE:
                unexpected, examples = _repeats(con, frame, check, available)
            else:
                unexpected, examples = int(row[f"unexpected_{i}"]), row[f"examples_{i}"] or []
            summary.outcomes.append(
                _outcome(check, frame, (int(row[f"considered_{i}"]), unexpected, examples), total, level_of)
            )


def _outcome(
    check: Check, frame: Frame, found: tuple[int, int, list[Any]], total: int, level_of: dict[str, Any]
) -> ExpectationOutcome:
    level = level_of.get(f"{check.suite}.{check.name}", check.level)
    considered, unexpected, examples = found
    observed: dict[str, Any] = {
        "level": level,
        "frame": frame.name,
        "index": frame.index,
        "expectation_type": _gx_type_name(check.gx_type),
        "element_count": total,
        "unexpected_count": unexpected,
        "unexpected_percent": (100.0 * unexpected / considered) if considered else 0.0,
        "missing_count": total - considered,
        "examples": [{k: _plain(v) for k, v in e.items()} for e in examples],
        "engine": "sql",
    }
    return ExpectationOutcome(check.suite, check.name, level, unexpected == 0, check.description, observed)


def _gx_type_name(class_name: str) -> str:
    """``ExpectColumnValuesToNotBeNull`` -> ``expect_column_values_to_not_be_null`` (GX's type)."""
    out = []
    for ch in class_name:
        if ch.isupper() and out:
            out.append("_")
        out.append(ch.lower())
    return "".join(out)


def _plain(value: Any) -> Any:
    if isinstance(value, datetime | date):
        return value.isoformat()
    return value


#: Frames whose failing rows are leaves (nothing refers to them) and may be moved to quarantine by
#: the checkpoint inside a load, rather than roll the load back: the frame's table and key column.
QUARANTINABLE = {"release_dates": ("release_date_evidence", "evidence_id")}


def quarantine_failing_rows(con: duckdb.DuckDBPyConnection, run_id: str | None, summary: ValidationSummary) -> int:
    """Move the rows that fail a row-level expectation of a :data:`QUARANTINABLE` frame to
    ``quarantine`` (stage ``expectation``, the expectation named in the reason); how many moved.
    A failure of any other expectation is the collection's or the warehouse's, not a row's."""
    stamp = datetime.now(UTC)
    today = datetime.combine(stamp.date(), datetime.min.time())
    available = {"run_id": run_id, "epsilon": EPSILON}
    moved = 0
    for outcome in summary.failures:
        check = next(c for c in CHECKS if (c.suite, c.name) == (outcome.suite, outcome.name))
        if check.frame not in QUARANTINABLE or check.gx_type == _UNIQUE:
            continue
        frame = FRAMES[check.frame]
        table, key = QUARANTINABLE[check.frame]
        considered, unexpected = _condition(check, today)
        sql = f'WITH f AS ({frame_sql(frame)}) SELECT f."{frame.index}" FROM f WHERE ({considered}) AND ({unexpected})'
        ids = [row[0] for row in con.execute(sql, {p: available[p] for p in set(PARAM_RE.findall(sql))}).fetchall()]
        if not ids:
            continue
        params = {
            "run_id": run_id,
            "ids": ids,
            "reason": f"expectation {outcome.qualified_name} failed: {check.description}",
        }
        con.execute(read_sql("evalhouse.warehouse", f"quarantine_{table}.sql"), params)
        con.execute(f'DELETE FROM {table} WHERE "{key}" IN (SELECT unnest($ids))', {"ids": ids})
        moved += len(ids)
    return moved


def checkpoint_after_load(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """The ``after_load`` hook of ``run_load``: raise :class:`ValidationFailed` to roll back.

    Rows failing a row-level expectation on a leaf table (a release date of 1900) are moved to
    ``quarantine`` and the suites run again (:func:`quarantine_failing_rows`): they do not take the
    load down. On success the results are stored in the load's transaction and commit with it. On
    failure they are written through a second cursor (its own transaction, committed at once), so
    the evidence of why the load was refused survives the rollback that the exception causes.
    """
    summary = evaluate_sql(con, run_id)
    if not summary.success and quarantine_failing_rows(con, run_id, summary):
        summary = evaluate_sql(con, run_id)
    if summary.success:
        store_results(con, summary)
        return
    cursor = second_cursor(con)
    try:
        store_results(cursor, summary)
    finally:
        cursor.close()
    raise ValidationFailed(summary.message(), summary)
