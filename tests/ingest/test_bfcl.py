"""BFCL on its recorded real ``data_overall.csv`` (gorilla gh-pages @ 8c24bd7), replayed over loopback.

Cells are counted from the CSV itself (the csv module, not the parser): every non-empty, non-``N/A``
value of a row outside the four non-measurement columns (Rank, Model Link, Organization, License).
"""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import bfcl

CSV = DEFAULT_FIXTURES / "bfcl" / "data_overall.csv"
NOT_CELLS = {"Rank", "Model", "Model Link", "Organization", "License"}


def payload_cells() -> list[tuple[str, str, str]]:
    with CSV.open(encoding="utf-8", newline="") as f:
        rows = list(csv.DictReader(f))
    return [
        (row["Model"], column, value)
        for row in rows
        for column, value in row.items()
        if column not in NOT_CELLS and value.strip() not in ("", "N/A")
    ]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(bfcl.SOURCE, tmp_path_factory.mktemp("bfcl")) as done:
        yield done


def test_every_cell_of_the_recorded_csv_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(expected) == 109 * 31 - 2 * 69  # 109 rows x 31 measurement columns; 69 rows have no format runs
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 109


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["result_id"].removeprefix("BFCL v4."), s["raw_value"]) for s in scores(wh, "bfcl")}
    # read off data_overall.csv lines 2-5
    for spot in [
        ("Claude-Opus-4-5-20251101 (FC)", "Overall Acc", 77.47),
        ("Claude-Opus-4-5-20251101 (FC)", "Total Cost ($)", 86.55),
        ("Claude-Opus-4-5-20251101 (FC)", "Latency 95th Percentile (s)", 7.56),
        ("Gemini-3-Pro-Preview (Prompt)", "Format Sensitivity Max Delta", 8.5),
        ("GLM-4.6 (FC thinking)", "Memory Recursive Summarization", 67.10),
        ("Claude-Sonnet-4-5-20250929 (FC)", "Irrelevance Detection", 86.61),
    ]:
        assert spot in got, spot
    expected = {(m, c, float(v.rstrip("%"))) for m, c, v in payload_cells()}
    assert got <= expected  # nothing loaded that the CSV does not hold


def test_cells_are_bfcl_v4_by_mode_run_by_the_benchmark_creator(night) -> None:
    _result, wh = night
    rows = scores(wh, "bfcl")
    assert {s["benchmark"] for s in rows} == {"bfcl_v4"}
    assert {s["evaluated_by"] for s in rows} == {"benchmark_creator"}
    modes = {s["setup"] for s in rows if s["model"] == "GLM-4.6 (FC thinking)"}
    assert len(modes) == 1 and "FC thinking" in next(iter(modes))
    metrics = {s["metric"] for s in rows}
    assert {"accuracy", "cost", "latency.p95", "format_sensitivity.max_delta"} <= metrics


def test_a_table_without_the_v4_columns_is_a_layout_change() -> None:
    from evalhouse.ingest.source import LayoutChanged

    head = CSV.read_bytes().split(b"\n", 1)[0].replace(b"Web Search Acc", b"Web Acc")
    meta = _meta()
    with pytest.raises(LayoutChanged, match="Web Search Acc"):
        list(bfcl.parse(head + b"\n", meta=meta))


def _meta():
    from datetime import UTC, datetime

    from evalhouse.ingest.source import FetchMeta

    return FetchMeta(source_key="bfcl", url=bfcl.URL, sha256="0" * 64, retrieved_at=datetime(2026, 1, 1, tzinfo=UTC))


def test_the_fixture_is_the_recorded_blob() -> None:
    import hashlib

    body = CSV.read_bytes()
    assert hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest() == "3852e2addebf1287a61a332ff52613706b00e320"
    assert Path(CSV).stat().st_size == 33046
