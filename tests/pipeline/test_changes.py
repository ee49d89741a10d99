"""What changed between two nights: two mirror replays of the Artificial Analysis Data API over
loopback HTTP, the second page an edited copy of the first (a model added, one removed, a value
moved), through 'evalhouse refresh' and 'evalhouse changes' (JSON and text), the run report each
refresh writes beside the warehouse, the row-drop guard refusing a board that lost too many models,
and 'stats' keeping the last load's quarantine in view after a quiet night.

The real page (tests/fixtures/artificial-analysis/SOURCE.md) is page 1 of 3; each night serves an
edited copy of it that says it is the last page, so the listing is whole. Expected figures are
counted from the served bytes, never from the parser; the recorded file stays byte for byte.
"""

from __future__ import annotations

import copy
import hashlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from clirunner import CliRunner
from httpserver import serve

from evalhouse.cli import app
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.sources import artificial_analysis as aa
from evalhouse.pipeline.changes import LATEST, reports_dir

PAGE1 = Path(__file__).resolve().parents[1] / "fixtures" / "artificial-analysis" / "language_models_free_page1.json"
PAGE1_SHA256 = "5c885c0073b698b694968ab973fbbe982030c61fbaa803fc70b5258648eeb12e"  # SOURCE.md
INDEX = "artificial_analysis_intelligence_index"
KEY = "artificial-analysis"
runner = CliRunner()


def _values(doc: dict[str, Any]) -> dict[tuple[str, str], float]:
    """``(AA model id, evaluation) -> value`` of every non-null evaluation value in a page."""
    return {
        (m["id"], name): v for m in doc["data"] for name, v in (m.get("evaluations") or {}).items() if v is not None
    }


def _last_page(doc: dict[str, Any]) -> dict[str, Any]:
    out = copy.deepcopy(doc)
    out["pagination"] = {**out["pagination"], "total_pages": 1, "has_more": False}
    return out


def _model(doc: dict[str, Any], slug: str) -> dict[str, Any]:
    (found,) = [m for m in doc["data"] if m["slug"] == slug]
    return found


@pytest.fixture
def night1() -> dict[str, Any]:
    return _last_page(json.loads(PAGE1.read_bytes()))


@pytest.fixture
def night2(night1: dict[str, Any]) -> dict[str, Any]:
    """Night 1 with GLM-4.5V gone, one model added and Gemini 3.5 Flash's intelligence index moved."""
    doc = copy.deepcopy(night1)
    doc["data"] = [m for m in doc["data"] if m["slug"] != "glm-4-5v"]
    added = copy.deepcopy(_model(doc, "gemini-3-5-flash"))
    added.update(id="edited-0000-new-model", name="Gemini Edited Flash (added)", slug="gemini-edited-flash")
    added["evaluations"] = {INDEX: 41.5, "artificial_analysis_coding_index": 33.0}
    doc["data"].append(added)
    _model(doc, "gemini-3-5-flash")["evaluations"][INDEX] = 55.0
    return doc


class Nights:
    """Refreshes of the AA source through the CLI, each replaying one page over loopback HTTP."""

    def __init__(self, tmp_path: Path) -> None:
        self.tmp, self.db, self.n = tmp_path, tmp_path / "w.duckdb", 0

    def refresh(self, doc: dict[str, Any], *extra: str) -> Any:
        self.n += 1
        root = self.tmp / f"night{self.n}"
        build_mirror(root / "m", {aa.api_page_url(1): json.dumps(doc, indent=2).encode()})
        with serve(static_dir=root) as srv:
            return runner.invoke(
                app,
                ["--db", str(self.db), "refresh", "--source", KEY, "--mirror", f"{srv.url}/m", *extra],
                env={aa.API_KEY_ENV: "test-key"},
            )

    def cli(self, *args: str) -> Any:
        return runner.invoke(app, ["--db", str(self.db), *args])


@pytest.fixture
def nights(tmp_path: Path) -> Iterator[Nights]:
    yield Nights(tmp_path)
    assert hashlib.sha256(PAGE1.read_bytes()).hexdigest() == PAGE1_SHA256  # the recording is untouched


def test_a_model_added_one_removed_and_a_value_moved_are_each_reported(nights, night1, night2) -> None:
    first = nights.refresh(night1, "--json")
    assert first.exit_code == 0, first.output
    second = nights.refresh(night2, "--json")
    assert second.exit_code == 0, second.output
    (run,) = json.loads(second.stdout)["runs"]
    assert run["status"] == "completed"

    result = nights.cli("changes", "--json")
    assert result.exit_code == 0, result.output
    report = json.loads(result.stdout)
    assert report["since"]["kind"] == "previous-refresh"
    assert report["tolerance"]["relative"] == 0.001 and "0.001 × max(|old|, |new|)" in report["tolerance"]["rule"]
    (block,) = report["sources"]
    assert block["source"] == KEY and block["compared"] and not block["first"]
    assert [r["status"] for r in block["runs"]] == ["completed"]
    assert block["current"]["run_id"] == run["run_id"] and block["baseline"]["run_id"] != run["run_id"]
    c = block["changes"]

    # the models: counted from the two pages
    assert (c["models"]["before"], c["models"]["after"]) == (len(night1["data"]), len(night2["data"]))
    (new,) = c["models"]["new"]
    (gone,) = c["models"]["vanished"]
    assert new["name"] == "Gemini Edited Flash (added)" and new["id"].endswith("/gemini-edited-flash")
    assert new["values"] == 2
    glm = _model(night1, "glm-4-5v")
    assert gone["name"] == glm["name"] and gone["id"].endswith("/glm-4-5v")
    assert gone["values"] == sum(v is not None for v in glm["evaluations"].values())

    # the values: one moved, with old and new; the rest of the shared ones compared and unchanged
    v1, v2 = _values(night1), _values(night2)
    assert (c["values"]["before"], c["values"]["after"]) == (len(v1), len(v2))
    assert c["values"]["compared"] == len(set(v1) & set(v2))
    (moved,) = c["values"]["moved"]
    flash = _model(night1, "gemini-3-5-flash")
    assert moved["model"].endswith("/gemini-3-5-flash") and moved["benchmark"] == "intelligenceIndex"
    assert (moved["old"], moved["new"]) == (flash["evaluations"][INDEX], 55.0)
    assert moved["change"] == pytest.approx(55.0 - flash["evaluations"][INDEX])
    assert c["benchmarks"]["new"] == [] and c["benchmarks"]["vanished"] == []
    assert (report["totals"]["models_new"], report["totals"]["models_vanished"]) == (1, 1)
    assert report["totals"]["values_moved"] == 1 and report["totals"]["runs_failed"] == 0

    # the same as text
    text = nights.cli("changes")
    assert text.exit_code == 0, text.output
    lines = text.stdout.splitlines()
    assert any(line.strip().startswith(f"+ {new['id']} (Gemini Edited Flash (added))") for line in lines)
    assert any(line.strip().startswith(f"- {gone['id']} ({glm['name']})") for line in lines)
    (move_line,) = [line for line in lines if line.strip().startswith("~ ")]
    assert f"{moved['model']} × intelligenceIndex" in move_line and "50.2 → 55" in move_line
    assert "a value moved when |new - old| > 0.001 × max(|old|, |new|)" in lines[0]


def test_each_refresh_writes_its_report_beside_the_warehouse(nights, night1, night2) -> None:
    assert nights.refresh(night1).exit_code == 0
    second = nights.refresh(night2, "--json")
    assert second.exit_code == 0, second.output
    c = json.loads(nights.cli("changes", "--json").stdout)["sources"][0]["changes"]
    reports = reports_dir(nights.db)
    # in the order written: refresh-<UTC second>.json, then -2, -3… for more in the same second
    parts = lambda p: [*p.stem.split("-"), "1"]  # noqa: E731 - refresh, stamp, n (1 when unnumbered)
    dated = sorted(reports.glob("refresh-*.json"), key=lambda p: (parts(p)[1], int(parts(p)[2])))
    assert len(dated) == 2
    latest = json.loads((reports / LATEST).read_text())
    assert latest == json.loads(dated[-1].read_text())
    assert json.loads(second.stdout)["report"] == str(dated[-1])
    assert latest["exit_code"] == 0 and latest["since"]["kind"] == "runs"
    assert latest["sources"][0]["changes"] == c  # the run report and 'changes' say the same


def test_a_larger_tolerance_hides_the_move_and_says_so(nights, night1, night2) -> None:
    assert nights.refresh(night1).exit_code == 0
    assert nights.refresh(night2).exit_code == 0
    flash = _model(night1, "gemini-3-5-flash")["evaluations"][INDEX]
    share = (55.0 - flash) / 55.0  # the move, as a share of the larger magnitude
    hidden = json.loads(nights.cli("changes", "--json", "--tolerance", f"{share * 1.01}").stdout)
    shown = json.loads(nights.cli("changes", "--json", "--tolerance", f"{share * 0.99}").stdout)
    assert hidden["sources"][0]["changes"]["values"]["moved"] == []
    assert len(shown["sources"][0]["changes"]["values"]["moved"]) == 1
    assert hidden["tolerance"]["relative"] == pytest.approx(share * 1.01)


def test_a_quiet_night_reports_nothing_new_and_since_reaches_back(nights, night1, night2) -> None:
    first = nights.refresh(night1, "--json")
    first_run = json.loads(first.stdout)["runs"][0]["run_id"]
    assert nights.refresh(night2).exit_code == 0
    quiet = nights.refresh(night2, "--json")
    assert json.loads(quiet.stdout)["runs"][0]["status"] == "unchanged"

    now = json.loads(nights.cli("changes", "--json").stdout)
    (block,) = now["sources"]
    assert not block["compared"] and block["changes"] is None and "did not change" in block["note"]
    assert now["totals"]["models_new"] == 0

    # since night 1's run (named by a prefix): nights 2 and 3, and what night 2 changed
    back = json.loads(nights.cli("changes", "--json", "--since", first_run[:-3]).stdout)
    (block,) = back["sources"]
    assert back["since"]["run_id"] == first_run
    assert [r["status"] for r in block["runs"]] == ["completed", "unchanged"]
    assert block["baseline"]["run_id"] == first_run
    assert len(block["changes"]["models"]["new"]) == 1 and len(block["changes"]["values"]["moved"]) == 1

    # since a date before everything: every run, and the first board counts as one
    all_time = json.loads(nights.cli("changes", "--json", "--since", "2000-01-01").stdout)
    (block,) = all_time["sources"]
    assert len(block["runs"]) == 3 and block["first"] and block["baseline"] is None
    assert block["changes"]["models"]["after"] == len(night2["data"])
    assert all_time["totals"]["models_new"] == 0  # a first board is not news of new models


def test_a_since_that_names_nothing_or_several_runs_exits_2(nights, night1) -> None:
    assert nights.refresh(night1).exit_code == 0
    assert nights.refresh(night1).exit_code == 0
    nothing = nights.cli("changes", "--since", "no-such-run")
    assert nothing.exit_code == 2 and "neither a run id" in nothing.output
    several = nights.cli("changes", "--since", f"{KEY}@")
    assert several.exit_code == 2 and "names several runs" in several.output
    reparsed = nights.cli("reparse", "--source", KEY)  # a run's table is titled by what ran
    assert reparsed.exit_code == 0 and reparsed.stdout.lstrip().startswith(f"reparse {KEY}")


def test_a_board_that_lost_more_than_the_guard_allows_fails_and_names_what_would_vanish(nights, night1) -> None:
    assert nights.refresh(night1).exit_code == 0
    shrunk = copy.deepcopy(night1)
    dropped = [m for m in shrunk["data"] if (m.get("evaluations") or {}).get(INDEX) is not None][:40]
    shrunk["data"] = [m for m in shrunk["data"] if m not in dropped]
    failed = nights.refresh(shrunk, "--json")
    assert failed.exit_code == 1
    (run,) = json.loads(failed.stdout)["runs"]
    assert run["status"] == "failed" and "rows dropped" in run["error"]

    report = json.loads((reports_dir(nights.db) / LATEST).read_text())
    assert report["exit_code"] == 1 and report["failed_sources"] == [KEY]
    (block,) = report["sources"]
    assert block["changes"] is None and "stays as the last load left it" in block["note"]
    refused = block["refused"]
    assert refused["run_id"] == run["run_id"] and refused["guard"] == "row_drop"
    gone = {m["name"] for m in refused["changes"]["models"]["vanished"]}
    assert gone == {m["name"] for m in dropped}
    # the refresh's report compared the board it parsed; 'changes' parses the stored payloads again
    assert json.loads(nights.cli("changes", "--json").stdout)["sources"][0]["refused"] == refused
    assert report["totals"]["runs_failed"] == 1 and report["totals"]["refused"] == 1
    # the warehouse still holds the dropped models' scores: the guard kept the board
    stats = json.loads(nights.cli("stats", "--json").stdout)
    (row,) = [r for r in stats["by_source"] if r["source"] == KEY]
    assert row["last_status"] == "failed" and row["last_load_status"] == "completed"
    assert row["scores"] == len(_values(night1))

    text = nights.cli("changes")
    assert "refused by the row_drop guard" in text.stdout
    assert f"{len(dropped)} vanished" in text.stdout


def test_stats_keeps_the_last_loads_quarantine_in_view_until_a_load_clears_it(nights, night1) -> None:
    bad = copy.deepcopy(night1)
    undeclared = bad["data"][:3]  # three models name an evaluation AA does not declare
    for model in undeclared:
        model["evaluations"]["artificial_analysis_undeclared_index"] = 12.5
    first = nights.refresh(bad, "--json")
    (run,) = json.loads(first.stdout)["runs"]
    assert run["status"] == "partial" and run["quarantined"] == len(undeclared)

    def row() -> dict[str, Any]:
        data = json.loads(nights.cli("stats", "--json").stdout)
        (found,) = [r for r in data["by_source"] if r["source"] == KEY]
        return found

    assert nights.refresh(bad).exit_code == 0  # a quiet night: the same payload
    quiet = row()
    assert quiet["last_status"] == "unchanged"
    assert (quiet["last_load_status"], quiet["last_load_quarantined"]) == ("partial", len(undeclared))
    assert quiet["last_load_run_id"] == run["run_id"]
    text = nights.cli("stats").stdout
    (line,) = [line for line in text.splitlines() if KEY in line]
    assert "unchanged" in line and f"partial ({len(undeclared)} quarantined)" in line

    # the undeclared field gone alone leaves the records as they were: still the same load in view
    assert nights.refresh(night1).exit_code == 0
    assert (row()["last_status"], row()["last_load_quarantined"]) == ("unchanged", len(undeclared))
    fixed = copy.deepcopy(night1)  # and with a value moved as well, the next load replaces it
    _model(fixed, "gemini-3-5-flash")["evaluations"][INDEX] = 51.0
    assert nights.refresh(fixed).exit_code == 0
    cleared = row()
    assert (cleared["last_status"], cleared["last_load_status"], cleared["last_load_quarantined"]) == (
        "completed",
        "completed",
        0,
    )


def test_the_sites_whats_new_page_lists_what_the_last_refresh_changed(nights, night1, night2, tmp_path) -> None:
    import html

    assert nights.refresh(night1).exit_code == 0
    assert nights.refresh(night2).exit_code == 0
    built = nights.cli("site", str(tmp_path / "site"), "--no-analyses", "--json")
    assert built.exit_code == 0, built.output
    assert json.loads(built.stdout)["pages"]["whats-new"] == 1
    page = html.unescape((tmp_path / "site" / "whats-new.html").read_text())
    report = json.loads((reports_dir(nights.db) / LATEST).read_text())
    c = report["sources"][0]["changes"]
    (new,), (gone,), (moved,) = c["models"]["new"], c["models"]["vanished"], c["values"]["moved"]
    assert f"+ {new['id']}" in page and "Gemini Edited Flash (added)" in page
    assert f"− {gone['id']}" in page and _model(night1, "glm-4-5v")["name"] in page
    assert f'data-value="{moved["old"]!r}"' in page and f'data-value="{moved["new"]!r}"' in page
    assert report["tolerance"]["rule"] in page
    assert 'href="whats-new.html"' in (tmp_path / "site" / "index.html").read_text()
