"""Hostile SQL against the read-only query surface ``snapshot open --sql`` (``evalhouse sql`` shares
its guard; see tests/warehouse/test_sql_guard.py): nothing is read from outside the snapshot,
nothing is written anywhere, every refusal is a clear error (exit 2), and
``--json`` output is strict JSON (no bare NaN or Infinity)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from clirunner import CliRunner
from eee_records import eee_record, write_tree

from evalhouse.cli import app
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.freeze import create_snapshot
from evalhouse.warehouse.snapshot.verify import verify_snapshot

runner = CliRunner()
PASSWD_MARK = "root:"


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    root = tmp_path_factory.mktemp("sql")
    write_tree(root / "tree", [eee_record("org/alpha", {"bench_a": 0.61}, evaluation_id="c/alpha/1")], "c")
    with Warehouse.open(root / "w.duckdb") as wh:
        store = RawStore(root / "w.raw")
        import_tree(wh, root / "tree", store)
        create_snapshot(wh, root / "s", store)
    outside = root / "outside"
    outside.mkdir()
    (outside / "secret.csv").write_text("token\nplanted-sql-secret-1c9e\n")
    raw_file = next(p for p in (root / "w.raw").rglob("*") if p.is_file() and p.name != "manifest.jsonl")
    parquet = next((root / "s").rglob("*.parquet"))
    return {
        "root": root,
        "snapshot": root / "s",
        "db": root / "w.duckdb",
        "outside": outside,
        "raw": raw_file,
        "parquet_copy": _copy(parquet, outside / "copy.parquet"),
    }


def _copy(src: Path, dst: Path) -> Path:
    dst.write_bytes(src.read_bytes())
    return dst


#: Hostile statements; {out} is a folder outside the snapshot, {snap} the snapshot, {raw} a raw store
#: file, {pq} a Parquet file outside the snapshot, {db} the live warehouse.
STATEMENTS = {
    "COPY query TO a file": "COPY (SELECT 42 AS x) TO '{out}/copy.csv'",
    "COPY table TO parquet": "COPY score TO '{out}/dump.parquet' (FORMAT parquet)",
    "COPY into the snapshot folder": "COPY (SELECT 1 AS x) TO '{snap}/score/evil.csv'",
    "EXPORT DATABASE": "EXPORT DATABASE '{out}/export'",
    "read_csv outside": "SELECT * FROM read_csv('/etc/passwd')",
    "read_csv_auto outside": "SELECT * FROM read_csv_auto('{out}/secret.csv')",
    "read_text outside": "SELECT content FROM read_text('/etc/passwd')",
    "read_blob of the raw store": "SELECT content FROM read_blob('{raw}')",
    "read_parquet outside": "SELECT * FROM read_parquet('{pq}')",
    "read_json outside": "SELECT * FROM read_json_auto('{out}/secret.csv')",
    "glob of the root": "SELECT * FROM glob('/*')",
    "ATTACH the live warehouse": "ATTACH '{db}' AS live (READ_ONLY)",
    "INSTALL an extension": "INSTALL httpfs",
    "LOAD an extension": "LOAD httpfs",
    "turn external access back on": "SET enable_external_access = true",
    "a write hidden after a read": "SELECT 1; COPY (SELECT 1) TO '{out}/second.csv'",
    "CREATE TABLE": "CREATE TABLE pwn AS SELECT 1 AS x",
    "a file path as a table": "SELECT * FROM '/etc/passwd'",
}


def _statement(w: dict[str, Path], name: str) -> str:
    return STATEMENTS[name].format(out=w["outside"], snap=w["snapshot"], raw=w["raw"], pq=w["parquet_copy"], db=w["db"])


def _run(snapshot: Path, sql: str, *, json_out: bool = False) -> tuple[int, str, BaseException | None]:
    args = ["snapshot", "open", str(snapshot), "--sql", sql, *(["--json"] if json_out else [])]
    result = runner.invoke(app, args)
    return result.exit_code, result.output, result.exception


def _written(w: dict[str, Path]) -> list[str]:
    expected = {"secret.csv", "copy.parquet"}
    outside = [p.name for p in w["outside"].iterdir() if p.name not in expected]
    verify = verify_snapshot(w["snapshot"])
    return outside + ([] if verify.ok else verify.problems())


@pytest.mark.parametrize("name", list(STATEMENTS))
def test_hostile_statement_is_refused(world: dict[str, Path], name: str, figures) -> None:
    sql = _statement(world, name)
    code, output, exc = _run(world["snapshot"], sql)
    written = _written(world)
    leaked = PASSWD_MARK in output or "planted-sql-secret" in output
    crashed = exc is not None and not isinstance(exc, SystemExit)
    refused = code == 2 and not written and not leaked and not crashed
    figures.fault("hostile SQL", name, refused, f"exit {code}, wrote {written}, leaked {leaked}")
    for p in world["outside"].iterdir():  # leave the next statement a clean slate
        if p.name not in ("secret.csv", "copy.parquet"):
            if p.is_dir():
                shutil.rmtree(p)
            else:
                p.unlink()
    stray = world["snapshot"] / "score" / "evil.csv"
    stray.unlink(missing_ok=True)
    assert refused, f"{name}: exit {code}, wrote {written}, leaked={leaked}, {output[-300:]}"


@pytest.mark.parametrize("sql", ["", "   ", "-- nothing but a comment", "/* a block comment */", ";", "-- a\n;\n"])
def test_empty_or_comment_only_sql_is_a_clear_error(world: dict[str, Path], sql: str, figures) -> None:
    code, output, exc = _run(world["snapshot"], sql)
    clear = code == 2 and (exc is None or isinstance(exc, SystemExit)) and output.strip() != ""
    figures.fault("hostile SQL", f"empty SQL {sql!r}", clear, f"exit {code}: {output[-200:]}")
    assert clear, (code, repr(exc), output[-300:])


def test_json_output_is_strict_json(world: dict[str, Path], figures) -> None:
    sql = "SELECT 'NaN'::DOUBLE AS nan, 'inf'::DOUBLE AS inf, '-inf'::DOUBLE AS ninf, 0.5 AS half"
    code, output, _ = _run(world["snapshot"], sql, json_out=True)

    def refuse(name: str) -> None:
        raise ValueError(f"bare {name} is not JSON")

    rows = json.loads(output, parse_constant=refuse)
    assert code == 0 and rows[0]["half"] == 0.5 and rows[0]["nan"] is None and rows[0]["inf"] is None
    figures.fault("hostile SQL", "NaN and Infinity in --json", True)


def test_a_plain_query_still_works(world: dict[str, Path]) -> None:
    code, output, _ = _run(world["snapshot"], "SELECT count(*) AS n FROM score", json_out=True)
    assert code == 0 and json.loads(output) == [{"n": 1}]
