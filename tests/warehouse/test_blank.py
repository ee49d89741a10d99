"""A new warehouse is a copy of the blank one in the cache folder (warehouse/blank.py): the same
schema as migrating step by step, its own migration times, a new blank for a new schema, a bad
blank replaced, and no cache no harm. On real DuckDB files and three real legacy collections."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest

import evalhouse.warehouse.db as db_module
from evalhouse.common.cache import ENV_CACHE
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse import blank
from evalhouse.warehouse.db import Migration, Warehouse
from evalhouse.warehouse.raw.store import RawStore

LEGACY = "datasets/eee-datastore-legacy/data"
COLLECTIONS = ("global-mmlu-lite", "hal-usaco", "helm_instruct")  # 24, 13 and 4 real records

SCHEMA = {
    "tables": "SELECT table_name, sql FROM duckdb_tables() WHERE NOT internal ORDER BY 1",
    "views": "SELECT view_name, sql FROM duckdb_views() WHERE NOT internal ORDER BY 1",
    "indexes": "SELECT index_name, table_name, sql FROM duckdb_indexes() ORDER BY 1, 2",
    "constraints": "SELECT table_name, constraint_type, constraint_column_names, expression"
    " FROM duckdb_constraints() WHERE schema_name = 'main' ORDER BY ALL",
    "sequences": "SELECT sequence_name, start_value, increment_by, last_value FROM duckdb_sequences() ORDER BY 1",
    "migrations": "SELECT version, name, sha256 FROM _migrations ORDER BY 1",
    "view state": "SELECT digest FROM _view_state",
}


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    monkeypatch.setenv(ENV_CACHE, str(folder))
    return folder


@pytest.fixture
def builds(monkeypatch: pytest.MonkeyPatch) -> list[Path]:
    """Every blank made."""
    made: list[Path] = []
    real = db_module._build_blank

    def counted(path: Path) -> None:
        made.append(path)
        real(path)

    monkeypatch.setattr(db_module, "_build_blank", counted)
    return made


def schema(path: Path) -> dict[str, list[Any]]:
    con = duckdb.connect(str(path), read_only=True)
    try:
        return {what: con.execute(sql).fetchall() for what, sql in SCHEMA.items()}
    finally:
        con.close()


def no_cache(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A cache folder that cannot be made (its path is a file): every warehouse is migrated."""
    blocked = tmp_path / "not-a-folder"
    blocked.write_text("a file")
    monkeypatch.setenv(ENV_CACHE, str(blocked))


def blanks(cache: Path) -> list[Path]:
    return sorted((cache / "warehouse").glob("*.duckdb"))


def test_a_copy_of_the_blank_has_the_schema_migrating_gives(
    cache: Path, builds: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Warehouse.open(tmp_path / "first.duckdb").close()
    Warehouse.open(tmp_path / "second.duckdb").close()
    assert len(builds) == 1 and len(blanks(cache)) == 1  # made once, copied twice

    no_cache(monkeypatch, tmp_path)
    Warehouse.open(tmp_path / "migrated.duckdb").close()
    assert len(builds) == 1  # no blank where the cache cannot be written: migrated step by step

    migrated = schema(tmp_path / "migrated.duckdb")
    assert migrated["tables"] and migrated["views"] and migrated["migrations"]
    for copy in ("first.duckdb", "second.duckdb"):
        copied = schema(tmp_path / copy)
        for what in SCHEMA:
            assert copied[what] == migrated[what], what
    assert not list(tmp_path.glob(".*"))  # no temporary copy left beside the warehouses


def test_a_copy_records_its_own_migration_time(cache: Path, tmp_path: Path) -> None:
    Warehouse.open(tmp_path / "first.duckdb").close()
    (kept,) = blanks(cache)
    con = duckdb.connect(str(kept), read_only=True)
    made_at = con.execute("SELECT max(applied_at) FROM _migrations").fetchall()[0][0]
    con.close()
    with Warehouse.open(tmp_path / "later.duckdb") as wh:
        times = [t for (t,) in wh.con.execute("SELECT applied_at FROM _migrations").fetchall()]
    assert len(set(times)) == 1 and times[0] > made_at


def test_a_new_schema_makes_a_new_blank(
    cache: Path, builds: list[Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    Warehouse.open(tmp_path / "before.duckdb").close()
    shipped = db_module.migrations()
    extra = Migration(shipped[-1].version + 1, "test_extra", "CREATE TABLE test_extra (x INTEGER);")
    monkeypatch.setattr(db_module, "migrations", lambda: [*shipped, extra])
    with Warehouse.open(tmp_path / "after.duckdb") as wh:
        assert wh.schema_version() == extra.version
        assert wh.con.execute("SELECT count(*) FROM test_extra").fetchall() == [(0,)]
    assert len(builds) == 2 and len(blanks(cache)) == 2
    assert "test_extra" not in {t for t, _ in schema(tmp_path / "before.duckdb")["tables"]}


@pytest.mark.parametrize(
    "bad",
    [
        b"",  # torn to nothing
        b"\0" * 8 + blank.MAGIC + b"\0" * 4096,  # a DuckDB header and nothing DuckDB can open
        b"not a database at all" * 100,
    ],
    ids=["empty", "header-only", "garbage"],
)
def test_a_blank_duckdb_cannot_open_is_made_again(cache: Path, builds: list[Path], tmp_path: Path, bad: bytes) -> None:
    Warehouse.open(tmp_path / "first.duckdb").close()
    (kept,) = blanks(cache)
    kept.write_bytes(bad)
    with Warehouse.open(tmp_path / "second.duckdb") as wh:
        assert wh.schema_version() == db_module.migrations()[-1].version
    assert schema(tmp_path / "second.duckdb") == schema(tmp_path / "first.duckdb")
    assert blank.is_duckdb_file(kept) or not kept.exists()  # made again now, or at the next new warehouse
    Warehouse.open(tmp_path / "third.duckdb").close()
    assert blank.is_duckdb_file(kept) and schema(kept)["tables"] == schema(tmp_path / "first.duckdb")["tables"]
    assert len(builds) >= 2


def test_an_existing_warehouse_is_never_replaced_by_the_blank(cache: Path, builds: list[Path], tmp_path: Path) -> None:
    path = tmp_path / "w.duckdb"
    with Warehouse.open(path) as wh:
        wh.con.execute("CREATE TABLE kept (x INTEGER)")
        wh.con.execute("INSERT INTO kept VALUES (42)")
    with Warehouse.open(path) as wh:
        assert wh.con.execute("SELECT x FROM kept").fetchall() == [(42,)]
    assert len(builds) == 1


def test_real_collections_load_the_same_into_a_copy_and_a_migrated_warehouse(
    shared: Path, cache: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    tree = tmp_path / "tree"
    for name in COLLECTIONS:
        if not (shared / LEGACY / name).is_dir():
            pytest.skip(f"{shared / LEGACY / name} is not there")
        shutil.copytree(shared / LEGACY / name, tree / "data" / name)

    def loaded(path: Path) -> dict[str, Any]:
        with Warehouse.open(path) as wh:
            summary = import_tree(wh, tree, RawStore(tmp_path / f"raw-{path.stem}"))
            return {
                "runs": [(r.source_key, r.status, r.report.as_dict()["scores_loaded"]) for r in summary.runs],
                "scores": wh.con.execute(
                    "SELECT fingerprint, evaluation_id, benchmark_id, metric_id, value FROM score ORDER BY fingerprint"
                ).fetchall(),
                "evaluations": wh.con.execute("SELECT fingerprint, record FROM evaluation ORDER BY 1").fetchall(),
                "quarantine": wh.con.execute("SELECT locator, reason FROM quarantine ORDER BY ALL").fetchall(),
            }

    copied = loaded(tmp_path / "copied.duckdb")
    assert blanks(cache)
    no_cache(monkeypatch, tmp_path)
    migrated = loaded(tmp_path / "migrated.duckdb")
    assert copied["scores"] and copied == migrated
