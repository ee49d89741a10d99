"""Snapshots on real warehouses built through the EEE loader: create, verify, reopen, bad input."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import pytest
import typer
from clirunner import CliRunner
from eee_records import eee_record, write_tree

import evalhouse
from evalhouse.cli import app
from evalhouse.config import raw_store_path
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse, views
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot import freeze as snap
from evalhouse.warehouse.snapshot import reader
from evalhouse.warehouse.snapshot.format import MANIFEST, NOT_CONTENT, manifest_bytes
from evalhouse.warehouse.snapshot.freeze import create_snapshot
from evalhouse.warehouse.snapshot.manifest import SnapshotError
from evalhouse.warehouse.snapshot.reader import open_snapshot, snapshot_frame, snapshot_id
from evalhouse.warehouse.snapshot.verify import verify_snapshot

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


def cli() -> typer.Typer:
    """The real app, with the snapshot group registered if the lead has not wired it yet."""
    from evalhouse.cli import snapshot as snapshot_cli

    if not any(g.name == "snapshot" for g in app.registered_groups):
        snapshot_cli.register(app)
    return app


# -- building warehouses through the real loader ----------------------------------------------


def record(model_id: str, scores: dict[str, float], *, version: int = 1) -> dict[str, Any]:
    """An EEE 0.3.0 aggregate record with one accuracy result per benchmark in ``scores``."""
    return eee_record(
        model_id, scores, evaluation_id=f"c/{model_id}/{version}", retrieved_timestamp=str(1750000000 + version)
    )


BASE_MODELS = {
    "org/alpha": {"bench_a": 0.61, "bench_b": 0.42},
    "org/beta": {"bench_a": 0.55, "bench_b": 0.38},
    "org/gamma": {"bench_a": 0.70},
}


def add_record(tree: Path, rec: dict[str, Any], collection: str = "c") -> None:
    write_tree(tree, [rec], collection)


def load(db: Path, tree: Path) -> None:
    with Warehouse.open(db) as wh:
        summary = import_tree(wh, tree, RawStore(db.with_suffix(".raw")))
    assert summary.quarantined == 0, summary.as_dict()


def freeze(db: Path, out: Path, *, name: str | None = None, at: datetime | None = None) -> snap.CreatedSnapshot:
    with Warehouse.open(db) as wh:
        return create_snapshot(wh, out, RawStore(db.with_suffix(".raw")), name=name, created_at=at)


def base_warehouse(root: Path) -> Path:
    tree = root / "tree"
    for model_id, scores in BASE_MODELS.items():
        add_record(tree, record(model_id, scores))
    db = root / "w.duckdb"
    load(db, tree)
    return db


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """A warehouse of three models and a snapshot of it (read-only for the tests: copy to edit)."""
    root = tmp_path_factory.mktemp("snap")
    db = base_warehouse(root)
    result = cli_invoke(["--db", str(db), "snapshot", "create", str(root / "s1"), "--name", "base", "--json"])
    assert result.exit_code == 0, result.output
    return db, root / "s1"


class Ran:
    """A CliRunner result with rich's line wrapping undone, so messages can be matched whole."""

    def __init__(self, result: Any) -> None:
        self.exit_code = result.exit_code
        self.stdout = result.stdout
        self.output = " ".join(result.output.split())
        self.stderr = " ".join(result.stderr.split())


def cli_invoke(args: list[str]) -> Ran:
    return Ran(runner.invoke(cli(), args))


def copy_of(snapshot_dir: Path, tmp_path: Path) -> Path:
    target = tmp_path / "copy"
    shutil.copytree(snapshot_dir, target)
    return target


# -- create / verify ----------------------------------------------------------------------------


def test_create_writes_the_layout_and_verify_passes(built: tuple[Path, Path]) -> None:
    db, s1 = built
    manifest = json.loads((s1 / MANIFEST).read_text())
    partitions = sorted(p.relative_to(s1).as_posix() for p in (s1 / "score_value").rglob("*.parquet"))
    assert partitions == ["score_value/source_key=eee-c/data_0.parquet"]
    assert not (s1 / "score").exists()  # the view is built on open, not written again
    tables = manifest["tables"]
    assert {name for name, _ in views()} <= {n for n, e in tables.items() if e["kind"] == "view"}
    assert {"v_scores_canonical", "v_matrix_long", "v_provenance", "v_benchmark_metric"} <= set(tables)
    assert not {"_migrations", "snapshot", "analysis_run"} & set(tables)
    assert {"embedding", "evaluation", "score_value", "score_group", "score_setup", "model_config"} <= set(tables)
    assert tables["score"]["kind"] == "view" and tables["score"]["derived"] is True
    with Warehouse.open(db, read_only=True) as wh:
        assert tables["score_value"]["rows"] == wh.scalar("SELECT count(*) FROM score") == 5
        assert tables["evaluation"]["rows"] == 3
        assert manifest["ingest_runs"] == [r[0] for r in wh.con.execute("SELECT run_id FROM ingest_run").fetchall()]
        assert manifest["schema_version"] == wh.schema_version()
        recorded = wh.con.execute("SELECT snapshot_id, name, path FROM snapshot").fetchall()
    assert recorded == [(manifest["snapshot_id"], "base", str(s1))]
    assert manifest["registry"]["version"] and manifest["evalhouse_version"] == evalhouse.__version__
    assert manifest["eee"]["layout"] == "jsonl" and manifest["eee"]["records"] == 3
    assert manifest["files"]["eee/c.jsonl"]["rows"] == 3  # one file per collection, a record per line
    lines = (s1 / "eee" / "c.jsonl").read_text().splitlines()
    with Warehouse.open(db, read_only=True) as wh:
        stored = [r[0] for r in wh.con.execute("SELECT record FROM evaluation ORDER BY evaluation_id").fetchall()]
    assert lines == stored, "each record as the warehouse stores it, not re-serialised"
    # views with a row per score are not copies: built from their SQL on open
    for derived in ("v_score_current", "v_cell_candidates", "v_provenance"):
        assert tables[derived]["derived"] and tables[derived]["files"] == [] and "rows" not in tables[derived]
    assert all(f["sha256"] and f["rows"] >= 0 for f in manifest["files"].values())
    assert "created_at" in manifest and str(s1) not in (s1 / MANIFEST).read_text()

    result = cli_invoke(["snapshot", "verify", str(s1), "--json"])
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["ok"] and report["snapshot_id"] == manifest["snapshot_id"]
    assert report["files_checked"] == len(manifest["files"]) + 1  # and the manifest, as 'create' counts
    manifest_bytes = (s1 / MANIFEST).stat().st_size
    assert report["bytes_checked"] == sum(f["bytes"] for f in manifest["files"].values()) + manifest_bytes


def test_create_and_verify_count_the_same_files_and_bytes(built: tuple[Path, Path], tmp_path: Path) -> None:
    db = shutil.copy(built[0], tmp_path / "w.duckdb")
    made = cli_invoke(["--db", str(db), "snapshot", "create", str(tmp_path / "s"), "--json"])
    assert made.exit_code == 0, made.output
    created = json.loads(made.stdout)
    checked = json.loads(cli_invoke(["snapshot", "verify", str(tmp_path / "s"), "--json"]).stdout)
    on_disk = [p for p in (tmp_path / "s").rglob("*") if p.is_file()]  # what the folder holds, counted here
    assert created["files"] == checked["files_checked"] == len(on_disk)
    assert created["bytes"] == checked["bytes_checked"] == sum(p.stat().st_size for p in on_disk)
    text = cli_invoke(["snapshot", "verify", str(tmp_path / "s")]).output
    assert f"{len(on_disk)} files (the manifest included)" in text


def test_expect_id_takes_an_unambiguous_prefix_and_refuses_an_ambiguous_one(
    built: tuple[Path, Path], tmp_path: Path
) -> None:
    db = Path(shutil.copy(built[0], tmp_path / "w.duckdb"))
    s1 = built[1]
    sid = json.loads((s1 / MANIFEST).read_text())["snapshot_id"]
    verify = ["--db", str(db), "snapshot", "verify", str(s1)]
    assert cli_invoke([*verify, "--expect-id", sid[:8]]).exit_code == 0
    assert cli_invoke([*verify, "--expect-id", sid[:8].upper()]).exit_code == 0
    other = "0" * 64 if not sid.startswith("0") else "f" * 64
    wrong = cli_invoke([*verify, "--expect-id", other[:12]])
    assert wrong.exit_code == 1 and "is not the expected" in wrong.output
    short = cli_invoke([*verify, "--expect-id", sid[:5]])
    assert short.exit_code == 2 and "6 to 64 hex digits" in short.output
    # a second snapshot recorded in the warehouse whose id begins the same way
    twin = sid[:10] + ("0" if sid[10] != "0" else "1") * 54
    with Warehouse.open(db) as wh, wh.transaction() as con:
        con.execute(
            "INSERT INTO snapshot (snapshot_id, name, created_at, path, manifest) VALUES (?, 'twin', now(), '', '{}')",
            [twin],
        )
    ambiguous = cli_invoke([*verify, "--expect-id", sid[:8]])
    assert ambiguous.exit_code == 2 and "ambiguous" in ambiguous.output
    assert sid in ambiguous.output and twin in ambiguous.output
    assert cli_invoke([*verify, "--expect-id", sid[:11]]).exit_code == 0  # one more digit tells them apart


def content(manifest: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in manifest.items() if k not in NOT_CONTENT}


def test_the_same_state_gives_the_same_id_and_bytes(built: tuple[Path, Path], tmp_path: Path) -> None:
    db, s1 = built
    again = freeze(db, tmp_path / "again", name="base", at=datetime(2030, 1, 1, tzinfo=UTC))
    # and once more from a fresh interpreter (hash seeds, import order, thread pool all new)
    code = (
        "import sys; from pathlib import Path; from evalhouse.warehouse.db import Warehouse;"
        "from evalhouse.warehouse.raw.store import RawStore;"
        "from evalhouse.warehouse.snapshot.freeze import create_snapshot;"
        "wh = Warehouse.open(sys.argv[1]);"
        "store = RawStore(Path(sys.argv[1]).with_suffix('.raw'));"
        "print(create_snapshot(wh, sys.argv[2], store).snapshot_id);"
        "wh.close()"
    )
    proc = subprocess.run(
        [sys.executable, "-c", code, str(db), str(tmp_path / "third")],
        capture_output=True,
        text=True,
        check=False,
        timeout=120,
    )
    assert proc.returncode == 0, proc.stderr
    first = json.loads((s1 / MANIFEST).read_text())
    assert again.snapshot_id == first["snapshot_id"] == proc.stdout.strip()
    for other in (tmp_path / "again", tmp_path / "third"):
        files = sorted(p.relative_to(other).as_posix() for p in other.rglob("*") if p.is_file())
        assert files == sorted(p.relative_to(s1).as_posix() for p in s1.rglob("*") if p.is_file())
        for rel in files:
            if rel != MANIFEST:
                assert (other / rel).read_bytes() == (s1 / rel).read_bytes(), rel
        manifest = json.loads((other / MANIFEST).read_text())
        assert content(manifest) == content(first)
    with Warehouse.open(db, read_only=True) as wh:  # one row per id, pointing at the latest copy
        rows = wh.con.execute("SELECT snapshot_id, path FROM snapshot").fetchall()
    assert rows == [(first["snapshot_id"], str(tmp_path / "third"))]


def test_a_changed_warehouse_gets_a_new_id(built: tuple[Path, Path], tmp_path: Path) -> None:
    db, s1 = built
    copy = tmp_path / "w.duckdb"
    shutil.copy(db, copy)
    shutil.copytree(db.with_suffix(".raw"), copy.with_suffix(".raw"))
    con = duckdb.connect(str(copy))
    con.execute("UPDATE score_value SET value = value + 0.01 WHERE score_id = (SELECT min(score_id) FROM score_value)")
    con.close()
    other = freeze(copy, tmp_path / "changed")
    assert other.snapshot_id != json.loads((s1 / MANIFEST).read_text())["snapshot_id"]


def test_create_refuses_a_non_empty_folder_and_a_missing_warehouse(built: tuple[Path, Path], tmp_path: Path) -> None:
    db, s1 = built
    result = cli_invoke(["--db", str(db), "snapshot", "create", str(s1)])
    assert result.exit_code != 0 and "not an empty folder" in result.output
    result = cli_invoke(["--db", str(tmp_path / "none.duckdb"), "snapshot", "create", str(tmp_path / "s")])
    assert result.exit_code == 2 and "no warehouse" in result.output
    assert not (tmp_path / "s").exists() and not (tmp_path / "none.duckdb").exists()


# -- corruption and bad input -------------------------------------------------------------------


def pick(s1: Path, kind: str) -> str:
    files = json.loads((s1 / MANIFEST).read_text())["files"]
    choose = {
        "score parquet": lambda p: p.startswith("score_value/"),
        "table parquet": lambda p: p.startswith("evaluation/"),
        "view parquet": lambda p: p.startswith("v_scores_canonical/"),
        "eee json": lambda p: p.startswith("eee/") and p.endswith(".jsonl"),
    }[kind]
    return next(p for p in sorted(files) if choose(p))


@pytest.mark.parametrize("kind", ["score parquet", "table parquet", "view parquet", "eee json", "manifest"])
def test_one_flipped_byte_fails_verify_naming_the_file(built: tuple[Path, Path], tmp_path: Path, kind: str) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    rel = MANIFEST if kind == "manifest" else pick(s1, kind)
    data = bytearray((snapshot_dir / rel).read_bytes())
    data[len(data) // 2] ^= 0x01
    (snapshot_dir / rel).write_bytes(bytes(data))
    result = cli_invoke(["snapshot", "verify", str(snapshot_dir)])
    assert result.exit_code != 0
    assert rel in result.output, result.output
    with pytest.raises(SnapshotError, match=re.escape(rel)):
        open_snapshot(snapshot_dir)


def test_a_truncated_parquet_is_named_and_refused(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    rel = pick(s1, "score parquet")
    data = (snapshot_dir / rel).read_bytes()
    (snapshot_dir / rel).write_bytes(data[: len(data) // 2])
    result = cli_invoke(["snapshot", "verify", str(snapshot_dir), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["changed"] == [rel] and "truncated" in report["problems"][0]
    result = cli_invoke(["snapshot", "open", str(snapshot_dir)])
    assert result.exit_code == 2 and rel in result.output


def edit_manifest(snapshot_dir: Path, change: Any) -> None:
    manifest = json.loads((snapshot_dir / MANIFEST).read_text())
    change(manifest)
    (snapshot_dir / MANIFEST).write_bytes(manifest_bytes(manifest))


def test_a_hand_edited_manifest_no_longer_matches_its_id(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    edit_manifest(snapshot_dir, lambda m: m["tables"]["score"].update(rows=4))
    result = cli_invoke(["snapshot", "verify", str(snapshot_dir)])
    assert result.exit_code == 1
    assert "manifest.json: edited: its content hashes to" in result.output


def test_an_edited_file_hash_names_the_file_and_the_manifest(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    rel = pick(s1, "table parquet")
    edit_manifest(snapshot_dir, lambda m: m["files"][rel].update(sha256="0" * 64))
    report = verify_snapshot(snapshot_dir)
    assert not report.ok and report.changed == [rel]
    assert any("claims snapshot id" in p for p in report.manifest_problems)
    ran = cli_invoke(["snapshot", "verify", str(snapshot_dir)])
    assert ran.exit_code == 1 and f"{rel}: changed" in ran.output and "manifest.json: edited" in ran.output


def test_an_edited_label_or_clock_is_caught_by_the_seal(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    edit_manifest(snapshot_dir, lambda m: m.update(created_at="2001-01-01T00:00:00Z"))
    report = verify_snapshot(snapshot_dir)
    assert report.manifest_problems == ["edited: name or created_at no longer match the seal written at creation"]


def test_missing_and_extra_files_are_named(built: tuple[Path, Path], tmp_path: Path) -> None:
    _, s1 = built
    snapshot_dir = copy_of(s1, tmp_path)
    gone = pick(s1, "eee json")
    (snapshot_dir / gone).unlink()
    (snapshot_dir / "score_value" / "source_key=evil").mkdir()
    (snapshot_dir / "score_value" / "source_key=evil" / "data_0.parquet").write_bytes(b"PAR1")
    result = cli_invoke(["snapshot", "verify", str(snapshot_dir), "--json"])
    assert result.exit_code == 1
    report = json.loads(result.stdout)
    assert report["missing"] == [gone]
    assert report["extra"] == ["score_value/source_key=evil/data_0.parquet"]
    assert f"{gone}: missing" in result.stderr and "source_key=evil/data_0.parquet: extra file" in result.stderr


def test_a_folder_without_a_manifest_is_not_a_snapshot(tmp_path: Path) -> None:
    (tmp_path / "plain").mkdir()
    (tmp_path / "plain" / "x.parquet").write_bytes(b"PAR1")
    for command in (["verify"], ["open"], ["diff", str(tmp_path / "plain")]):
        result = cli_invoke(["snapshot", command[0], str(tmp_path / "plain"), *command[1:]])
        assert result.exit_code == 2, result.output
        assert "is not a snapshot: it has no manifest.json" in result.output
    (tmp_path / "plain" / MANIFEST).write_text("{not json")
    result = cli_invoke(["snapshot", "verify", str(tmp_path / "plain")])
    assert result.exit_code == 2 and "not valid JSON" in result.output


# -- reopening ----------------------------------------------------------------------------------


def test_open_snapshot_is_read_only_with_the_warehouse_views(built: tuple[Path, Path]) -> None:
    db, s1 = built
    con = evalhouse.open_snapshot(s1)
    manifest = json.loads((s1 / MANIFEST).read_text())
    assert snapshot_id(con) == manifest["snapshot_id"]
    assert con.execute("SELECT name FROM snapshot_meta").fetchall() == [("base",)]
    with Warehouse.open(db, read_only=True) as wh:
        for view in ("v_scores_canonical", "v_matrix_long", "v_provenance", "v_benchmark_metric"):
            expected = wh.con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall()
            assert con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall() == expected, view
        for table in ("score", "evaluation", "benchmark"):
            described = [r[:2] for r in con.execute(f"DESCRIBE {table}").fetchall()]
            assert described == [r[:2] for r in wh.con.execute(f"DESCRIBE {table}").fetchall()], table
    for statement in ("CREATE TABLE x (a INT)", "DELETE FROM score", "CREATE VIEW y AS SELECT 1"):
        with pytest.raises(duckdb.Error):
            con.execute(statement)
    frame = snapshot_frame(con, "SELECT * FROM v_matrix_long")
    assert len(frame) == 5 and frame.attrs["snapshot_id"] == manifest["snapshot_id"]
    con.close()


def test_views_changed_or_added_since_the_snapshot(built: tuple[Path, Path], monkeypatch: pytest.MonkeyPatch) -> None:
    """A changed view reads its frozen copy (one id, one set of values); a new one is computed."""
    _, s1 = built
    shipped = [
        (name, sql.replace("SELECT", "SELECT 1 AS new_column,", 1) if name == "v_source_status" else sql)
        for name, sql in views()
    ]
    shipped.append(("v_new", "CREATE OR REPLACE VIEW v_new AS SELECT count(*) AS n FROM score"))
    shipped.append(("v_needs_more", "CREATE OR REPLACE VIEW v_needs_more AS SELECT * FROM no_such_table"))
    monkeypatch.setattr(reader, "views", lambda: shipped)
    con = open_snapshot(s1)
    columns = [r[0] for r in con.execute("DESCRIBE v_source_status").fetchall()]
    assert "new_column" not in columns and con.execute("SELECT count(*) FROM v_source_status").fetchone() == (1,)
    assert con.execute("SELECT n FROM v_new").fetchone() == (5,)
    names = {r[0] for r in con.execute("SELECT view_name FROM duckdb_views() WHERE NOT internal").fetchall()}
    assert "v_needs_more" not in names
    con.close()


def test_open_cli_lists_tables_and_runs_sql(built: tuple[Path, Path]) -> None:
    _, s1 = built
    result = cli_invoke(["snapshot", "open", str(s1)])
    assert result.exit_code == 0, result.output
    assert "v_matrix_long" in result.output and "evalhouse.open_snapshot(" in result.output
    sql = "SELECT config_id, count(*) AS n FROM score GROUP BY ALL ORDER BY config_id"
    result = cli_invoke(["snapshot", "open", str(s1), "--sql", sql, "--json"])
    assert result.exit_code == 0, result.output
    assert [r["n"] for r in json.loads(result.stdout)] == [2, 2, 1]
    result = cli_invoke(["snapshot", "open", str(s1), "--sql", "SELECT * FROM nowhere"])
    assert result.exit_code == 2 and "nowhere" in result.output  # a bad query is bad input


def test_the_documented_duckdb_call_reads_a_local_snapshot(built: tuple[Path, Path]) -> None:
    db, s1 = built
    section = (REPO / "docs" / "scaling-out.md").read_text()
    call = re.search(r"^SELECT .*read_parquet\('(s3://[^']*?)/score_value/\*/\*\.parquet'.*;$", section, re.MULTILINE)
    assert call, "docs/scaling-out.md shows the DuckDB read_parquet call"
    assert "hive_partitioning = true" in call[0]
    sql = call[0].replace(call[1], s1.as_posix())
    count = duckdb.connect().execute(sql).fetchone()[0]
    with Warehouse.open(db, read_only=True) as wh:
        assert count == wh.scalar("SELECT count(*) FROM score") == 5
    assert 'spark.read.parquet("s3a://' in section and f"{call[1].replace('s3://', 's3a://')}/score_value" in section


def test_an_empty_warehouse_snapshots_verifies_and_reopens(tmp_path: Path) -> None:
    db = tmp_path / "empty.duckdb"
    Warehouse.open(db).close()
    created = freeze(db, tmp_path / "empty")
    assert created.manifest["tables"]["score_value"]["files"] == []  # no partitions: no score files at all
    assert verify_snapshot(created.path).ok
    con = open_snapshot(created.path)
    assert con.execute("SELECT count(*) FROM score").fetchone() == (0,)
    assert con.execute("SELECT count(*) FROM v_matrix_long").fetchone() == (0,)
    con.close()


def test_a_failed_create_leaves_nothing_behind(
    built: tuple[Path, Path], tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    db, _ = built

    def broken(*args: Any, **kwargs: Any) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(snap, "_materialise_views", broken)
    with pytest.raises(OSError, match="disk full"):
        freeze(db, tmp_path / "out")
    assert list(tmp_path.iterdir()) == []


def test_the_eee_tree_layout_is_written_on_request_and_opens_the_same(built: tuple[Path, Path], tmp_path: Path) -> None:
    db, _ = built
    with Warehouse.open(db) as wh:
        tree = snap.create_snapshot(wh, tmp_path / "tree", RawStore(raw_store_path(db)), eee_tree=True)
    manifest = tree.manifest
    assert manifest["eee"]["layout"] == "datastore" and manifest["eee"]["records"] == 3
    assert len([p for p in manifest["files"] if p.startswith("eee/data/c/org/")]) == 3
    assert verify_snapshot(tree.path).ok
    # derived views give, on open, exactly what the live warehouse's views give
    con = open_snapshot(tree.path)
    with Warehouse.open(db, read_only=True) as wh:
        for view in ("v_score_current", "v_cell_candidates", "v_provenance"):
            live = wh.con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall()
            assert con.execute(f"SELECT * FROM {view} ORDER BY ALL").fetchall() == live, view
    con.close()


def test_views_are_functions_of_the_tables() -> None:
    """A view that reads the clock or a random source would give the same state two ids."""
    volatile = re.compile(r"\b(now|current_(date|time|timestamp)|get_current_\w+|random|gen_random_uuid|uuid)\b", re.I)
    for name, sql in views():
        assert not volatile.search(sql), f"view {name} is not a function of the tables: {volatile.search(sql)[0]}"
