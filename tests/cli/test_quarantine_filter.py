"""'quarantine list --source/--stage' counts only what it was asked for (on the real Epoch + AA warehouse)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
from clirunner import CliRunner

from evalhouse.cli import app

runner = CliRunner()


def _counts(db: Path) -> dict[tuple[str, str], int]:
    con = duckdb.connect(str(db), read_only=True)
    try:
        rows = con.execute("SELECT source_key, stage, count(*) FROM quarantine GROUP BY ALL").fetchall()
    finally:
        con.close()
    return {(s, st): n for s, st, n in rows}


def test_the_counts_are_filtered_like_the_rows(real_warehouse: Path) -> None:
    counts = _counts(real_warehouse)
    quarantining = {s for s, _ in counts}
    assert "epoch-benchmarks" in quarantining  # the Epoch export quarantines rows (it names no score)
    every = ["--db", str(real_warehouse), "quarantine", "list", "--json", "--limit", "5"]
    for source in ("epoch-benchmarks", "artificial-analysis"):
        report = json.loads(runner.invoke(app, [*every, "--source", source]).stdout)
        assert {(c["source"], c["stage"]): c["n"] for c in report["counts"]} == {
            k: n for k, n in counts.items() if k[0] == source
        }
        assert all(r["source_key"] == source for r in report["rows"])
    stage = min(st for s, st in counts if s == "epoch-benchmarks")
    staged = json.loads(runner.invoke(app, [*every, "--stage", stage]).stdout)
    assert {c["stage"] for c in staged["counts"]} == {stage}
    text = runner.invoke(app, ["--db", str(real_warehouse), "quarantine", "list", "--source", "artificial-analysis"])
    assert text.exit_code == 0 and "epoch-benchmarks" not in text.output
