"""Decompression bombs and a 400 MB line, through the real command line, with its memory measured.

An Inspect ``.eval`` of 7 MB holding 8 members of 900 MB, and an Epoch export of 7 MB holding 120
CSVs of 60 MB (each member under its own cap, the zip under the 64 MB body cap, so a nightly
refresh fetches it), are refused by the archive budget before anything is inflated; a
``_samples.jsonl`` line of 400 MB is refused alone (its neighbour line and its record load). The
process that reads each stays under 1 GiB. The bombs are built in the test's folder in seconds
(:mod:`bombs`); each process runs under an address-space limit, so a regression fails with a
MemoryError instead of taking the machine's memory.
"""

from __future__ import annotations

import io
import json
import os
import resource
import sys
import uuid
import zipfile
from pathlib import Path

import duckdb
import pytest
from bombs import MiB, epoch_zip, inspect_eval, run_measured, samples_line
from eee_records import eee_record, write_file

from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.pinned import EPOCH_DIR, EPOCH_URL

PEAK_LIMIT = 1024 * MiB  # what reading any of the bombs may cost the process, at most
ADDRESS_LIMIT = 3 * 1024 * MiB  # the child's address space: a regression dies here, not the machine


def _limit() -> None:
    resource.setrlimit(resource.RLIMIT_AS, (ADDRESS_LIMIT, ADDRESS_LIMIT))


def _cli(db: Path, *args: str) -> tuple[int, str, str, int]:
    return run_measured([sys.executable, "-m", "evalhouse", "--db", str(db), *args], preexec_fn=_limit)


def _record(figures, name: str, peak: int, ok: bool, why: str) -> None:
    figures.peak_memory[name] = peak
    figures.fault("bombs", name, ok, why)


def test_an_inspect_eval_bomb_is_refused_by_the_archive_budget(tmp_path: Path, figures) -> None:
    path = tmp_path / "bomb.eval"
    path.write_bytes(inspect_eval())
    code, out, err, peak = _cli(tmp_path / "w.duckdb", "ingest", "inspect-log", str(path), "--json")
    run = json.loads(out) if out.strip() else {}
    error = run.get("error") or ""
    ok = code == 1 and run.get("status") == "failed" and "archive budget" in error and "Traceback" not in err
    ok = ok and "$EVALHOUSE_ARCHIVE_BYTES" in error and peak <= PEAK_LIMIT
    _record(figures, "Inspect .eval, 7 MB -> 8 x 900 MB", peak, ok, f"exit {code}, {peak / MiB:.0f} MiB, {error}")
    assert ok, (code, peak / MiB, error, err[-2000:])


def test_an_epoch_zip_bomb_is_refused_on_the_nightly_refresh(shared: Path, tmp_path: Path, figures) -> None:
    header = (shared / EPOCH_DIR / "gpqa_diamond.csv").read_bytes().split(b"\n", 1)[0] + b"\n"
    body = epoch_zip(header)
    assert len(body) < 64 * MiB  # under the HTTP body cap: the refresh fetches it
    mirror = tmp_path / "mirror"
    target = mirror / mirror_relpath(EPOCH_URL)
    target.parent.mkdir(parents=True)
    target.write_bytes(body)
    db = tmp_path / "w.duckdb"
    code, out, err, peak = _cli(db, "refresh", "--source", "epoch-benchmarks", "--mirror", str(mirror), "--json")
    (run,) = json.loads(out)["runs"] if out.strip() else [{}]
    error = run.get("error") or ""
    ok = code == 1 and run.get("status") == "failed" and "archive budget" in error and peak <= PEAK_LIMIT
    _record(figures, "Epoch zip, 7 MB -> 120 x 60 MB", peak, ok, f"exit {code}, {peak / MiB:.0f} MiB, {error}")
    assert ok, (code, peak / MiB, error, err[-2000:])


def test_a_400_mb_samples_line_is_refused_alone(tmp_path: Path, figures) -> None:
    tree = tmp_path / "tree"
    record = eee_record("org/alpha", {"bench_a": 0.6}, evaluation_id="s/alpha/1")
    rel = f"s/org/alpha/{uuid.uuid4()}"
    write_file(tree, f"{rel}.json", record)
    samples = tree / "data" / f"{rel}_samples.jsonl"
    samples_line(samples)
    good = {
        "schema_version": "0.3.0",
        "evaluation_id": "s/alpha/1",
        "model_id": "org/alpha",
        "evaluation_name": "bench_a",
        "sample_id": "2",
        "interaction_type": "single_turn",
        "input": {"raw": "2+2?", "reference": ["4"]},
        "output": {"raw": ["4"]},
        "answer_attribution": [],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    with samples.open("ab") as f:
        f.write(json.dumps(good).encode() + b"\n")
    db = tmp_path / "w.duckdb"
    code, _out, err, peak = _cli(db, "import-eee", str(tree), "--json", "--skip-validation")
    assert "Traceback" not in err, err[-3000:]
    with duckdb.connect(str(db), read_only=True) as con:
        refused = con.execute("SELECT locator, reason FROM quarantine ORDER BY locator").fetchall()
        loaded = con.execute("SELECT count(*) FROM evaluation").fetchone()[0]
    line = f"data/{rel}_samples.jsonl:line 1"
    ok = code == 1 and loaded == 1 and [loc for loc, _ in refused] == [line] and peak <= PEAK_LIMIT
    ok = ok and "line budget" in refused[0][1] and "$EVALHOUSE_LINE_BYTES" in refused[0][1]
    _record(figures, "_samples.jsonl, one 400 MB line", peak, ok, f"exit {code}, {peak / MiB:.0f} MiB, {refused}")
    assert ok, (code, peak / MiB, refused, loaded, err[-2000:])


@pytest.mark.parametrize(
    ("env", "value", "words"),
    [
        ("EVALHOUSE_ARCHIVE_BYTES", "1MB", "would inflate .* to 1,200,000 .* the 1,000,000 bytes archive budget"),
        ("EVALHOUSE_ARCHIVE_LINES", "1000", "line archive budget"),
    ],
)
def test_the_archive_budgets_are_configurable(tmp_path: Path, env: str, value: str, words: str, monkeypatch) -> None:
    from evalhouse.ingest.budgets import read_zip
    from evalhouse.ingest.source import ParseError

    out = io.BytesIO()
    with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as zf:
        for name in ("a.csv", "b.csv"):
            zf.writestr(name, b"model,score\n" * 50_000)  # 600 KB and 50,000 lines each
    body = out.getvalue()
    assert [name for name, _ in read_zip(body)] == ["a.csv", "b.csv"]  # within the defaults
    monkeypatch.setenv(env, value)
    with pytest.raises(ParseError, match=words):
        read_zip(body)


def test_a_samples_file_over_its_budget_is_refused_unread(tmp_path: Path, figures) -> None:
    path = tmp_path / f"{uuid.uuid4()}_samples.jsonl"
    path.write_bytes(b"{}\n" * 700_000)  # 2.1 MB, past a budget of 1 MB
    env = {**os.environ, "EVALHOUSE_SAMPLES_BYTES": "1MB"}
    args = ["--db", str(tmp_path / "w.duckdb"), "ingest", "eee-instances", str(path), "--json"]
    code, out, err, _peak = run_measured([sys.executable, "-m", "evalhouse", *args], preexec_fn=_limit, env=env)
    run = json.loads(out) if out.strip() else {}
    error = run.get("error") or ""
    ok = code == 1 and run.get("status") == "failed" and "more than the 1,000,000 bytes samples-file budget" in error
    figures.fault("bombs", "samples file past its budget (ingest)", ok, f"exit {code}: {error}")
    assert ok, (code, error, err[-2000:])
