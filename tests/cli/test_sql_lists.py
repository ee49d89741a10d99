"""'evalhouse sql' writes a list in a pipe (TSV) the way the terminal shows it, never CSV-quoted JSON."""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

from clirunner import CliRunner

from evalhouse.cli import app

runner = CliRunner()
QUERY = "SELECT ['a', 'b c'] AS names, {'k': 1, 'day': DATE '2024-01-02'} AS facts, [0.5, NULL] AS xs, 'plain' AS t"


def test_lists_in_tsv_read_as_the_terminal_shows_them_and_csv_keeps_json(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    assert runner.invoke(app, ["--db", db, "migrate"]).exit_code == 0
    tsv = runner.invoke(app, ["--db", db, "sql", QUERY])  # stdout is not a terminal: TSV
    assert tsv.exit_code == 0, tsv.output
    header, row = tsv.stdout.splitlines()
    assert header.split("\t") == ["names", "facts", "xs", "t"]
    assert row.split("\t") == ["['a', 'b c']", "{'k': 1, 'day': '2024-01-02'}", "[0.5, None]", "plain"]
    assert '"' not in row  # nothing for a reader to unquote
    as_csv = runner.invoke(app, ["--db", db, "sql", QUERY, "--csv"])
    (parsed,) = list(csv.DictReader(io.StringIO(as_csv.stdout)))
    assert json.loads(parsed["names"]) == ["a", "b c"] and json.loads(parsed["facts"]) == {"k": 1, "day": "2024-01-02"}
