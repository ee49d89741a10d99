"""$EVALHOUSE_MEMORY_LIMIT bounds DuckDB's buffer pool on every warehouse connection, also the
one a writer reopens after fetching with the database closed."""

from __future__ import annotations

from pathlib import Path

import pytest

from evalhouse.config import ENV_MEMORY
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse


def _limit(wh: Warehouse) -> str:
    return wh.con.execute("SELECT current_setting('memory_limit')").fetchone()[0]


def test_the_limit_applies_to_writers_readers_and_reopened_writers(tmp_path: Path, monkeypatch) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        default = _limit(wh)
    monkeypatch.setenv(ENV_MEMORY, "300MB")
    with Warehouse.open(db) as wh:
        assert _limit(wh) == "286.1 MiB" != default
        with wh.released():
            pass
        assert _limit(wh) == "286.1 MiB"  # the connection reopened after a fetch keeps it
    with Warehouse.open(db, read_only=True) as wh:
        assert _limit(wh) == "286.1 MiB"


def test_a_malformed_limit_is_a_clear_error(tmp_path: Path, monkeypatch) -> None:
    monkeypatch.setenv(ENV_MEMORY, "lots")
    with pytest.raises(InputError, match="EVALHOUSE_MEMORY_LIMIT='lots' is not a memory size"):
        Warehouse.open(tmp_path / "w.duckdb")


def test_duckdb_prints_no_progress_bar_into_a_log(tmp_path: Path) -> None:
    """A long query (a 10^6-score import's decisions) would draw DuckDB's bar into stdout."""
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        assert wh.con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
        with wh.released():
            pass
        assert wh.con.execute("SELECT current_setting('enable_progress_bar')").fetchone()[0] is False
