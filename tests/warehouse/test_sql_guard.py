"""``evalhouse sql`` and ``snapshot open --sql``: one guard, read-only, no files outside.

Runs on the real warehouse (Epoch + AA through the real refresh over loopback) and a snapshot of
it. Every refused statement must exit 2 with a message, leave the warehouse's counts and the
file system as they were, and never print a traceback.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.errors import InputError
from evalhouse.warehouse import sql_guard
from evalhouse.warehouse.snapshot.reader import open_snapshot

runner = CliRunner()

# {out}: a folder outside the warehouse and snapshot holding secret.csv/.json/.parquet; {db}: the
# warehouse file. Each line: a statement the guard must refuse.
REFUSED = [
    "DELETE FROM score",
    "INSERT INTO source (source_key) VALUES ('x')",
    "UPDATE score SET value = 0",
    "DROP TABLE score",
    "CREATE TABLE t AS SELECT 1",
    "CREATE TEMP TABLE t AS SELECT 1",
    "CREATE MACRO m(x) AS x + 1",
    "ALTER TABLE score ADD COLUMN x INTEGER",
    "COPY score TO '{out}/copy.csv'",
    "COPY (SELECT * FROM score) TO '{out}/copy.parquet' (FORMAT parquet)",
    "EXPORT DATABASE '{out}/dump'",
    "ATTACH '{out}/other.duckdb' AS other",
    "DETACH DATABASE memory",
    "INSTALL httpfs",
    "LOAD httpfs",
    "SET enable_external_access = true",
    "RESET allowed_directories",
    "PRAGMA enable_profiling",
    "CALL pragma_version()",
    "BEGIN TRANSACTION",
    "CHECKPOINT",
    "VACUUM",
    "SELECT 1; DELETE FROM score",
    "SELECT * FROM read_csv('{out}/secret.csv')",
    "SELECT * FROM read_csv_auto('{out}/secret.csv')",
    "SELECT * FROM '{out}/secret.csv'",
    "SELECT * FROM read_json('{out}/secret.json')",
    "SELECT * FROM read_parquet('{out}/secret.parquet')",
    "SELECT * FROM parquet_metadata('{out}/secret.parquet')",
    "SELECT content FROM read_text('/etc/passwd')",
    "SELECT content FROM read_blob('/etc/hostname')",
    "SELECT * FROM glob('/*')",
    "SELECT * FROM glob('{out}/*')",
    "SELECT * FROM read_csv('http://127.0.0.1:9/x.csv')",
    "SELECT * FROM query('SELECT * FROM read_text(''/etc/passwd'')')",
]


@pytest.fixture(scope="module")
def outside(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("outside")
    (root / "secret.csv").write_text("secret\n42\n")
    (root / "secret.json").write_text('{"secret": 42}\n')
    con = duckdb.connect()
    con.execute(f"COPY (SELECT 42 AS secret) TO '{root}/secret.parquet' (FORMAT parquet)")
    con.close()
    return root


def _counts(db: Path) -> tuple[int, ...]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        return tuple(con.execute(f"SELECT count(*) FROM {t}").fetchone()[0] for t in ("score", "source", "evaluation"))
    finally:
        con.close()


def sql(*args: str):
    return runner.invoke(app, list(args))


def test_at_least_fifteen_statements_are_refused_on_the_live_warehouse(real_warehouse: Path, outside: Path) -> None:
    before = _counts(real_warehouse)
    files_before = sorted(p.name for p in outside.iterdir())
    assert len(REFUSED) >= 15
    for template in REFUSED:
        statement = template.format(out=outside)
        result = sql("--db", str(real_warehouse), "sql", statement)
        assert result.exit_code == 2, (statement, result.output)
        assert "error:" in result.output and "Traceback" not in result.output, (statement, result.output)
        assert "secret" not in result.stdout and "42" not in result.stdout, statement
    assert _counts(real_warehouse) == before
    assert sorted(p.name for p in outside.iterdir()) == files_before  # no COPY/EXPORT/ATTACH file appeared
    with duckdb.connect(str(real_warehouse), read_only=True) as con:
        names = {r[0] for r in con.execute("SELECT table_name FROM duckdb_tables()").fetchall()}
    assert "t" not in names


def test_the_same_guard_refuses_on_a_snapshot(real_snapshot: Path, outside: Path) -> None:
    for template in REFUSED:
        statement = template.format(out=outside)
        for args in (
            ["sql", "--snapshot", str(real_snapshot), statement],
            ["snapshot", "open", str(real_snapshot), "--sql", statement],
        ):
            result = sql(*args)
            assert result.exit_code == 2, (args, result.output)
            assert "Traceback" not in result.output
    assert sorted(p.name for p in outside.iterdir()) == ["secret.csv", "secret.json", "secret.parquet"]


def test_empty_and_comment_only_queries_are_input_errors(real_warehouse: Path) -> None:
    for text in ["", "   ", "-- just a comment", "/* nothing */ ;", ";"]:
        result = sql("--db", str(real_warehouse), "sql", "--", text)
        assert result.exit_code == 2, (text, result.output)
        assert "empty" in result.output or "no statement" in result.output, result.output


def test_queries_see_the_warehouse_and_its_own_files(real_warehouse: Path) -> None:
    con = duckdb.connect(str(real_warehouse), read_only=True)
    expected = dict(con.execute("SELECT source_key, count(*) FROM score GROUP BY ALL").fetchall())
    storage = con.execute("SELECT storage_path, size_bytes FROM raw_snapshot ORDER BY sha256 LIMIT 1").fetchone()
    con.close()
    result = sql(
        "--db", str(real_warehouse), "sql", "--json", "SELECT source_key, count(*) AS n FROM score GROUP BY ALL"
    )
    assert result.exit_code == 0, result.output
    assert {r["source_key"]: r["n"] for r in json.loads(result.stdout)} == expected
    # the raw store beside the warehouse is readable (its bytes are what the scores came from)
    raw = real_warehouse.with_suffix(".raw") / storage[0]
    result = sql("--db", str(real_warehouse), "sql", "--csv", f"SELECT size FROM read_blob('{raw}')")
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["size", str(storage[1])]


def test_snapshot_queries_read_its_parquet_files(real_snapshot: Path) -> None:
    con = open_snapshot(real_snapshot)
    n = con.execute("SELECT count(*) FROM score").fetchone()[0]
    con.close()
    pattern = f"{real_snapshot}/score_value/*/*.parquet"
    result = sql(
        "sql", "--snapshot", str(real_snapshot), "--csv", f"SELECT count(*) AS n FROM read_parquet('{pattern}')"
    )
    assert result.exit_code == 0, result.output
    assert result.stdout.splitlines() == ["n", str(n)]


def test_json_is_strict_and_limit_stops_the_fetch(real_warehouse: Path) -> None:
    result = sql(
        "--db",
        str(real_warehouse),
        "sql",
        "--json",
        "SELECT 'nan'::DOUBLE AS a, 'inf'::DOUBLE AS b, '-inf'::DOUBLE AS c, 1.5 AS d, DATE '2024-05-13' AS e",
    )
    assert result.exit_code == 0, result.output
    rows = json.loads(result.stdout, parse_constant=lambda c: pytest.fail(f"bare {c} in JSON"))
    assert rows == [{"a": None, "b": None, "c": None, "d": 1.5, "e": "2024-05-13"}]
    result = sql("--db", str(real_warehouse), "sql", "--json", "--limit", "7", "SELECT * FROM range(1000000)")
    assert result.exit_code == 0
    assert len(json.loads(result.stdout)) == 7
    assert "stopped at --limit 7" in result.stderr
    assert json.loads(sql("--db", str(real_warehouse), "sql", "--json", "SELECT 1 AS x WHERE false").stdout) == []


def test_rows_are_fetched_in_chunks_up_to_the_limit(real_warehouse: Path) -> None:
    con = duckdb.connect(str(real_warehouse), read_only=True)
    try:
        result = sql_guard.run_guarded(con, "SELECT range AS i FROM range(50000)", limit=None)
        seen = 0
        rows = result.rows()
        next(rows)
        seen += 1
        assert result.fetched == sql_guard.CHUNK_ROWS  # one chunk read so far, not the whole result
        seen += sum(1 for _ in rows)
        assert seen == 50000 and not result.truncated
        limited = sql_guard.run_guarded(con, "SELECT range AS i FROM range(50000)", limit=5000)
        assert [r[0] for r in limited.rows()] == list(range(5000)) and limited.truncated
    finally:
        con.close()


def test_check_is_the_statement_filter(real_warehouse: Path) -> None:
    con = duckdb.connect(":memory:")
    for ok in [
        "SELECT 1",
        "FROM range(3)",
        "WITH x AS (SELECT 1) SELECT * FROM x",
        "VALUES (1)",
        "SHOW TABLES",
        "DESCRIBE SELECT 1",
        "SUMMARIZE SELECT 1 AS a",
    ]:
        assert sql_guard.check(con, ok)
    for bad in ["INSERT INTO x VALUES (1)", "COPY x TO 'y'", "SELECT 1; SELECT 2"]:
        with pytest.raises(sql_guard.QueryRefused):
            sql_guard.check(con, bad)
    with pytest.raises(InputError):
        sql_guard.check(con, "-- nothing")
    con.close()
