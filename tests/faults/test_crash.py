"""kill -9 at seeded random moments of a large import and of a refresh.

Each trial starts the real CLI in its own process, kills it with SIGKILL part-way, then checks
what a person would: the warehouse opens (the stale lock is recovered), every collection or
source holds either its old state or its new one and never a part of a run, ``validate`` and
``audit verify`` pass, a rerun completes to the same state as an uninterrupted run, and no
temporary file or unsealed pack is left in the raw store.
"""

from __future__ import annotations

import csv
import io
import os
import random
import shutil
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from clirunner import CliRunner
from httpserver import serve
from realwarehouse import copy_warehouse
from sizes import trials

from evalhouse.cli import app
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.pinned import AA_CSV, AA_PAGE_URL, EPOCH_DIR, EPOCH_URL, epoch_zip
from evalhouse.warehouse.db import Warehouse

TRIALS = trials(10)
SEED = 18
runner = CliRunner()
LEGACY = "datasets/eee-datastore-legacy"


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "evalhouse", *args]


def _kill_at(cmd: list[str], after: float) -> int:
    """Run ``cmd``, SIGKILL it ``after`` seconds in (if still running); its return code."""
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        proc.wait(timeout=after)
    except subprocess.TimeoutExpired:
        os.kill(proc.pid, signal.SIGKILL)
    return proc.wait(timeout=60)


def _state(db: Path, view: str = "score") -> dict[str, tuple]:
    """Per source: evaluations, scores (count and a hash of ids and values), quarantined rows."""
    with Warehouse.open(db) as wh:  # a writer: recovers the stale lock and replays DuckDB's WAL
        rows = wh.con.execute(
            f"""
            SELECT s.source_key,
                   (SELECT count(*) FROM evaluation e WHERE e.source_key = s.source_key),
                   (SELECT count(*) FROM {view} c WHERE c.source_key = s.source_key),
                   (SELECT coalesce(sum(hash(c.score_id, c.value)), 0) FROM {view} c
                     WHERE c.source_key = s.source_key),
                   (SELECT count(*) FROM quarantine q WHERE q.source_key = s.source_key)
            FROM source s ORDER BY 1
            """
        ).fetchall()
    return {r[0]: tuple(r[1:]) for r in rows}


def _temporary_files(raw: Path) -> list[Path]:
    """What a killed writer leaves for the next one to sweep: temporary files, and packs never
    sealed (no index: the next writer cuts their torn tail and indexes them)."""
    if not raw.is_dir():
        return []
    unsealed = [p for p in raw.glob("packs/*.pack") if not p.with_suffix(".idx").exists()]
    return [*raw.glob("??/.tmp-*"), *raw.glob("packs/.tmp-*"), *unsealed]


def _checks(db: Path) -> None:
    for args in (["validate"], ["audit", "verify"]):
        result = runner.invoke(app, ["--db", str(db), *args])
        assert result.exit_code == 0, f"{args}: {result.output[-1500:]}"


#: What the command adds to an import's time: the interpreter and its imports (a kill is timed on it).
CLI_START_S = 1.0


@pytest.fixture(scope="module")
def legacy_reference(legacy_imported_twice: dict, tmp_path_factory: pytest.TempPathFactory) -> tuple[dict, float]:
    """The state after an uninterrupted import of the real legacy datastore, and how long it took.

    The run's shared import serves (:func:`eee_digest.import_twice`): its second, unchanged import
    adds none of what the state compares (tests/pipeline/test_legacy_eee.py), and the time of its
    first import plus the command's start is what an uninterrupted ``import-eee`` takes."""
    db = copy_warehouse(legacy_imported_twice["db"], tmp_path_factory.mktemp("legacy-ref"))
    return _state(db), legacy_imported_twice["seconds"] + CLI_START_S


@pytest.mark.slow
def test_kill_9_during_a_large_import(shared: Path, tmp_path: Path, legacy_reference, figures) -> None:
    reference, took = legacy_reference
    rng = random.Random(SEED)
    report = []
    for trial in range(TRIALS):
        db = tmp_path / f"t{trial}" / "w.duckdb"
        db.parent.mkdir()
        raw = db.with_name("w.raw")
        at = rng.uniform(0.2, 0.9) * took
        code = _kill_at(_cli("--db", str(db), "import-eee", str(shared / LEGACY), "--skip-validation"), at)
        left = len(_temporary_files(raw))
        state = _state(db) if db.exists() else {}
        # every collection holds all of its run or none of it
        partial = {k: v for k, v in state.items() if v[:4] != reference[k][:4] and v[:4] != (0, 0, 0, 0)}
        loaded = sum(v[:4] == reference[k][:4] and v[0] > 0 for k, v in state.items())
        if db.exists():
            _checks(db)
        rerun = subprocess.run(
            _cli("--db", str(db), "import-eee", str(shared / LEGACY), "--skip-validation"),
            capture_output=True,
            text=True,
            check=False,
        )
        after = _state(db)
        consistent = not partial and rerun.returncode in (0, 1) and after == reference and not _temporary_files(raw)
        figures.kill_trials["import"] += 1
        figures.kill_consistent["import"] += consistent
        report.append(
            f"trial {trial}: killed at {at:.1f}s (exit {code}), {loaded}/{len(reference)} collections in, "
            f"{left} temporary file(s) left then swept, rerun exit {rerun.returncode}, consistent={consistent}"
        )
        assert not partial, f"trial {trial}: collections with part of a run: {partial}"
        assert after == reference, f"trial {trial}: the rerun did not reach the uninterrupted state"
        assert not _temporary_files(raw)
        shutil.rmtree(db.parent)
    print("\n".join(report))
    assert sum("exit -9" in line for line in report) >= TRIALS // 2, "most trials must really be killed mid-run"


def _nudged_aa(body: bytes) -> bytes:
    """Night 2 of the AA board: 40 configurations' GPQA value moves by 0.001 (new values, same rows)."""
    rows = list(csv.reader(io.StringIO(body.decode())))
    col = rows[0].index("gpqa")
    changed = 0
    for row in rows[1:]:
        if row[col] and changed < 40:
            row[col] = repr(min(1.0, float(row[col]) + 0.001))
            changed += 1
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _nudged_epoch(folder: Path) -> bytes:
    """Night 2 of the Epoch export: the same zip with GPQA Diamond's first scores nudged."""
    import zipfile

    night = epoch_zip(folder)
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(night)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            data = src.read(info)
            if info.filename == "gpqa_diamond.csv":
                data = data.replace(b",0.", b",0.0", 10)
            dst.writestr(info, data)
    return out.getvalue()


@pytest.fixture(scope="module")
def nights(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple]:
    """A warehouse after night 1 of both pinned sources, the mirror of night 2, and both states."""
    root = tmp_path_factory.mktemp("crash-refresh")
    aa = (shared / AA_CSV).read_bytes()
    night1 = {EPOCH_URL: epoch_zip(shared / EPOCH_DIR), AA_PAGE_URL: aa}
    build_mirror(root / "one" / "m", night1)
    build_mirror(root / "two" / "m", {EPOCH_URL: _nudged_epoch(shared / EPOCH_DIR), AA_PAGE_URL: _nudged_aa(aa)})
    with serve(static_dir=root / "one") as one, serve(static_dir=root / "two") as two:
        base = root / "base" / "w.duckdb"
        base.parent.mkdir()
        cmd = ["refresh", "--source", "epoch-benchmarks", "--source", "artificial-analysis", "--skip-validation"]
        assert subprocess.run(_cli("--db", str(base), *cmd, "--mirror", f"{one.url}/m"), check=False).returncode == 0
        ref = root / "ref" / "w.duckdb"
        shutil.copytree(base.parent, ref.parent)
        start = time.monotonic()
        assert subprocess.run(_cli("--db", str(ref), *cmd, "--mirror", f"{two.url}/m"), check=False).returncode == 0
        took = time.monotonic() - start
        yield base, _state(base, "v_score_current"), _state(ref, "v_score_current"), cmd, f"{two.url}/m", took


@pytest.mark.slow
def test_kill_9_during_a_refresh(tmp_path: Path, nights, figures) -> None:
    base, old, new, cmd, mirror, took = nights
    assert all(old[k] != new[k] for k in old)  # night 2 really changes both sources' values
    rng = random.Random(SEED + 1)
    report = []
    for trial in range(TRIALS):
        folder = tmp_path / f"t{trial}"
        shutil.copytree(base.parent, folder)
        db = folder / "w.duckdb"
        at = rng.uniform(0.4, 1.0) * took  # the first second is the interpreter starting
        code = _kill_at(_cli("--db", str(db), *cmd, "--mirror", mirror), at)
        state = _state(db, "v_score_current")
        torn = {k: v for k, v in state.items() if v not in (old.get(k), new.get(k))}
        _checks(db)
        rerun = subprocess.run(_cli("--db", str(db), *cmd, "--mirror", mirror), capture_output=True, check=False)
        after = _state(db, "v_score_current")
        consistent = not torn and rerun.returncode == 0 and after == new and not _temporary_files(folder / "w.raw")
        figures.kill_trials["refresh"] += 1
        figures.kill_consistent["refresh"] += consistent
        which = {k: "old" if v == old.get(k) else "new" for k, v in state.items()}
        report.append(f"trial {trial}: killed at {at:.1f}s (exit {code}): {which}, consistent={consistent}")
        assert not torn, f"trial {trial}: a source holds neither its old nor its new state: {torn}"
        assert after == new, f"trial {trial}: the rerun did not reach night 2"
        assert not _temporary_files(folder / "w.raw")
        shutil.rmtree(folder)
    print("\n".join(report))
