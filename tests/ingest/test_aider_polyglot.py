"""Aider polyglot on the real polyglot_leaderboard.yml: every score cell through the real refresh over
loopback, the edit format and thinking fields passed beside the model name, never inside it.

Cells are counted here by reading the YAML text line by line, never by the parser."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest
from recorded import accounted, mirror_of, pinned, refresh_from

from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.source import FetchMeta
from evalhouse.ingest.sources import aider_polyglot
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.db import Warehouse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "aider-polyglot"
FIRST = FIXTURES / "polyglot_leaderboard_2024-12-21.yml"
NOW = datetime(2025, 10, 4, tzinfo=UTC)
FIELDS = ("pass_rate_2", "pass_rate_1", "percent_cases_well_formed", "total_cost", "seconds_per_case")


def cells(text: str) -> int:
    """Score fields written with a value (``  pass_rate_2: 45.3``) in the YAML text."""
    n = 0
    for line in text.splitlines():
        key, _, value = line.strip().lstrip("- ").partition(":")
        n += key in FIELDS and value.strip() not in ("", "null", "~")
    return n


def parse(text: str) -> list[ParsedRecord]:
    meta = FetchMeta("aider-polyglot", aider_polyglot.URL, "0" * 64, NOW, label="polyglot")
    return [i for i in aider_polyglot.parse(text.encode(), meta=meta) if isinstance(i, ParsedRecord)]


def test_spot_values_match_the_bytes() -> None:
    text = FIRST.read_text(encoding="utf-8")
    runs = {r.record["model_info"]["name"]: r.record for r in parse(text)}
    assert len(runs) == 6
    sonnet = runs["claude-3-5-sonnet-20241022"]["evaluation_results"]
    by_metric = {r["metric_config"]["metric_name"]: r for r in sonnet}
    # read from the file: pass_rate_1: 18.7, pass_rate_2: 45.3 under dirname 2024-12-21-18-44-28--polyglot-sonnet
    block = text.split("dirname: 2024-12-21-18-44-28--polyglot-sonnet", 1)[1].split("- dirname:", 1)[0]
    written = {k.strip(): v.strip() for k, _, v in (line.partition(":") for line in block.splitlines()) if v}
    for field in FIELDS:
        assert by_metric[field]["score_details"]["score"] == float(written[field])
    assert by_metric["pass_rate_2"]["generation_config"]["additional_details"]["prompting"] == written["edit_format"]


@pytest.mark.skipif(pinned() is None, reason="the current board is in ../shared, which is not beside the checkout")
def test_thinking_fields_travel_beside_the_name() -> None:
    text = (pinned() / "datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml").read_text()
    runs = {r.record["model_info"]["name"]: r.record for r in parse(text)}
    opus = runs["claude-opus-4-20250514 (32k thinking)"]
    assert opus["model_info"]["additional_details"]["thinking_tokens"] == "32000"
    o3 = runs["o3 (high) + gpt-4.1"]
    assert o3["model_info"]["additional_details"]["reasoning_effort"] == "high"
    setup = o3["evaluation_results"][0]["generation_config"]["additional_details"]
    assert setup == {"prompting": "architect", "editor_model": "gpt-4.1", "editor_edit_format": "editor-diff"}


def refresh_and_count(mirror: Path, text: str, tmp_path: Path) -> None:
    night = refresh_from(mirror, ["aider-polyglot"], tmp_path)
    result = night.results["aider-polyglot"]
    assert result.status == "completed", result.error
    expected = cells(text)
    with Warehouse.open(night.db) as wh:
        loaded = wh.scalar("SELECT count(*) FROM score WHERE source_key = 'aider-polyglot'")
        quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = 'aider-polyglot'")
    assert accounted(result) == expected and loaded >= 0.99 * expected and quarantined == 0


def test_refresh_on_the_first_recorded_board(tmp_path: Path) -> None:
    text = FIRST.read_text(encoding="utf-8")
    build_mirror(tmp_path / "m", {aider_polyglot.URL: text.encode()})
    assert cells(text) == 30
    refresh_and_count(tmp_path / "m", text, tmp_path)


@pytest.mark.skipif(pinned() is None, reason="the current board is in ../shared, which is not beside the checkout")
def test_refresh_on_the_recorded_replay(tmp_path: Path) -> None:
    payloads = mirror_of("aider-polyglot", tmp_path / "m", pinned())
    text = payloads[aider_polyglot.URL].decode()
    assert cells(text) == 344
    refresh_and_count(tmp_path / "m", text, tmp_path)
