"""The memory budget of whole-warehouse steps: DuckDB's limit while the step runs, restored after."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from evalhouse.config import ENV_LOAD_BUDGET, ENV_MEMORY
from evalhouse.errors import InputError
from evalhouse.warehouse.memory_budget import (
    FLOOR_BYTES,
    LOAD_BUDGET_BYTES,
    load_budget,
    loading_within,
    memory_in_use,
    size_in_bytes,
    spilling_beyond,
)


def limit(con: duckdb.DuckDBPyConnection) -> int:
    return size_in_bytes(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])


@pytest.mark.parametrize(
    ("text", "expected"),
    [("18.8 GiB", int(18.8 * 2**30)), ("384.5 MiB", int(384.5 * 2**20)), ("512MB", 512 * 10**6), ("1024 bytes", 1024)],
)
def test_duckdb_memory_settings_read_as_bytes(text: str, expected: int) -> None:
    assert size_in_bytes(text) == expected


def test_a_memory_size_without_a_known_unit_is_refused() -> None:
    with pytest.raises(ValueError, match="not a memory size"):
        size_in_bytes("12 parsecs")


def test_the_limit_is_what_duckdb_holds_plus_the_budget_and_comes_back(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE t AS SELECT range AS i, md5(range::VARCHAR) AS s FROM range(200000)")
    default = limit(con)
    held = memory_in_use(con)
    with spilling_beyond(con, 64 * 2**20) as budget:
        chosen = budget.limit
        assert held <= chosen - 64 * 2**20 <= memory_in_use(con) or chosen == FLOOR_BYTES
        assert abs(limit(con) - chosen) <= 2**20  # DuckDB renders the limit rounded to 0.1 MiB
    assert limit(con) == default  # DuckDB's own default again


def test_a_lower_limit_the_user_chose_is_kept_and_restored(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_MEMORY, "100MB")
    con = duckdb.connect(str(tmp_path / "w.duckdb"), config={"memory_limit": "100MB"})
    with spilling_beyond(con, 2**40):  # a budget beyond the user's limit does not raise it
        assert limit(con) <= 100 * 10**6
    assert limit(con) == size_in_bytes(con.execute("SELECT current_setting('memory_limit')").fetchone()[0])
    assert abs(limit(con) - 100 * 10**6) <= 2**20


def test_the_limit_comes_back_when_the_step_fails(tmp_path: Path) -> None:
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    default = limit(con)
    big = "SELECT len(list(md5(range::VARCHAR))) FROM range(3000000)"
    with pytest.raises(duckdb.OutOfMemoryException), spilling_beyond(con, 0):
        con.execute(big).fetchall()
    assert limit(con) == default
    assert con.execute(big).fetchall() == [(3000000,)]  # the buffer pool has its limit back, not only the setting


def test_a_load_budget_follows_the_indexes_and_the_new_rows_spill(tmp_path: Path) -> None:
    """Within a load's budget the limit is the indexes' memory plus the budget, set again as keys
    are added; a transaction holding more new rows than the budget spills them and commits."""
    con = duckdb.connect(str(tmp_path / "w.duckdb"))
    con.execute("CREATE TABLE t (k TEXT PRIMARY KEY, payload TEXT)")
    default = limit(con)
    budget = 48 * 2**20
    with loading_within(con, budget) as held:
        assert abs(limit(con) - max(memory_in_use(con, tag="ART_INDEX") + budget, FLOOR_BYTES)) <= 2**20
        con.execute("BEGIN")
        limits = []
        for part in range(4):  # ~4 x 60 MB of new rows and keys in one transaction
            con.execute(
                "INSERT INTO t SELECT md5(range::VARCHAR) || ?, repeat(md5(range::VARCHAR), 6) FROM range(300000)",
                [str(part)],
            )
            limits.append(held.keep())
        held.lift()  # a commit out of memory would invalidate the database
        con.execute("COMMIT")
        assert limits == sorted(limits) and limits[-1] > limits[0]  # the index grew; so did the limit
        assert limits[-1] < 4 * 60 * 2**20  # well below what the rows take: they spilled
    assert limit(con) == default
    assert con.execute("SELECT count(*), count(DISTINCT k) FROM t").fetchall() == [(1_200_000, 1_200_000)]


@pytest.mark.parametrize(
    ("value", "expected"),
    [(None, LOAD_BUDGET_BYTES), ("512MB", 512 * 10**6), ("1GiB", 2**30), ("off", None), (" OFF ", None)],
)
def test_the_load_budget_comes_from_the_environment(
    value: str | None, expected: int | None, monkeypatch: pytest.MonkeyPatch
) -> None:
    if value is None:
        monkeypatch.delenv(ENV_LOAD_BUDGET, raising=False)
    else:
        monkeypatch.setenv(ENV_LOAD_BUDGET, value)
    assert load_budget() == expected


def test_a_malformed_load_budget_is_bad_input(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(ENV_LOAD_BUDGET, "plenty")
    with pytest.raises(InputError, match="EVALHOUSE_LOAD_BUDGET='plenty' is not a memory size"):
        load_budget()
