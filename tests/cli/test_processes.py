"""What users see from real processes: readers during a write, Ctrl-C, output in a log file.

Each test runs the installed ``evalhouse`` command in subprocesses (stdout and stderr are pipes,
as in cron), on a copy of the real warehouse (Epoch + AA through the real refresh over loopback).
Nothing here measures time: a writer is paused with SIGSTOP at a known point (its lock file says
it is inside a write transaction), so "a reader arrives during the load" holds by construction.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from realwarehouse import copy_warehouse

EVALHOUSE = Path(sys.executable).with_name("evalhouse")
POLL_S = 0.01
GIVE_UP_S = 300  # a bound on polling loops only; no assertion depends on how long anything takes


def _as_at_a_terminal() -> None:
    """Ctrl-C reaches the command as it does at a terminal: a shell's background job (how a CI
    runner may start the suite) ignores SIGINT, and a child would inherit that."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _start(*args: str) -> subprocess.Popen[str]:
    env = {**os.environ, "COLUMNS": "80"}  # what cron gives: rich would cut tables at 80 columns
    return subprocess.Popen(
        [str(EVALHOUSE), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        preexec_fn=_as_at_a_terminal,  # noqa: PLW1509 - the suite starts no threads that fork
    )


def _run(*args: str) -> subprocess.CompletedProcess[str]:
    proc = _start(*args)
    stdout, stderr = proc.communicate(timeout=GIVE_UP_S)
    return subprocess.CompletedProcess(proc.args, proc.returncode, stdout, stderr)


def _wait_for(condition, what: str, proc: subprocess.Popen[str] | None = None) -> None:
    deadline = time.monotonic() + GIVE_UP_S
    while not condition():
        if proc is not None and proc.poll() is not None:
            pytest.fail(f"the process ended before {what}: {proc.communicate()}")
        if time.monotonic() > deadline:
            pytest.fail(f"gave up waiting for {what}")
        time.sleep(POLL_S)


def _lock_note(db: Path) -> dict:
    try:
        text = db.with_name(db.name + ".lock").read_text()
        return json.loads(text) if text.strip() else {}
    except (OSError, json.JSONDecodeError):
        return {}


def _scores(db: Path) -> int:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT count(*) FROM score").fetchone()[0]


@pytest.fixture
def db(real_warehouse: Path, tmp_path: Path) -> Path:
    return copy_warehouse(real_warehouse, tmp_path / "w")


def _paused_in_load(db: Path, tree: Path) -> subprocess.Popen[str]:
    """An import-eee stopped (SIGSTOP) inside a load transaction, after it had closed the
    database once to read a collection."""
    writer = _start("--db", str(db), "import-eee", str(tree), "--skip-validation")
    _wait_for(lambda: "reading collection" in _lock_note(db).get("doing", ""), "the import reads a collection", writer)
    _wait_for(lambda: _lock_note(db).get("doing") == "in a write transaction", "a load transaction", writer)
    writer.send_signal(signal.SIGSTOP)
    assert _lock_note(db)["pid"] == writer.pid
    return writer


def _end(writer: subprocess.Popen[str]) -> None:
    """Stop a paused import whose finishing the test does not look at (its warehouse is the test's
    own copy): the rest of the legacy corpus would load for nothing. The first test lets it finish."""
    writer.kill()
    writer.communicate(timeout=GIVE_UP_S)


def test_stats_during_an_import_waits_and_succeeds_when_the_load_ends(db: Path, shared: Path) -> None:
    before = _scores(db)
    writer = _paused_in_load(db, shared / "datasets" / "eee-datastore-legacy")
    try:
        reader = _start("--db", str(db), "--wait", "600", "stats", "--json")
        # the reader says once whom it waits for, then keeps waiting while the writer is stopped
        lines: list[str] = []
        _wait_for(
            lambda: lines.append(reader.stderr.readline()) or "waits up to 600 s" in lines[-1],
            "the reader's message",
            reader,
        )
        assert f"pid {writer.pid}" in lines[-1] and "import-eee" in lines[-1] and "in a write transaction" in lines[-1]
        assert reader.poll() is None  # still waiting: the writer holds the database
    finally:
        writer.send_signal(signal.SIGCONT)
    stdout, stderr = reader.communicate(timeout=GIVE_UP_S)
    assert reader.returncode == 0, stderr
    stats = json.loads(stdout)
    assert stats["scores"] > before  # it read the warehouse after the paused load committed
    writer.communicate(timeout=GIVE_UP_S)
    assert writer.returncode in (0, 1)  # 1: the legacy corpus has quarantined placeholders
    assert _scores(db) >= stats["scores"]


def test_a_reader_that_waits_too_long_names_the_writer(db: Path, shared: Path) -> None:
    writer = _paused_in_load(db, shared / "datasets" / "eee-datastore-legacy")
    try:
        result = _run("--db", str(db), "--wait", "0.5", "stats")
    finally:
        _end(writer)
    assert result.returncode == 1, result
    message = result.stderr
    assert f"warehouse is locked by pid {writer.pid}" in message and "import-eee" in message
    assert "in a write transaction" in message and "--wait" in message
    assert "Traceback" not in message


def test_a_second_writer_is_still_refused_while_the_first_fetches(db: Path, shared: Path) -> None:
    writer = _paused_in_load(db, shared / "datasets" / "eee-datastore-legacy")
    try:
        result = _run("--db", str(db), "migrate")
    finally:
        _end(writer)
    assert result.returncode == 1 and f"warehouse is locked by pid {writer.pid}" in result.stderr


def _stopped_while_writing(db: Path, target: Path) -> tuple[subprocess.Popen[str], Path] | None:
    """A ``snapshot create`` stopped (SIGSTOP) while its staging folder holds files, or None when
    it got past moving the folder into place before the stop reached it (a fast snapshot can)."""
    proc = _start("--db", str(db), "snapshot", "create", str(target))
    staging = target.with_name(f".{target.name}.partial-{proc.pid}")
    _wait_for(lambda: staging.is_dir() and any(staging.iterdir()), "the snapshot starts writing", proc)
    proc.send_signal(signal.SIGSTOP)
    if staging.is_dir():
        return proc, staging
    proc.send_signal(signal.SIGCONT)
    proc.communicate(timeout=GIVE_UP_S)
    return None


def test_ctrl_c_in_snapshot_create_says_interrupted_and_leaves_nothing(db: Path, tmp_path: Path) -> None:
    # Ctrl-C reaches the command while it is stopped mid-write, and is handled when it continues:
    # "while it writes" holds by construction, not by how fast the poll is.
    for attempt in range(10):
        target = tmp_path / f"snap{attempt}"
        stopped = _stopped_while_writing(db, target)
        if stopped is not None:
            break
        shutil.rmtree(target)
        with duckdb.connect(str(db)) as con:
            con.execute("DELETE FROM snapshot")
    else:
        pytest.fail("snapshot create finished before it could be stopped, ten times")
    proc, staging = stopped
    proc.send_signal(signal.SIGINT)
    proc.send_signal(signal.SIGCONT)
    stdout, stderr = proc.communicate(timeout=GIVE_UP_S)
    assert proc.returncode == 130, (stdout, stderr)
    assert stderr.strip().splitlines()[-1] == "interrupted"
    assert "Traceback" not in stderr and stdout == ""
    assert not target.exists() and not staging.exists()
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM snapshot").fetchone()[0] == 0


def test_logs_get_whole_values(db: Path, tmp_path: Path, shared: Path) -> None:
    """refresh, stats, dates and quarantine list into a pipe: no value cut to '…'."""
    from evalhouse.ingest.mirror import mirror_relpath
    from evalhouse.ingest.pinned import mirror_from_shared
    from evalhouse.ingest.sources import lexam

    mirror = tmp_path / "mirror"
    mirror_from_shared(shared, mirror)
    # the mirror holds a page of lexam's host folder but not the board: a failed run, not a skipped one
    beside = mirror / mirror_relpath(lexam.URL).parent / "elsewhere.html"
    beside.parent.mkdir(parents=True, exist_ok=True)
    beside.write_text("<html></html>")
    outputs = {
        "refresh": _run("--db", str(db), "refresh", "--source", "epoch-benchmarks", "--mirror", str(mirror)),
        "stats": _run("--db", str(db), "stats"),
        "dates": _run("--db", str(db), "dates", "--model", "gpt-4o-2024-08-06"),
        "quarantine list": _run("--db", str(db), "quarantine", "list", "--limit", "100000"),
        "failed refresh": _run("--db", str(db), "refresh", "--source", "lexam", "--mirror", str(mirror)),
    }
    for name, result in outputs.items():
        assert result.returncode in (0, 1), (name, result.stderr)
        assert result.stdout.strip(), name
        assert "…" not in result.stdout and "…" not in result.stderr, (name, result.stdout[:2000])
        assert "[/" not in result.stdout + result.stderr, (name, "console markup printed literally")
    failed = outputs["failed refresh"]
    assert failed.returncode == 1 and "lexam: every page is missing" in failed.stdout + failed.stderr
    # the long values a nightly log exists to show are there whole
    assert "epoch-benchmarks" in outputs["refresh"].stdout and "artificial-analysis" in outputs["stats"].stdout
    assert "openai/gpt-4o|date=2024-08-06" in outputs["dates"].stdout
    assert "https://" in outputs["dates"].stdout
    with duckdb.connect(str(db), read_only=True) as con:
        reason = con.execute("SELECT reason FROM quarantine ORDER BY length(reason) DESC LIMIT 1").fetchone()[0]
    assert reason in outputs["quarantine list"].stdout


def test_a_reader_names_a_holder_that_is_not_evalhouse(db: Path) -> None:
    holder = duckdb.connect(str(db))  # this test process, outside evalhouse's writer lock
    try:
        result = _run("--db", str(db), "--wait", "0.3", "stats")
    finally:
        holder.close()
    assert result.returncode == 1
    assert f"pid {os.getpid()} (not an evalhouse writer)" in result.stderr and "Traceback" not in result.stderr
    assert _run("--db", str(db), "stats").returncode == 0  # and once it is closed, the reader gets in
