"""Hostile EEE trees: links out of the root, FIFOs, directories named ``*.json``, dangling links and
JSON nested 100,000 deep are each quarantined with the reason; nothing outside the tree is read;
the rest of the tree, and the collections after it, still load."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import uuid
from pathlib import Path

import duckdb
import pytest
from eee_records import eee_record, write_tree

SECRET = "planted-outside-secret-7f3a9c"
DEEP = 100_000


def _uuid() -> str:
    return str(uuid.uuid4())


def _hostile_tree(tmp_path: Path) -> tuple[Path, dict[str, str]]:
    """Collection ``a`` full of traps (plus two good records), collection ``b`` (later) all good."""
    outside = tmp_path / "outside"
    outside.mkdir()
    (outside / "secret.json").write_text(json.dumps({"token": SECRET}))
    tree = tmp_path / "tree"
    good = [eee_record("org/alpha", {"bench_a": 0.61}, evaluation_id="a/alpha/1")]
    good.append(eee_record("org/beta", {"bench_a": 0.55}, evaluation_id="a/beta/1"))
    write_tree(tree, good, "a")
    later = [eee_record(f"org/m{i}", {"bench_b": 0.1 * i}, evaluation_id=f"b/m{i}/1") for i in range(1, 4)]
    write_tree(tree, later, "b")
    folder = tree / "data" / "a" / "org" / "traps"
    folder.mkdir(parents=True)
    traps: dict[str, str] = {}

    def trap(kind: str) -> Path:
        path = folder / f"{_uuid()}.json"
        traps[f"data/a/org/traps/{path.name}"] = kind
        return path

    trap("outside").symlink_to("/etc/passwd")
    trap("outside").symlink_to(outside / "secret.json")
    trap("outside").symlink_to(os.path.relpath(outside / "secret.json", folder))  # relative, climbing out
    trap("dangling").symlink_to(folder / "does-not-exist.json")
    trap("directory").mkdir()
    os.mkfifo(trap("fifo"))
    trap("deep record").write_text("[" * DEEP + "]" * DEEP)
    deep_details = eee_record("org/gamma", {"bench_a": 0.5}, evaluation_id="a/gamma/1")
    deep_details["model_info"]["additional_details"] = {"x": "@@"}
    text = json.dumps(deep_details).replace('"@@"', "[" * DEEP + "]" * DEEP)
    trap("deep additional_details").write_text(text)
    # a good record whose samples file holds a line nested 100,000 deep among good lines
    with_samples = eee_record("org/delta", {"bench_a": 0.4}, evaluation_id="a/delta/1")
    record_path = folder / f"{_uuid()}.json"
    record_path.write_text(json.dumps(with_samples))
    samples = record_path.with_name(record_path.stem + "_samples.jsonl")
    samples.write_text("[" * DEEP + "]" * DEEP + "\n")
    traps[f"data/a/org/traps/{samples.name}:line 1"] = "deep samples line"
    # a good record whose samples file is a link out of the tree
    linked = eee_record("org/epsilon", {"bench_a": 0.3}, evaluation_id="a/epsilon/1")
    linked_path = folder / f"{_uuid()}.json"
    linked_path.write_text(json.dumps(linked))
    linked_samples = linked_path.with_name(linked_path.stem + "_samples.jsonl")
    linked_samples.symlink_to(outside / "secret.json")
    traps[f"data/a/org/traps/{linked_samples.name}"] = "outside"
    # budgets (made small by BUDGETS): a samples line past the line budget among good lines, and a
    # samples file past the samples budget; each record still loads
    for kind, body in (
        ("long samples line", b"{}\n" + b"[" + b" " * 300_000 + b"]\n{}\n"),
        ("samples file", b"{}\n" * 400_000),
    ):
        rec = eee_record(f"org/{kind.split()[0]}", {"bench_a": 0.2}, evaluation_id=f"a/{kind.split()[0]}/1")
        rec_path = folder / f"{_uuid()}.json"
        rec_path.write_text(json.dumps(rec))
        sidecar = rec_path.with_name(rec_path.stem + "_samples.jsonl")
        sidecar.write_bytes(body)
        traps[f"data/a/org/traps/{sidecar.name}" + (":line 2" if kind == "long samples line" else "")] = kind
    return tree, traps


#: Budgets small enough for a test's files to pass them (evalhouse.ingest.budgets).
BUDGETS = {"EVALHOUSE_LINE_BYTES": "256KB", "EVALHOUSE_SAMPLES_BYTES": "1MB"}


def _import(db: Path, tree: Path) -> subprocess.CompletedProcess[str]:
    """The real CLI in its own process, so a FIFO that blocked would time out instead of hanging."""
    return subprocess.run(
        [sys.executable, "-m", "evalhouse", "--db", str(db), "import-eee", str(tree), "--json", "--skip-validation"],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
        env={**os.environ, **BUDGETS},
    )


def test_hostile_tree_is_quarantined_file_by_file_and_the_rest_loads(tmp_path: Path, figures) -> None:
    tree, traps = _hostile_tree(tmp_path)
    db = tmp_path / "w.duckdb"
    proc = _import(db, tree)
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stderr[-2000:]  # quarantined rows: the exit code says so
    summary = json.loads(proc.stdout)
    con = duckdb.connect(str(db), read_only=True)
    quarantined = dict(con.execute("SELECT locator, reason FROM quarantine").fetchall())
    expected_words = {
        "outside": "outside the import root",
        "dangling": "dangling symbolic link",
        "directory": "a directory, not a regular file",
        "fifo": "a FIFO, not a regular file",
        "deep record": "nested more than 64 levels deep",
        "deep additional_details": "nested more than 64 levels deep",
        "deep samples line": "nested more than 64 levels deep",
        "long samples line": "more than the 256,000 bytes line budget; refused unread",
        "samples file": "more than the 1,000,000 bytes samples-file budget",
    }
    survived = 0
    for locator, kind in traps.items():
        reason = quarantined.get(locator)
        ok = reason is not None and expected_words[kind] in reason
        survived += ok
        figures.fault("import", f"{kind} ({locator.rsplit('/', 1)[-1][:12]})", ok, str(reason))
        assert ok, (locator, kind, reason)
    # nothing from outside the tree was read: not in quarantine payloads, raw store or output
    payloads = " ".join(p or "" for (p,) in con.execute("SELECT payload FROM quarantine").fetchall())
    raw = db.with_name(db.name.removesuffix(".duckdb") + ".raw")
    stored = b"".join(p.read_bytes() for p in raw.rglob("*") if p.is_file())
    for needle in (SECRET, "root:x:0:0"):
        assert needle not in payloads and needle.encode() not in stored and needle not in proc.stdout
    # the rest of collection a (alpha, beta, delta, epsilon, long, samples) and all of collection b loaded
    loaded = dict(con.execute("SELECT source_key, count(*) FROM evaluation GROUP BY 1").fetchall())
    assert loaded == {"eee-a": 6, "eee-b": 3}, loaded
    runs = {r["source"]: r["status"] for r in summary["runs"]}
    assert runs == {"eee-a": "partial", "eee-b": "completed"}
    con.close()


def test_a_symlink_inside_the_tree_is_read_like_its_target(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write_tree(tree, [eee_record("org/alpha", {"bench_a": 0.6}, evaluation_id="c/alpha/1")], "c")
    (target,) = (tree / "data" / "c").rglob("*.json")
    other = tree / "data" / "c" / "org" / "copy"
    other.mkdir(parents=True)
    (other / f"{_uuid()}.json").symlink_to(target)
    proc = _import(tmp_path / "w.duckdb", tree)
    assert proc.returncode == 0, proc.stdout + proc.stderr[-2000:]
    run = json.loads(proc.stdout)["runs"][0]
    assert run["loaded"] == 1 and run["duplicate"] == 1 and run["quarantined"] == 0


@pytest.mark.parametrize("depth", [65, 1_000, DEEP])
def test_strict_json_refuses_deep_documents_without_recursing(depth: int) -> None:
    from evalhouse.schema.eee_json import strict_json

    with pytest.raises(ValueError, match="nested more than 64 levels"):
        strict_json(("[" * depth + "]" * depth).encode())
    assert strict_json(("[" * 64 + "]" * 64).encode()) is not None
