"""Secrets in a --mirror URL (a token in its query, a password or a bare token as its userinfo) and
in an ingest URL never reach a table, the raw store or the output - also when the fetch fails."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirunner import CliRunner
from httpserver import Reply, serve

from evalhouse.cli import app
from evalhouse.common.redaction import REDACTED, redact_stored, redact_url, url_secrets
from evalhouse.warehouse.db import Warehouse

runner = CliRunner()
TOKEN = "tok-61e0c9d2b7"


def _everything(db: Path) -> str:
    with Warehouse.open(db, read_only=True) as wh:
        tables = [r[0] for r in wh.con.execute("SELECT table_name FROM duckdb_tables()").fetchall()]
        rows = [wh.con.execute(f'SELECT CAST(list(COLUMNS(*)) AS VARCHAR) FROM "{t}"').fetchall() for t in tables]
    raw = db.with_name(db.stem + ".raw")
    files = [p.read_bytes().decode("utf-8", "replace") for p in raw.rglob("*") if p.is_file()] if raw.is_dir() else []
    return json.dumps(rows, default=str) + "".join(files)


@pytest.mark.parametrize(
    "mirror",
    [
        "http://127.0.0.1:9/m?token={t}",
        "http://evalhouse:{t}@127.0.0.1:9/m",
        "http://{t}@127.0.0.1:9/m",
        "https://127.0.0.1:9/m#access_token={t}",
    ],
)
def test_a_mirror_url_secret_is_never_stored_or_printed(tmp_path: Path, mirror: str, figures) -> None:
    db = tmp_path / "w.duckdb"
    args = ["--db", str(db), "refresh", "--source", "aider-polyglot", "--source", "lexam", "--skip-validation"]
    result = runner.invoke(app, [*args, "--mirror", mirror.format(t=TOKEN), "--deadline", "5", "--json"])
    assert result.exit_code == 1  # nothing listens there: both sources fail, with the reason
    runs = json.loads(result.stdout)["runs"]
    assert all(r["status"] == "failed" and r["error"] for r in runs)
    found = TOKEN in result.output or TOKEN in _everything(db)
    figures.fault("secrets", f"mirror {mirror.split('//')[1][:18]}…", not found)
    assert not found


def test_an_ingest_url_secret_is_never_stored_or_printed(tmp_path: Path, figures) -> None:
    with serve({"/board.yml": Reply(500, b"down")}) as srv:
        url = f"{srv.url}/board.yml?api_key={TOKEN}&key={TOKEN}x&sig={TOKEN}y"
        result = runner.invoke(
            app, ["--db", str(tmp_path / "w.duckdb"), "ingest", "aider-polyglot", url, "--skip-validation", "--json"]
        )
    assert result.exit_code == 1
    found = TOKEN in result.output or TOKEN in _everything(tmp_path / "w.duckdb")
    figures.fault("secrets", "ingest URL with api_key, key and sig", not found)
    assert not found and "api_key=[REDACTED]" in result.output


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("https://TOKEN@h.example/p", f"https://{REDACTED}@h.example/p"),
        (
            "https://u:pw@h.example/p?access_token=a&x=1",
            f"https://u:{REDACTED}@h.example/p?access_token={REDACTED}&x=1",
        ),
        ("https://h.example/p?password=a&secret=b", f"https://h.example/p?password={REDACTED}&secret={REDACTED}"),
    ],
)
def test_redact_url_covers_userinfo_and_query(url: str, expected: str) -> None:
    assert redact_url(url) == expected


def test_a_secret_quoted_without_its_url_is_scrubbed_too() -> None:
    details = {"mirror": "http://bot:hunter2-long@127.0.0.1/m"}
    error = "ValueError: invalid hostname: bot:hunter2-long@127.0.0.1"
    assert "hunter2-long" not in redact_stored(error, url_secrets([details, error]))
