"""Concurrent processes: a second writer of every kind is told who holds the lock, readers succeed
or fail clearly, two refreshes started together never corrupt the warehouse."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest
from clirunner import CliRunner
from eee_records import eee_record, write_tree
from httpserver import serve

from evalhouse.cli import app
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
from evalhouse.warehouse.db import Warehouse

runner = CliRunner()


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalhouse", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("concurrency")
    write_tree(root / "tree", [eee_record("org/alpha", {"bench_a": 0.6}, evaluation_id="c/alpha/1")], "c")
    assert _cli(root / "w.duckdb", "import-eee", str(root / "tree"), "--skip-validation").returncode == 0
    return root / "w.duckdb"


def test_every_kind_of_second_writer_is_told_who_holds_the_lock(loaded: Path, tmp_path: Path, figures) -> None:
    tree = loaded.parent / "tree"
    writers = {
        "migrate": ["migrate"],
        "import-eee": ["import-eee", str(tree), "--skip-validation"],
        "refresh": ["refresh", "--source", "aider-polyglot", "--mirror", str(tmp_path / "none"), "--skip-validation"],
        "ingest": ["ingest", "aider-polyglot", str(tmp_path / "missing.yml"), "--skip-validation"],
        "reparse": ["reparse", "--source", "aider-polyglot", "--skip-validation"],
        "snapshot create": ["snapshot", "create", str(tmp_path / "snap")],
        "validate": ["validate"],
        "curate policy": ["curate", "policy", "latest"],
        "dates --correct": ["dates", "--model", "org/alpha", "--correct", "2024-01-02", "--reason", "test"],
    }
    with Warehouse.open(loaded) as held:  # this process is the writer
        before = held.scalar("SELECT count(*) FROM score")
        told = {}
        for kind, args in writers.items():
            proc = _cli(loaded, *args)
            out = proc.stdout + proc.stderr
            ok = proc.returncode != 0 and f"warehouse is locked by pid {os.getpid()}" in out and "Traceback" not in out
            told[kind] = ok
            figures.fault("concurrency", f"second writer: {kind}", ok, out[-300:])
        held.close()
    assert all(told.values()), {k: v for k, v in told.items() if not v}
    with Warehouse.open(loaded, read_only=True) as wh:
        assert wh.scalar("SELECT count(*) FROM score") == before
    assert not (tmp_path / "snap").exists()


def test_readers_during_a_write_succeed_or_fail_clearly(loaded: Path, figures) -> None:
    readers = {
        "stats": ["stats", "--json"],
        "quarantine list": ["quarantine", "list"],
        "audit verify": ["audit", "verify"],
        "export-eee": ["export-eee", str(loaded.parent / "out")],
        "conflicts": ["conflicts"],
    }
    with Warehouse.open(loaded):
        for kind, args in readers.items():
            proc = _cli(loaded, *args)
            out = proc.stdout + proc.stderr
            clear = proc.returncode == 0 or ("warehouse is locked by" in out and proc.returncode in (1, 2))
            figures.fault("concurrency", f"reader during a write: {kind}", clear and "Traceback" not in out, out[-300:])
            print(f"{kind}: exit {proc.returncode} {out.strip().splitlines()[-1][:120] if out.strip() else ''}")
            assert clear and "Traceback" not in out, (kind, proc.returncode, out[-1500:])


def test_two_refreshes_started_together_do_not_corrupt(shared: Path, tmp_path: Path, figures) -> None:
    build_mirror(
        tmp_path / "mirror" / "m",
        {EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: (shared / AA_CSV).read_bytes()},
    )
    db = tmp_path / "w.duckdb"
    with serve(static_dir=tmp_path / "mirror") as srv:
        cmd = [
            sys.executable,
            "-m",
            "evalhouse",
            "--db",
            str(db),
            "refresh",
            "--source",
            "epoch-benchmarks",
            "--source",
            "artificial-analysis",
            "--mirror",
            f"{srv.url}/m",
            "--skip-validation",
        ]
        procs = [subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for _ in range(2)]
        outs = [p.communicate(timeout=300) for p in procs]
        codes = [p.returncode for p in procs]
        again = subprocess.run(cmd, capture_output=True, text=True, check=False)
    for code, (out, err) in zip(codes, outs, strict=True):
        assert code == 0 or "warehouse is locked by" in out + err, (code, err[-1500:])
        assert "Traceback" not in err
    assert again.returncode == 0
    with Warehouse.open(db, read_only=True) as wh:
        runs = wh.con.execute(
            "SELECT source_key, count(*) FROM ingest_run WHERE status IN ('completed', 'partial') GROUP BY 1"
        ).fetchall()
        dupes = wh.scalar("SELECT count(*) - count(DISTINCT score_id) FROM score")
    assert dict(runs) == {"epoch-benchmarks": 1, "artificial-analysis": 1}  # loaded once, whoever won
    assert dupes == 0
    for args in (["validate"], ["audit", "verify"]):
        assert runner.invoke(app, ["--db", str(db), *args]).exit_code == 0
    figures.fault("concurrency", "two refreshes started together", True)
