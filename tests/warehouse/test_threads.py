"""$EVALHOUSE_THREADS bounds the threads a DuckDB query runs on, on every connection evalhouse
opens: writers (also one reopened after a fetch), readers, and a snapshot's catalog."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.config import ENV_THREADS
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.snapshot.reader import open_snapshot

THREADS = "SELECT current_setting('threads')"


def test_the_bound_applies_to_writers_readers_reopened_writers_and_snapshots(
    tmp_path: Path, real_snapshot: Path, monkeypatch
) -> None:
    db = tmp_path / "w.duckdb"
    monkeypatch.delenv(ENV_THREADS, raising=False)
    with Warehouse.open(db) as wh:
        default = wh.scalar(THREADS)
    assert default == (os.cpu_count() or 1)  # unset: DuckDB's own, a thread per core
    monkeypatch.setenv(ENV_THREADS, "3")
    with Warehouse.open(db) as wh:
        assert wh.scalar(THREADS) == 3
        with wh.released():
            pass
        assert wh.scalar(THREADS) == 3  # the connection reopened after a fetch keeps it
    with Warehouse.open(db, read_only=True) as wh:
        assert wh.scalar(THREADS) == 3
    con = open_snapshot(real_snapshot)
    try:
        assert con.execute(THREADS).fetchone()[0] == 3
    finally:
        con.close()


@pytest.mark.parametrize("value", ["0", "two", "-1", "1.5"])
def test_a_malformed_bound_is_a_clear_error(tmp_path: Path, monkeypatch, value: str) -> None:
    monkeypatch.setenv(ENV_THREADS, value)
    with pytest.raises(InputError, match=f"EVALHOUSE_THREADS='{value}' is not a number of threads"):
        Warehouse.open(tmp_path / "w.duckdb")
    assert not (tmp_path / "w.duckdb").exists()  # refused before anything was written


def test_the_cli_refuses_a_malformed_bound_with_exit_2_and_writes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    result = CliRunner().invoke(app, ["--db", str(db), "migrate"], env={ENV_THREADS: "zero"})
    assert result.exit_code == 2  # bad input
    assert "$EVALHOUSE_THREADS='zero' is not a number of threads" in result.output
    assert not db.exists()


def test_the_suites_workers_run_one_thread_each(tmp_path: Path) -> None:
    """Under pytest-xdist the workers are the parallelism: one DuckDB and one BLAS thread each
    (``tests/conftest.py``), so three workers on two cores do not share them twice over."""
    if not os.environ.get("PYTEST_XDIST_WORKER"):
        pytest.skip("runs in a pytest-xdist worker (make test, make test-fast)")
    import numpy  # noqa: F401 - loads OpenBLAS, which reads its setting once
    from threadpoolctl import threadpool_info

    assert os.environ[ENV_THREADS] == "1"
    blas = [pool for pool in threadpool_info() if pool["user_api"] == "blas"]
    assert blas and all(pool["num_threads"] == 1 for pool in blas)  # set before numpy loaded
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        assert wh.scalar(THREADS) == 1
