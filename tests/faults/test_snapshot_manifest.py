"""Hostile snapshots: a forged manifest never runs its SQL, a re-sealed one fails --expect-id,
links are refused, and malformed manifests are a clear error (exit 2), never a traceback."""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
from clirunner import CliRunner
from eee_records import eee_record, write_tree

import evalhouse
from evalhouse.cli import app
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.diff import diff_snapshots
from evalhouse.warehouse.snapshot.format import MANIFEST, content_id, file_sha256, manifest_bytes, seal
from evalhouse.warehouse.snapshot.freeze import create_snapshot
from evalhouse.warehouse.snapshot.manifest import SnapshotError, sql_type
from evalhouse.warehouse.snapshot.reader import open_snapshot
from evalhouse.warehouse.snapshot.verify import verify_snapshot

runner = CliRunner()


@pytest.fixture(scope="module")
def frozen(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real snapshot of a small warehouse loaded through the EEE importer."""
    root = tmp_path_factory.mktemp("snap")
    records = [
        eee_record("org/alpha", {"bench_a": 0.61, "bench_b": 0.42}, evaluation_id="c/alpha/1"),
        eee_record("org/beta", {"bench_a": 0.55}, evaluation_id="c/beta/1"),
    ]
    write_tree(root / "tree", records, "c")
    with Warehouse.open(root / "w.duckdb") as wh:
        store = RawStore(root / "w.raw")
        assert import_tree(wh, root / "tree", store).quarantined == 0
        create_snapshot(wh, root / "s", store)
    return root / "s"


def _copy(frozen: Path, tmp_path: Path, name: str = "s") -> Path:
    out = tmp_path / name
    shutil.copytree(frozen, out)
    return out


def _reseal(folder: Path, edit: Callable[[dict[str, Any]], None]) -> dict[str, Any]:
    """Edit the manifest, then recompute its id and seal as anyone can: self-consistent again."""
    manifest = json.loads((folder / MANIFEST).read_text())
    edit(manifest)
    manifest["snapshot_id"] = content_id(manifest)
    manifest["seal_sha256"] = seal(manifest)
    (folder / MANIFEST).write_bytes(_manifest_bytes(manifest))
    return manifest


def _manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """``manifest_bytes(manifest)``, written faster for the manifests of a million files: Python's
    JSON encoder indents in pure Python (6.5 s for a million entries), orjson in 0.6 s. For these
    manifests (strings and integers) the two write the same bytes: checked on the real manifest
    with entries of the same shape added."""
    files = manifest.get("files")
    if not isinstance(files, dict) or len(files) < 1000:
        return manifest_bytes(manifest)
    sample = {**manifest, "files": dict(list(files.items())[:3] + list(files.items())[-3:])}
    fast = lambda m: orjson.dumps(m, option=orjson.OPT_INDENT_2 | orjson.OPT_SORT_KEYS) + b"\n"  # noqa: E731
    assert fast(sample) == manifest_bytes(sample)
    return fast(manifest)


def _exit(args: list[str]) -> tuple[int, str]:
    result = runner.invoke(app, args)
    assert result.exception is None or isinstance(result.exception, SystemExit), repr(result.exception)
    return result.exit_code, result.output


def test_the_untouched_snapshot_verifies_and_opens(frozen: Path) -> None:
    sid = json.loads((frozen / MANIFEST).read_text())["snapshot_id"]
    assert _exit(["snapshot", "verify", str(frozen), "--expect-id", sid])[0] == 0
    con = evalhouse.open_snapshot(frozen, expect_id=sid)
    assert con.execute("SELECT count(*) FROM score").fetchone()[0] == 3
    con.close()


PAYLOADS = {
    "column type": lambda m, pwn: m["tables"]["score_value"]["columns"][0].__setitem__(
        1, f"VARCHAR) AS x; COPY (SELECT 42) TO '{pwn}'; SELECT CAST(NULL AS VARCHAR"
    ),
    "type in an empty table": lambda m, pwn: m["tables"]["quarantine"]["columns"][0].__setitem__(
        1, f"INTEGER) AS a FROM (SELECT 1) t; COPY (SELECT 1) TO '{pwn}' --"
    ),
    "column name": lambda m, pwn: m["tables"]["score_value"]["columns"][0].__setitem__(
        0, f"x\"; COPY t TO '{pwn}'; --"
    ),
    "partition column": lambda m, pwn: m["tables"]["score_value"].__setitem__(
        "partition_by", f"source_key'}}); COPY (SELECT 1) TO '{pwn}'; --"
    ),
    "view name": lambda m, pwn: m["tables"].__setitem__(
        f"v AS SELECT 1; COPY (SELECT 1) TO '{pwn}'; CREATE VIEW w", m["tables"]["v_scores_canonical"]
    ),
    "struct field": lambda m, pwn: m["tables"]["score_value"]["columns"][0].__setitem__(
        1, f"STRUCT(a INTEGER, \"b'); COPY (SELECT 1) TO '{pwn}'; --\" INTEGER)"
    ),
}


@pytest.mark.parametrize("where", list(PAYLOADS))
def test_a_forged_manifest_is_refused_before_any_sql_runs(frozen: Path, tmp_path: Path, where: str, figures) -> None:
    folder = _copy(frozen, tmp_path)
    pwn = tmp_path / "written-by-the-manifest.csv"
    forged = _reseal(folder, lambda m: PAYLOADS[where](m, pwn))
    assert content_id(forged) == forged["snapshot_id"]  # self-consistent: only validation can tell
    code, output = _exit(["snapshot", "verify", str(folder)])
    assert code == 2 and "malformed" in output and "refused" in output
    with pytest.raises(SnapshotError):
        evalhouse.open_snapshot(folder)
    with pytest.raises(SnapshotError):
        open_snapshot(folder, verify=False)  # validation is not a part of verify one can skip
    with pytest.raises(SnapshotError):
        diff_snapshots(frozen, folder)
    assert _exit(["snapshot", "open", str(folder), "--sql", "SELECT 1"])[0] == 2
    assert _exit(["snapshot", "diff", str(frozen), str(folder)])[0] == 2
    assert not pwn.exists(), "the manifest's SQL ran"
    figures.fault("snapshot", f"forged {where}", not pwn.exists())


def test_a_resealed_snapshot_passes_verify_but_not_expect_id(frozen: Path, tmp_path: Path, figures) -> None:
    original = json.loads((frozen / MANIFEST).read_text())["snapshot_id"]
    folder = _copy(frozen, tmp_path)
    (folder / "eee" / "note.txt").write_text("an added file, hashed into a re-sealed manifest\n")
    digest = file_sha256(folder / "eee" / "note.txt")

    def add(m: dict[str, Any]) -> None:
        m["files"]["eee/note.txt"] = {"sha256": digest, "bytes": (folder / "eee/note.txt").stat().st_size, "rows": 1}

    resealed = _reseal(folder, add)
    assert resealed["snapshot_id"] != original
    assert _exit(["snapshot", "verify", str(folder)])[0] == 0  # self-consistency alone proves nothing
    code, output = _exit(["snapshot", "verify", str(folder), "--expect-id", original])
    assert code == 1 and "is not the expected" in output
    with pytest.raises(SnapshotError, match="is not the expected"):
        evalhouse.open_snapshot(folder, expect_id=original)
    assert _exit(["snapshot", "open", str(folder), "--expect-id", original])[0] == 2
    assert _exit(["snapshot", "verify", str(folder), "--expect-id", "abc"])[0] == 2  # not an id at all
    figures.fault("snapshot", "re-sealed snapshot vs --expect-id", code == 1)


def test_a_file_replaced_by_a_symlink_is_refused(frozen: Path, tmp_path: Path, figures) -> None:
    folder = _copy(frozen, tmp_path)
    target = folder / "model_config" / "data_0.parquet"
    elsewhere = tmp_path / "outside.parquet"
    shutil.copy(target, elsewhere)
    target.unlink()
    target.symlink_to(elsewhere)  # same bytes, so the hash alone would match
    code, output = _exit(["snapshot", "verify", str(folder)])
    assert code == 1 and "symbolic link" in output
    with pytest.raises(SnapshotError, match="symbolic link"):
        evalhouse.open_snapshot(folder)
    with pytest.raises(SnapshotError, match="not a regular file inside"):
        open_snapshot(folder, verify=False)
    # a linked folder is refused the same way
    folder2 = _copy(frozen, tmp_path, "s2")
    moved = tmp_path / "moved-benchmark"
    shutil.move(folder2 / "benchmark", moved)
    (folder2 / "benchmark").symlink_to(moved, target_is_directory=True)
    code2, output2 = _exit(["snapshot", "verify", str(folder2)])
    assert code2 == 1 and "symbolic link" in output2
    figures.fault("snapshot", "symlinked file and folder", code == 1 and code2 == 1)


def _deep(n: int) -> str:
    return "[" * n + "]" * n


MALFORMED: dict[str, Callable[[dict[str, Any]], Any]] = {
    "no tables": lambda m: m.pop("tables"),
    "no files": lambda m: m.pop("files"),
    "no snapshot_id": lambda m: m.pop("snapshot_id"),
    "no created_at": lambda m: m.pop("created_at"),
    "no schema_version": lambda m: m.pop("schema_version"),
    "no registry": lambda m: m.pop("registry"),
    "no columns": lambda m: m["tables"]["score_value"].pop("columns"),
    "no kind": lambda m: m["tables"]["score_value"].pop("kind"),
    "no primary_key": lambda m: m["tables"]["score_value"].pop("primary_key"),
    "files not a list": lambda m: m["tables"]["score_value"].__setitem__("files", "score_value/x.parquet"),
    "column not a pair": lambda m: m["tables"]["score_value"]["columns"].__setitem__(0, ["only_a_name"]),
    "rows a string": lambda m: m["tables"]["score_value"].__setitem__("rows", "many"),
    "schema_version a string": lambda m: m.__setitem__("schema_version", "1; DROP"),
    "created_at garbage": lambda m: m.__setitem__("created_at", "yesterday"),
    "long file name": lambda m: m["files"].__setitem__("x" * 5000, {"sha256": "0" * 64, "bytes": 1, "rows": 1}),
    "long component": lambda m: m["tables"]["score_value"]["files"].append("score_value/" + "y" * 300 + ".parquet"),
    "absolute path": lambda m: m["tables"]["score_value"]["files"].append("/etc/passwd"),
    "bad sha": lambda m: next(iter(m["files"].values())).__setitem__("sha256", "nothex"),
    "a million files": lambda m: m["files"].update(
        {f"eee/f{i}.json": {"sha256": "0" * 64, "bytes": 1, "rows": 1} for i in range(1_000_000)}
    ),
    "300,000 files": lambda m: m["files"].update(
        {f"eee/f{i}.json": {"sha256": "0" * 64, "bytes": 1, "rows": 1} for i in range(300_000)}
    ),
    "manifest a list": None,  # below
    "nested 100,000 deep": None,
    "not UTF-8": None,
}


@pytest.mark.parametrize("case", list(MALFORMED))
def test_malformed_manifests_are_a_clear_error(frozen: Path, tmp_path: Path, case: str, figures) -> None:
    folder = _copy(frozen, tmp_path)
    path = folder / MANIFEST
    if case == "manifest a list":
        path.write_text("[1, 2, 3]")
    elif case == "nested 100,000 deep":
        m = json.loads(path.read_text())
        text = manifest_bytes(m).decode()
        path.write_text(text.replace('"eee": {', f'"deep": {_deep(100_000)}, "eee": {{', 1))
    elif case == "not UTF-8":
        path.write_bytes(b'{"format": "\xff\xfe"}')
    elif case == "no snapshot_id":  # resealing would put it back
        m = json.loads(path.read_text())
        m.pop("snapshot_id")
        path.write_bytes(manifest_bytes(m))
    else:
        _reseal(folder, MALFORMED[case])  # type: ignore[arg-type]
    start = time.process_time()
    code, output = _exit(["snapshot", "verify", str(folder)])
    cpu = time.process_time() - start
    assert code == 2, output
    assert "Traceback" not in output and output.strip()
    with pytest.raises(SnapshotError):
        verify_snapshot(folder)
    with pytest.raises(SnapshotError):
        evalhouse.open_snapshot(folder)
    print(f"{case}: exit {code} in {cpu:.1f} CPU s: {output.strip()[:160]}")
    figures.fault("snapshot", f"malformed manifest: {case}", code == 2)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("VARCHAR", "VARCHAR"),
        ("timestamp with time zone", "TIMESTAMP WITH TIME ZONE"),
        ("DECIMAL(18, 3)", "DECIMAL(18,3)"),
        ("STRUCT(metric_id VARCHAR, n_models BIGINT, n_rows BIGINT)[]", None),
        ("MAP(VARCHAR, DOUBLE[])", "MAP(VARCHAR, DOUBLE[])"),
        ("INTEGER[3]", "INTEGER[3]"),
    ],
)
def test_the_type_grammar_rebuilds_what_duckdb_writes(text: str, expected: str | None) -> None:
    assert sql_type(text) == (expected or text)


@pytest.mark.parametrize(
    "text",
    [
        "VARCHAR; DROP TABLE score",
        "VARCHAR)",
        "ENUM('a', 'b')",
        "INTEGER -- comment",
        "'x'",
        "STRUCT(" * 20 + "a INTEGER" + ")" * 20,
        "read_csv('/etc/passwd')",
        "",
    ],
)
def test_the_type_grammar_refuses_everything_else(text: str) -> None:
    with pytest.raises(SnapshotError):
        sql_type(text)
