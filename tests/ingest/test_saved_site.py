"""'evalhouse ingest SOURCE DIR' with a saved copy of a source's site: the recorded Swallow site in
../shared (byte-exact gh-pages files) read as the live site is crawled — start pages, then the data
files and model pages they link to — and a folder that holds none of the start pages refused with
what to pass. Cells are counted from the data files themselves (chompjs, not the parser).
"""

from __future__ import annotations

import json
from pathlib import Path

import chompjs
from clirunner import CliRunner

from evalhouse.cli import app

runner = CliRunner()
DATA_FILES = ("swallow_leaderboard_pre_en.js", "swallow_leaderboard_post_en.js")


def _cells(site: Path) -> int:
    total = 0
    for name in DATA_FILES:
        text = (site / name).read_text(encoding="utf-8")
        models = chompjs.parse_js_object(text[text.index("g_models") :].split("=", 1)[1])
        total += sum(len(tasks) for model in models.values() for tasks in (model.get("results") or {}).values())
    return total


def test_a_saved_copy_of_the_site_is_read_like_the_live_one(shared: Path, tmp_path: Path) -> None:
    site = shared / "formats" / "swallow-leaderboard" / "site"
    db = str(tmp_path / "w.duckdb")
    result = runner.invoke(app, ["--db", db, "ingest", "swallow-leaderboard", str(site), "--json"])
    assert result.exit_code == 0, result.output
    run = json.loads(result.stdout)
    # the copy holds 6 of the model pages the index pages link to: the others are missing pages
    assert run["status"] == "partial" and "pages missing (HTTP 404)" in run["error"]
    scores = run["scores"]
    assert scores["loaded"] + scores["quarantined"] + scores["in_duplicate_records"] == _cells(site)
    assert scores["loaded"] >= 0.99 * _cells(site)
    sql = runner.invoke(
        app,
        ["--db", db, "sql", "SELECT trigger, count(DISTINCT r.url) FROM ingest_run JOIN raw_snapshot r USING (run_id)"
         " GROUP BY ALL", "--json"],
    )  # fmt: skip
    (row,) = json.loads(sql.stdout)
    saved = [p for p in site.iterdir() if p.name.endswith((".en.html", ".js"))]
    assert row["trigger"] == "ingest" and row["count(DISTINCT r.url)"] == len(saved)  # every saved page read once


def test_a_folder_without_the_sites_start_pages_says_what_to_pass(tmp_path: Path) -> None:
    (tmp_path / "notes.txt").write_text("not a saved site")
    result = runner.invoke(app, ["--db", str(tmp_path / "w.duckdb"), "ingest", "swallow-leaderboard", str(tmp_path)])
    assert result.exit_code == 1
    text = " ".join(result.output.split())
    assert "no such file" not in text
    assert "without any of swallow-leaderboard's start pages (index-pre.en.html, index-post.en.html)" in text
    assert "give the folder of a saved copy of its site" in text
    assert text.startswith("ingest swallow-leaderboard")  # the table is titled by what ran
