"""``ingest`` judges a payload as the nightly refresh does, and an offline night fails at once.

A pinned payload whose values were rescaled ×100 is refused by the drift guards (it once loaded
as ``partial`` with 45% quarantined and exit 0); one rescaled ÷100 after a good load fails as a
scale change, leaves the previous values, and loads only when a person says ``--accept-drift``
(a recorded decision). A host name that does not resolve is not retried: the first request to it
fails once, the source's next requests to it fail without asking again.
"""

from __future__ import annotations

import json
import socket
import subprocess
import sys
import time
from pathlib import Path

import duckdb
import pytest
from faultserver import rescaled

from evalhouse.ingest.fetch import FetchError
from evalhouse.ingest.http import HttpClient
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

AIDER = "datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml"


def _ingest(db: Path, path: Path, *extra: str) -> tuple[int, dict, str]:
    proc = subprocess.run(
        [sys.executable, "-m", "evalhouse", "--db", str(db), "ingest", "aider-polyglot", str(path), "--json", *extra],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    return proc.returncode, json.loads(proc.stdout), proc.stderr


def _values(db: Path) -> list[tuple]:
    with duckdb.connect(str(db), read_only=True) as con:
        return con.execute("SELECT score_id, raw_value FROM score ORDER BY 1").fetchall()


def test_ingest_of_values_rescaled_x100_fails_like_the_refresh(shared: Path, tmp_path: Path, figures) -> None:
    path = tmp_path / "polyglot_leaderboard.yml"
    path.write_bytes(rescaled((shared / AIDER).read_bytes(), 100.0))
    db = tmp_path / "w.duckdb"
    code, run, _ = _ingest(db, path)
    with duckdb.connect(str(db), read_only=True) as con:
        quarantined = con.execute("SELECT count(*) FROM quarantine").fetchone()[0]
        guard = con.execute("SELECT details->>'guard' FROM ingest_run WHERE run_id = ?", [run["run_id"]]).fetchone()[0]
    ok = code == 1 and run["status"] == "failed" and guard in ("bounds", "mass_quarantine")
    ok = ok and _values(db) == [] and quarantined == 0  # nothing loaded, nothing half-quarantined
    figures.fault("ingest guards", "aider values ×100, first ingest", ok, f"exit {code} {run['status']} {run['error']}")
    assert ok, (code, run, guard, quarantined)


def test_a_scale_change_after_a_good_ingest_fails_until_a_person_accepts_it(
    shared: Path, tmp_path: Path, figures
) -> None:
    db, good = tmp_path / "w.duckdb", tmp_path / "good" / "polyglot_leaderboard.yml"
    good.parent.mkdir()
    good.write_bytes((shared / AIDER).read_bytes())
    code, run, _ = _ingest(db, good)
    assert code == 0 and run["status"] == "completed", run
    before = _values(db)
    shrunk = tmp_path / "shrunk" / "polyglot_leaderboard.yml"
    shrunk.parent.mkdir()
    shrunk.write_bytes(rescaled(good.read_bytes(), 0.01))
    code, run, _ = _ingest(db, shrunk)
    ok = code == 1 and run["status"] == "failed" and run["error"].startswith("scale changed: median ")
    ok = ok and "ingest aider-polyglot PATH --accept-drift" in run["error"] and _values(db) == before
    figures.fault("ingest guards", "aider values ÷100 after a good ingest", ok, f"exit {code} {run['error']}")
    assert ok, run
    code, run, _ = _ingest(db, shrunk, "--accept-drift")
    assert code == 0 and run["status"] in ("completed", "partial"), run
    with duckdb.connect(str(db), read_only=True) as con:
        waived = con.execute(
            "SELECT detail FROM curation_decision WHERE kind = 'accepted_drift' AND run_id = ?", [run["run_id"]]
        ).fetchall()
    assert any("scale changed" in d for (d,) in waived)


def test_files_of_one_source_are_each_compared_with_themselves(shared: Path, tmp_path: Path) -> None:
    """Epoch's hub publishes one CSV per benchmark: a smaller CSV ingested after a larger one is
    another payload, not a shrink; the same CSV shrunk is."""
    hub = shared / "datasets" / "epoch-benchmarks-2025-11"
    if not hub.is_dir():
        pytest.skip(f"{hub} is absent")
    db = tmp_path / "w.duckdb"
    sizes = {n: sum(1 for _ in (hub / n).open()) for n in ("gpqa_diamond.csv", "math_level_5.csv")}
    assert sizes["gpqa_diamond.csv"] > sizes["math_level_5.csv"] * 1.1  # the second is >10% smaller

    def ingest(path: Path) -> tuple[int, dict]:
        proc = subprocess.run(
            [sys.executable, "-m", "evalhouse", "--db", str(db), "ingest", "epoch-benchmarks", str(path), "--json"],
            capture_output=True,
            text=True,
            timeout=600,
            check=False,
        )
        assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
        return proc.returncode, json.loads(proc.stdout)

    for name in sizes:
        code, run = ingest(hub / name)
        assert code == 0 and run["status"] == "completed", run
    lines = (hub / "gpqa_diamond.csv").read_text().splitlines(keepends=True)
    shrunk = tmp_path / "shrunk" / "gpqa_diamond.csv"
    shrunk.parent.mkdir()
    shrunk.write_text("".join(lines[: len(lines) // 2]))
    code, run = ingest(shrunk)
    assert code == 1 and run["status"] == "failed" and run["error"].startswith("rows dropped"), run


def _offline(monkeypatch) -> list[str]:
    """Every name lookup fails as it does without a network; the names asked are listed."""
    asked: list[str] = []

    def getaddrinfo(host, *args, **kwargs):
        asked.append(host)
        raise socket.gaierror(socket.EAI_AGAIN, "Temporary failure in name resolution")

    monkeypatch.setattr(socket, "getaddrinfo", getaddrinfo)
    return asked


def test_a_name_that_does_not_resolve_is_asked_once(monkeypatch, figures) -> None:
    asked = _offline(monkeypatch)
    slept: list[float] = []
    with HttpClient(sleep=slept.append, trust_env=False) as client:
        with pytest.raises(FetchError) as first:
            client.fetch("https://leaderboard.example.org/a.json")
        with pytest.raises(FetchError) as second:
            client.fetch("https://leaderboard.example.org/b.json")
    ok = first.value.attempts == 1 and "cannot resolve host 'leaderboard.example.org'" in str(first.value)
    ok = ok and "not retried" in str(first.value) and second.value.attempts == 0
    ok = ok and "not asked again" in str(second.value) and asked == ["leaderboard.example.org"] and slept == []
    figures.fault("ingest guards", "DNS failure: no retry, no second lookup", ok, f"{first.value}; {second.value}")
    assert ok, (str(first.value), str(second.value), asked, slept)


def test_an_offline_refresh_fails_each_source_at_once(monkeypatch, tmp_path: Path, figures) -> None:
    asked = _offline(monkeypatch)
    keys = ["aider-polyglot", "lmarena", "livebench", "vectara-hallucination-leaderboard"]
    options = R.RefreshOptions(client_factory=lambda m: HttpClient(mirror=m, trust_env=False))
    start = time.monotonic()
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        runs = R.refresh(wh, RawStore(tmp_path / "w.raw"), keys, options)
    took = time.monotonic() - start
    failed = [r for r in runs if r.status == "failed" and "cannot resolve host" in (r.error or "")]
    ok = len(failed) == len(keys) and took < 30 and all("no network?" in (r.error or "") for r in failed)
    ok = ok and len(asked) == len(keys)  # one lookup per source (a client serves one source's run)
    figures.fault("ingest guards", f"offline refresh of {len(keys)} sources", ok, f"{took:.1f} s, {asked}")
    assert ok, ([(r.source_key, r.status, r.error) for r in runs], took, asked)
