"""What the ledger's runs left behind, read back: the runs, the payloads a run stored or loaded,
the last fetches of a source, a run's figures, and the names the rows carry.

The pipeline sequences fetching, judging and loading; what it needs to know of earlier runs it
asks here, so every query of the ledger's tables lives in the warehouse layer (``sql/history_*.sql``).
"""

from __future__ import annotations

from typing import Any

import duckdb

from evalhouse.common.resources import read_sql


def _rows(con: duckdb.DuckDBPyConnection, name: str, *params: Any) -> list[tuple]:
    return con.execute(read_sql("evalhouse.warehouse", name), list(params)).fetchall()


def runs(con: duckdb.DuckDBPyConnection) -> list[tuple]:
    """Every run, oldest first: ``(run_id, source_key, trigger, status, started_at, finished_at,
    n_loaded, n_quarantined, error, guard)``."""
    return _rows(con, "history_runs.sql")


def run_payloads(con: duckdb.DuckDBPyConnection, run_id: str) -> list[tuple]:
    """The payloads one run stored, in the order it fetched them: ``(sha256, url, retrieved_at,
    content_type, label)``."""
    return _rows(con, "history_run_payloads.sql", run_id)


def loaded_payloads(con: duckdb.DuckDBPyConnection, key: str) -> list[tuple]:
    """Every distinct payload of a source that a loading run read, oldest first, as
    :func:`run_payloads` gives them."""
    return _rows(con, "history_loaded_payloads.sql", key)


def last_fetches(con: duckdb.DuckDBPyConnection, key: str) -> list[tuple]:
    """``(url, sha256, etag, last_modified)`` of a source's successful fetches, oldest first."""
    return _rows(con, "history_last_fetches.sql", key)


def run_figures(con: duckdb.DuckDBPyConnection, run_id: str) -> tuple[int, str | None]:
    """``(n_read, details)`` of one run."""
    n_read, details = _rows(con, "history_run_figures.sql", run_id)[0]
    return n_read, details


def named_model_ids(con: duckdb.DuckDBPyConnection, key: str) -> list[str]:
    """The model identifiers every source but ``key`` names, sorted."""
    return [row[0] for row in _rows(con, "history_named_models.sql", key)]


def benchmark_ids(con: duckdb.DuckDBPyConnection, key: str) -> dict[str, str]:
    """``{benchmark name as the source wrote it: the canonical benchmark it was mapped to}``."""
    return dict(_rows(con, "history_benchmark_ids.sql", key))
