"""The warehouse file: migrations, views, transactions and the writer lock, on real DuckDB files."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

import duckdb
import pytest

from evalhouse.warehouse.db import (
    MigrationError,
    Warehouse,
    WarehouseError,
    WarehouseLocked,
    migrations,
    views,
)

TABLES = {
    "source",
    "raw_snapshot",
    "ingest_run",
    "evaluation",
    "score_value",
    "score_group",
    "score_setup",
    "developer",
    "model_family",
    "base_model",
    "model_config",
    "model_alias",
    "benchmark",
    "metric",
    "quarantine",
    "curation_decision",
    "snapshot",
    "analysis_run",
}


def test_fresh_file_gets_every_table_and_records_migrations(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        tables = {
            r[0]
            for r in wh.con.execute(
                "SELECT table_name FROM information_schema.tables WHERE table_type = 'BASE TABLE'"
            ).fetchall()
        }
        assert tables >= TABLES
        rows = wh.con.execute("SELECT version, name, sha256 FROM _migrations ORDER BY version").fetchall()
        assert [(v, n, s) for v, n, s in rows] == [(m.version, m.name, m.sha256) for m in migrations()]
    with Warehouse.open(db) as wh:  # idempotent: nothing new to apply
        assert wh.migrate() == []


def test_every_view_creates_in_an_empty_warehouse(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        names = {r[0] for r in wh.con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
        for name, _ in views():
            assert name in names
            wh.con.execute(f"SELECT * FROM {name} LIMIT 0")


def test_an_edited_applied_migration_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    Warehouse.open(db).close()
    con = duckdb.connect(str(db))
    con.execute("UPDATE _migrations SET sha256 = 'edited' WHERE version = 1")
    con.close()
    with pytest.raises(MigrationError, match="edited after it was applied"):
        Warehouse.open(db)


def test_a_newer_warehouse_is_refused(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    Warehouse.open(db).close()
    con = duckdb.connect(str(db))
    con.execute("INSERT INTO _migrations VALUES (9999, 'future', 'x', now())")
    con.close()
    with pytest.raises(MigrationError, match="does not know"):
        Warehouse.open(db)


def test_an_upgrade_that_fails_part_way_applies_none_of_its_migrations(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pending migrations and the views they need are one transaction: when a later one fails,
    the earlier ones of the same upgrade are not left half applied."""
    from dataclasses import replace

    import evalhouse.warehouse.db as db_module

    shipped = migrations()
    db = tmp_path / "w.duckdb"
    con = duckdb.connect(str(db))  # a warehouse two migrations behind
    con.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL,"
        " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for m in shipped[:-2]:
        m.apply(con)  # SQL, or a Python migration's upgrade
        con.execute("INSERT INTO _migrations (version, name, sha256) VALUES (?, ?, ?)", [m.version, m.name, m.sha256])
    con.close()
    # the last migration fails (a SQL one in place of the shipped, which may be a Python migration)
    broken = replace(shipped[-1], sql="SELECT * FROM no_such_table;", kind="sql")
    monkeypatch.setattr(db_module, "migrations", lambda: [*shipped[:-1], broken])
    with pytest.raises(duckdb.CatalogException, match="no_such_table"):
        Warehouse.open(db)
    con = duckdb.connect(str(db))
    applied = [v for (v,) in con.execute("SELECT version FROM _migrations ORDER BY version").fetchall()]
    con.close()
    assert applied == [m.version for m in shipped[:-2]]
    monkeypatch.undo()
    with Warehouse.open(db) as wh:  # the shipped upgrade then applies whole
        assert wh.schema_version() == shipped[-1].version
        wh.con.execute("SELECT * FROM v_scores_canonical LIMIT 0")


def test_transaction_rolls_back_on_error(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        with pytest.raises(RuntimeError), wh.transaction() as con:
            con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
            raise RuntimeError("crash mid-load")
        assert wh.scalar("SELECT count(*) FROM source") == 0


def test_second_writer_in_the_same_process_is_told_who_holds_the_lock(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with (
        Warehouse.open(db),
        pytest.raises(WarehouseLocked, match=r"warehouse is locked by pid \d+ since \d{4}-"),
    ):
        Warehouse.open(db)
    Warehouse.open(db).close()  # released on close


def test_second_writer_process_gets_a_clear_error_and_changes_nothing(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    script = textwrap.dedent(
        f"""
        from evalhouse.warehouse.db import Warehouse, WarehouseLocked
        try:
            Warehouse.open({str(db)!r})
        except WarehouseLocked as exc:
            print(exc)
            raise SystemExit(3)
        """
    )
    with Warehouse.open(db) as wh:
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
        proc = subprocess.run([sys.executable, "-c", script], check=False, capture_output=True, text=True, timeout=60)
        assert proc.returncode == 3, proc.stderr
        assert "warehouse is locked by pid" in proc.stdout and "since" in proc.stdout
        reader = subprocess.run(
            [
                sys.executable,
                "-c",
                f"from evalhouse.warehouse.db import Warehouse\nWarehouse.open({str(db)!r}, read_only=True)",
            ],
            check=False,
            capture_output=True,
            text=True,
            timeout=60,
        )
        assert reader.returncode != 0 and "warehouse is locked by" in reader.stderr
    with Warehouse.open(db, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM source") == 1


def test_read_only_open_of_a_missing_file_says_what_to_run(tmp_path: Path) -> None:
    with pytest.raises(WarehouseError, match="evalhouse migrate"):
        Warehouse.open(tmp_path / "absent.duckdb", read_only=True)


def test_scores_stored_whole_before_migration_0080_read_back_the_same_through_the_view(
    real_warehouse: Path, tmp_path: Path
) -> None:
    """A warehouse from before 0080 (``score`` a table of 39 columns) migrates to the parts the view
    joins, and every score reads back column for column: the chain split into the record's
    migration steps, the group's steps and the value's own step, the ids of groups and setups the
    same as a load computes, the record-level columns moved to the evaluation."""
    import duckdb
    import pyarrow as pa

    with Warehouse.open(real_warehouse, read_only=True) as wh:
        expected = wh.con.sql("SELECT * FROM score ORDER BY score_id").to_arrow_table()
        evaluations = wh.con.sql(
            "SELECT * EXCLUDE (evaluated_by, original_source, original_source_url, observed_at, migration_steps)"
            " FROM evaluation"
        ).to_arrow_table()
        groups, setups = (wh.scalar(f"SELECT count(*) FROM {t}") for t in ("score_group", "score_setup"))
    assert expected.num_rows > 10_000
    # a legacy record's chain starts with its migration steps: give every 7th record two, as 0.2.x records have
    ids = expected.column("evaluation_id").to_pylist()
    keep = set(sorted(set(ids))[::7])
    prefix = '["migrated from EEE 0.2.0 to 0.3.0","top-level source_data moved into each result",'
    migrated = [
        prefix + s[1:] if e in keep else s
        for e, s in zip(ids, expected.column("canonical_steps").to_pylist(), strict=True)
    ]
    at = expected.schema.get_field_index("canonical_steps")
    old = expected.set_column(at, "canonical_steps", pa.array(migrated))

    db = tmp_path / "old.duckdb"
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TABLE _migrations (version INTEGER PRIMARY KEY, name TEXT NOT NULL, sha256 TEXT NOT NULL,"
        " applied_at TIMESTAMP NOT NULL DEFAULT current_timestamp)"
    )
    for m in migrations():
        if m.version >= 80:
            break
        con.execute(m.sql)
        con.execute("INSERT INTO _migrations (version, name, sha256) VALUES (?, ?, ?)", [m.version, m.name, m.sha256])
    con.register("old_scores", old)
    con.register("old_evaluations", evaluations)
    con.execute("INSERT INTO evaluation BY NAME SELECT * FROM old_evaluations")
    con.execute("INSERT INTO score BY NAME SELECT * FROM old_scores")
    con.close()

    with Warehouse.open(db) as wh:
        got = wh.con.sql("SELECT * FROM score ORDER BY score_id").to_arrow_table()
        assert wh.scalar("SELECT count(*) FROM evaluation WHERE migration_steps IS NOT NULL") == len(keep)
        assert wh.scalar("SELECT count(*) FROM score_group") >= groups
        assert wh.scalar("SELECT count(*) FROM score_setup") == setups
    want = old.sort_by("score_id")
    assert got.column_names == want.column_names
    for name in got.column_names:
        assert got.column(name).to_pylist() == want.column(name).to_pylist(), name


def test_a_commit_out_of_memory_reopens_the_warehouse_as_it_was(tmp_path: Path) -> None:
    """A commit that runs out of memory keeps nothing; the warehouse says so (CommitFailed,
    out_of_memory), reopens the database when DuckDB invalidated it, and is as it was before the
    transaction and usable."""
    from evalhouse.errors import CommitFailed

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        wh.con.execute("CREATE TABLE t (a VARCHAR)")
        wh.con.execute("INSERT INTO t VALUES ('kept')")
        with pytest.raises(CommitFailed) as failed, wh.transaction() as con:
            con.execute("INSERT INTO t SELECT repeat('x', 20000) || i FROM range(20000) r(i)")
            con.execute("SET memory_limit = '20MB'")  # the new rows may spill, the commit finds no room
        assert failed.value.out_of_memory  # reopened when DuckDB invalidated the database (it may not)
        assert "nothing of the transaction is kept" in str(failed.value)
        assert wh.con.execute("SELECT a FROM t").fetchall() == [("kept",)]
        with wh.transaction() as con:  # and the warehouse writes again
            con.execute("INSERT INTO t VALUES ('after')")
        assert wh.scalar("SELECT count(*) FROM t") == 2


def _sources_read_by_another_process(db: Path) -> subprocess.CompletedProcess[str]:
    """A reader in a process of its own counting the sources (on stdout)."""
    read = (
        "from evalhouse.warehouse.db import Warehouse\n"
        f"print(Warehouse.open({str(db)!r}, read_only=True).scalar('SELECT count(*) FROM source'))"
    )
    return subprocess.run([sys.executable, "-c", read], capture_output=True, text=True, timeout=60, check=False)


def test_a_release_detaches_the_file_and_keeps_the_writers_duckdb(tmp_path: Path) -> None:
    """Around a fetch the file is closed to this process (another opens it read-only and reads it),
    but the writer's DuckDB is the same before and after: no new DuckDB is started."""
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
        host = wh.con
        with wh.released():
            with pytest.raises(WarehouseError, match="released"):
                wh.scalar("SELECT 1")
            reader = _sources_read_by_another_process(db)
            assert reader.returncode == 0 and reader.stdout.strip() == "1", reader.stderr
        assert wh.con is host
        assert wh.scalar("SELECT current_database()") == "w"
        assert wh.scalar("SELECT count(*) FROM source") == 1
    assert not db.with_name("w.duckdb.wal").exists()  # closing checkpointed the file


@pytest.mark.parametrize("name", ["memory.duckdb", "temp.duckdb", 'it\'s "mine".duckdb'])
def test_a_file_named_like_duckdbs_own_catalogs_or_quoted_opens(tmp_path: Path, name: str) -> None:
    db = tmp_path / name
    with Warehouse.open(db) as wh:
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
        with wh.released():
            pass
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('b', 'B', 'api')")
    with Warehouse.open(db, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM source") == 2
        with pytest.raises(duckdb.Error, match="read-only"):
            wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('c', 'C', 'api')")


def test_a_cursor_reads_the_warehouse_and_only_what_was_committed(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        wh.con.execute("BEGIN TRANSACTION")
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
        second = wh.cursor()
        assert second.execute("SELECT count(*) FROM source").fetchall() == [(0,)]
        wh.con.execute("COMMIT")
        assert second.execute("SELECT count(*) FROM source").fetchall() == [(1,)]
        second.close()


def test_a_release_inside_an_open_transaction_rolls_it_back_as_closing_did(tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        wh.con.execute("BEGIN TRANSACTION")
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('a', 'A', 'api')")
        with wh.released():
            reader = _sources_read_by_another_process(db)
            assert reader.returncode == 0 and reader.stdout.strip() == "0", reader.stderr
        assert wh.scalar("SELECT count(*) FROM source") == 0
        wh.con.execute("INSERT INTO source (source_key, name, kind) VALUES ('b', 'B', 'api')")
    with Warehouse.open(db, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM source") == 1
