"""LiveBench on its real payloads: releases discovered from the changelog, every table loaded through
the real refresh over loopback, unknown tasks registered from the categories, nothing mass-quarantined.

Cells are counted here from the recorded CSVs with the csv module, never by the parser.
"""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

from recorded import accounted, mirror_of, pinned, refresh_from, replayed

from evalhouse.ingest.source import FetchMeta
from evalhouse.ingest.sources import livebench
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.db import Warehouse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "livebench"
NOW = datetime(2026, 7, 1, tzinfo=UTC)
TABLE_2024_06_24 = "https://livebench.ai/table_2024_06_24.csv"


def cells(tables: dict[str, bytes]) -> int:
    """Non-empty task cells of the recorded tables (every column but ``model``)."""
    n = 0
    for body in tables.values():
        for row in csv.DictReader(io.StringIO(body.decode("utf-8"), newline="")):
            n += sum(1 for k, v in row.items() if k != "model" and v and v.strip())
    return n


def tables_of(payloads: dict) -> dict[str, bytes]:
    return {u: b for u, b in payloads.items() if isinstance(u, str) and "/table_" in u}


def test_releases_are_discovered_from_the_changelog_not_listed() -> None:
    text = (FIXTURES / "changelog.md").read_text(encoding="utf-8")
    found = livebench.releases(text)
    # the changelog's twelve headings; the site's ten releases are among them
    assert len(found) == 12 and found[0] == "2026_01_08" and found[-1] == "2024_06_12"
    assert {"2025_04_25", "2025_05_30", "2025_11_25", "2025_12_23"} <= set(found)  # after 2025-04-02
    meta = FetchMeta("livebench", livebench.CHANGELOG, "0" * 64, NOW, label="changelog")
    probes = livebench.follow(text.encode(), meta=meta)
    assert [p.url for p in probes] == [f"https://livebench.ai/categories_{r}.json" for r in found]
    assert all(p.optional for p in probes)  # a heading without a table is absent, not missing


def test_a_table_is_labelled_with_its_categories_and_its_tasks_are_declared() -> None:
    body = (FIXTURES / "site/categories_2026_01_08.json").read_bytes()
    url = "https://livebench.ai/categories_2026_01_08.json"
    meta = FetchMeta("livebench", url, "0" * 64, NOW, label="categories:2026_01_08")
    (table,) = livebench.follow(body, meta=meta)
    assert table.url == "https://livebench.ai/table_2026_01_08.csv" and table.label.startswith("table:2026_01_08:{")
    tmeta = FetchMeta("livebench", table.url, "0" * 64, NOW, label=table.label)
    records = [i for i in livebench.parse((FIXTURES / "site/table_2026_01_08.csv").read_bytes(), meta=tmeta)]
    assert all(isinstance(r, ParsedRecord) for r in records) and len(records) == 127
    declared = {
        res["source_data"]["dataset_name"]: res["source_data"]["additional_details"]["livebench_category"]
        for r in records
        for res in r.record["evaluation_results"]
    }
    assert declared["LiveBench: integrals_with_game"] == "Mathematics"
    assert declared["LiveBench: consecutive_events"] == "Data Analysis"
    assert len(declared) == 23  # every task column, each declared by the categories


def test_spot_values_match_the_bytes() -> None:
    """Five cells read by hand from table_2024_06_24.csv (the CSV text, not a parse of it)."""
    body = (FIXTURES / "site/table_2024_06_24.csv").read_bytes()
    meta = FetchMeta("livebench", TABLE_2024_06_24, "0" * 64, NOW, label="table:2024_06_24:{}")
    by_model = {
        r.record["model_info"]["name"]: {
            res["source_data"]["dataset_name"]: res["score_details"]["score"] for res in r.record["evaluation_results"]
        }
        for r in livebench.parse(body, meta=meta)
    }
    lines = {line.split(",", 1)[0]: line.split(",") for line in body.decode().splitlines()[1:]}
    header = body.decode().splitlines()[0].split(",")
    for model, task in [
        ("claude-3-5-sonnet-20240620", "AMPS_Hard"),
        ("claude-3-5-sonnet-20240620", "zebra_puzzle"),
        ("gpt-4o-2024-05-13", "connections"),
        ("gpt-4o-2024-05-13", "web_of_lies_v2"),
        ("gemini-1.5-pro-api-0514", "tablereformat"),
    ]:
        assert by_model[model][f"LiveBench: {task}"] == float(lines[model][header.index(task)])
    assert set(by_model) == set(lines)


def test_refresh_on_the_recorded_site_loads_every_cell_and_registers_new_tasks(tmp_path: Path) -> None:
    """All ten releases with the pinned folder, the eight in tests/fixtures without it."""
    payloads = mirror_of("livebench", tmp_path / "m", pinned())
    night = refresh_from(tmp_path / "m", ["livebench"], tmp_path)
    result = night.results["livebench"]
    assert result.status == "completed", result.error
    expected = cells(tables_of(payloads))
    with Warehouse.open(night.db) as wh:
        loaded = wh.scalar("SELECT count(*) FROM score WHERE source_key = 'livebench'")
        quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = 'livebench'")
        releases = {
            r[0]
            for r in wh.con.execute("SELECT DISTINCT setup_key FROM score WHERE source_key = 'livebench'").fetchall()
        }
        decisions = dict(
            wh.con.execute(
                "SELECT json_extract_string(subject, '$.id'), rule FROM curation_decision"
                " WHERE kind = 'provisional_benchmark'"
            ).fetchall()
        )
        details = json.loads(wh.scalar("SELECT details FROM ingest_run WHERE run_id = ?", [result.run_id]))
        typos = wh.scalar("SELECT count(DISTINCT benchmark_id) FROM score WHERE benchmark_raw = 'LiveBench: typos'")
    assert accounted(result) == expected and loaded >= 0.99 * expected
    assert loaded == result.report.scores_loaded and quarantined == 0
    # every release the recorded site has, each its own benchmark version
    n_tables = len(tables_of(payloads))
    assert len(releases) == n_tables and n_tables in (8, 10)
    # the changelog's two headings without a table were probed and found absent: listed, no failure
    absent = {f"https://livebench.ai/categories_{r}.json" for r in ("2025_10_03", "2024_06_12")}
    assert absent <= set(details["absent"])
    # the tasks the registry did not know are registered from the categories, each a decision
    for task in ("cta", "olympiad", "spatial", "theory_of_mind", "integrals_with_game"):
        assert "declared by source livebench" in decisions[f"livebench.livebench_{task}"]
    # a task the registry knows stays its registry benchmark (never a second one)
    assert "livebench.livebench_typos" not in decisions and typos == 1


def test_without_the_pinned_folder_the_fixtures_alone_replay_eight_releases(tmp_path: Path) -> None:
    payloads = replayed("livebench", None)
    assert len(tables_of(payloads)) == 8 and livebench.CHANGELOG in payloads


def test_a_table_ingested_on_its_own_declares_its_columns_and_is_not_mass_quarantined(tmp_path: Path) -> None:
    """``evalhouse ingest livebench table_<release>.csv``: no categories came with it, so its header
    declares its task columns (cta, olympiad, ... are registered, not quarantined)."""
    from clirunner import CliRunner

    from evalhouse.cli import app

    table = tmp_path / "table_2024_06_24.csv"
    table.write_bytes((FIXTURES / "site/table_2024_06_24.csv").read_bytes())
    db = tmp_path / "w.duckdb"
    out = CliRunner().invoke(app, ["--db", str(db), "ingest", "livebench", str(table), "--json", "--skip-validation"])
    assert out.exit_code == 0, out.output
    expected = cells({"t": table.read_bytes()})
    with Warehouse.open(db) as wh:
        loaded = wh.scalar("SELECT count(*) FROM score WHERE source_key = 'livebench'")
        quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = 'livebench'")
        cta = wh.scalar("SELECT count(*) FROM score WHERE benchmark_id = 'livebench.livebench_cta'")
    assert (loaded, quarantined) == (expected, 0) and cta == 73
