"""Every "pick one row per group" in the views uses a total order, so the row chosen (and with it a
snapshot's bytes and id) never depends on DuckDB's thread schedule when the ranking ties — e.g.
two release-date claims recorded in one transaction, or two statements of one attribute loaded
together."""

from __future__ import annotations

import re

import duckdb
import pytest

from evalhouse.warehouse.db import views

#: Columns that identify a row (or, with the window's PARTITION BY, a group's rows) uniquely.
#: ``recency`` is itself a row number over a total order (v_scores_canonical).
UNIQUE_TAILS = ("evidence_id", "evaluation_id", "run_id", "score_id", "metric_id", "setup_key", "recency")
WINDOW = re.compile(r"row_number\(\)\s+OVER\s*\((?P<body>(?:[^()]|\([^()]*\))*)\)", re.I | re.S)


@pytest.mark.parametrize("name,sql", views())
def test_each_row_number_window_ends_in_a_unique_column(name: str, sql: str) -> None:
    for window in WINDOW.finditer(sql):
        order = re.split(r"ORDER\s+BY", window["body"], flags=re.I)[-1]
        last = re.sub(r"--[^\n]*", "", order).strip().rstrip(")").split(",")[-1].split()[0]
        assert last.split(".")[-1] in UNIQUE_TAILS, f"{name}: the window ends its ORDER BY with {last!r}"


def test_tied_attribute_statements_choose_the_same_row_whatever_the_insert_order() -> None:
    """The v_model_meta rule on a bare table: loaded in one transaction, the tie is broken by
    source and record id, never by which row DuckDB meets first."""
    sql = next(s for n, s in views() if n == "v_model_meta")
    rule = re.search(r"QUALIFY row_number\(\) OVER \((.*?)\) = 1", sql, re.S)[1]
    con = duckdb.connect()
    con.execute(
        "CREATE TABLE t (config_id TEXT, key TEXT, source_key TEXT, evaluation_id TEXT, loaded_at TIMESTAMP, v INT)"
    )
    rows = [
        ("c", "k", src, ev, "2026-01-01 00:00:00", i)
        for i, (src, ev) in enumerate([("b", "e2"), ("a", "e9"), ("a", "e1")])
    ]
    chosen = set()
    for order in (rows, rows[::-1], rows[1:] + rows[:1]):
        con.execute("DELETE FROM t")
        con.executemany("INSERT INTO t VALUES (?, ?, ?, ?, ?, ?)", order)
        body = rule.replace("a.", "t.").replace("e.", "t.")
        chosen.add(con.execute(f"SELECT v FROM t QUALIFY row_number() OVER ({body}) = 1").fetchone()[0])
    assert chosen == {2}  # source a, record e1
