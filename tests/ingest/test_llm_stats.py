"""LLM Stats: the claim flag read as it is spelled (``is_self_reported``, never defaulted), the
``/v1/scores`` cursor pagination followed over loopback HTTP to its end, and a listing whose next
page is missing (the run fails naming it).

The payloads are authored (tests/fixtures/llm-stats/README.md: no real response is recorded), so
this source stays unverified; counts are taken from the files here, not from the parser.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from httpserver import serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.source import FetchMeta, LayoutChanged
from evalhouse.ingest.sources import llm_stats
from evalhouse.pipeline import refresh as R
from evalhouse.schema.records import ParsedRecord, ParseFailure
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "llm-stats"
PAGE1, PAGE2 = FIXTURES / "scores.json", FIXTURES / "scores_page2.json"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False, "max_retries": 0}


def _meta(url: str = llm_stats.scores_page_url(), label: str = "scores") -> FetchMeta:
    return FetchMeta(llm_stats.SOURCE.key, url, "0" * 64, datetime(2026, 7, 1, tzinfo=UTC), "application/json", label)


def _parse(doc: dict[str, Any], url: str = llm_stats.scores_page_url()) -> list[ParsedRecord | ParseFailure]:
    return list(llm_stats.parse(json.dumps(doc).encode(), meta=_meta(url)))


def _doc(path: Path) -> dict[str, Any]:
    return json.loads(path.read_text(encoding="utf-8"))


def test_the_claim_flag_decides_who_measured():
    items = _parse(_doc(PAGE1))
    by = {
        (i.record["model_info"]["id"], i.record["source_metadata"]["additional_details"]["evalhouse.evaluated_by"]): i
        for i in items
    }
    assert [i for i in items if isinstance(i, ParseFailure)] == []
    rows = _doc(PAGE1)["scores"]
    assert len(by) == len({(r["model_id"], r["is_self_reported"]) for r in rows}) == 3
    gpt5 = [k for k in by if "gpt-5" in k[0]]
    assert sorted(k[1] for k in gpt5) == ["independent_evaluator", "model_developer"]


@pytest.mark.parametrize("old", ["self_reported", "selfReported"])
def test_a_page_whose_rows_lost_the_flag_is_a_layout_change_never_a_default(old):
    doc = _doc(PAGE1)
    for row in doc["scores"]:
        row[old] = row.pop("is_self_reported")
    with pytest.raises(LayoutChanged, match=r"no llm-stats score row carries 'is_self_reported'.*" + old):
        _parse(doc)


def test_a_row_without_the_flag_or_with_another_value_is_quarantined_and_its_neighbours_load():
    doc = _doc(PAGE1)
    del doc["scores"][0]["is_self_reported"]
    doc["scores"][3]["is_self_reported"] = "yes"
    items = _parse(doc)
    failures = {f.locator: f.reason for f in items if isinstance(f, ParseFailure)}
    assert failures == {
        "scores[0]": "score row has no 'is_self_reported': whose claim it is is unknown",
        "scores[3]": "is_self_reported is 'yes', not true or false",
    }
    loaded = sum(len(i.record["evaluation_results"]) for i in items if isinstance(i, ParsedRecord))
    assert loaded == len(doc["scores"]) - 2


def test_follow_walks_the_cursor_to_the_last_page():
    (nxt,) = llm_stats.follow(PAGE1.read_bytes(), meta=_meta())
    assert nxt.url == "https://api.llm-stats.com/v1/scores?cursor=eyJvZmZzZXQiOjV9" and nxt.label == "scores"
    assert llm_stats.follow(PAGE2.read_bytes(), meta=_meta(nxt.url)) == []
    nested = {"data": _doc(PAGE2)["scores"], "pagination": {"next_cursor": "abc"}}
    assert [r.url for r in llm_stats.follow(json.dumps(nested).encode(), meta=_meta())] == [
        llm_stats.scores_page_url("abc")
    ]
    assert llm_stats.follow(PAGE1.read_bytes(), meta=_meta(llm_stats.BASE + "/v1/models", "models")) == []


def test_a_cursor_that_loops_or_is_not_text_is_a_layout_change():
    doc = _doc(PAGE1)
    with pytest.raises(LayoutChanged, match="names itself"):
        _parse(doc, llm_stats.scores_page_url(doc["next_cursor"]))
    with pytest.raises(LayoutChanged, match="not a string"):
        _parse({**doc, "next_cursor": 5})


def _refresh(tmp_path: Path, payloads: dict[str, bytes]) -> tuple[Any, Warehouse]:
    build_mirror(tmp_path / "m" / "m", payloads)

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, **FAST)

    with serve(static_dir=tmp_path / "m") as srv:
        wh = Warehouse.open(tmp_path / "w.duckdb")
        options = R.RefreshOptions(mirror=f"{srv.url}/m", env={}, client_factory=client)
        (result,) = R.refresh(wh, RawStore(tmp_path / "raw"), ["llm-stats"], options)
    return result, wh


def _collections() -> dict[str, bytes]:
    return {
        llm_stats.BASE + llm_stats.ENDPOINTS["models"]: (FIXTURES / "models.json").read_bytes(),
        llm_stats.BASE + llm_stats.ENDPOINTS["benchmarks"]: (FIXTURES / "benchmarks.json").read_bytes(),
        llm_stats.scores_page_url(): PAGE1.read_bytes(),
    }


def test_every_scores_page_loads_over_loopback(tmp_path: Path):
    second = llm_stats.scores_page_url(_doc(PAGE1)["next_cursor"])
    result, wh = _refresh(tmp_path, {**_collections(), second: PAGE2.read_bytes()})
    rows = _doc(PAGE1)["scores"] + _doc(PAGE2)["scores"]
    with wh:
        assert result.status == "completed", result.error
        r = result.report
        assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(rows) == 8
        assert r.scores_loaded >= 0.99 * len(rows)
        sql = "SELECT benchmark_raw, raw_value, evaluated_by FROM score WHERE source_key = 'llm-stats'"
        values = set(wh.con.execute(sql).fetchall())
        # five cells read off the files: the developer's and a third party's GPQA for GPT-5 stay apart
        for spot in [
            ("GPQA Diamond", 0.857, "model_developer"),
            ("GPQA Diamond", 0.842, "independent_evaluator"),
            ("AIME 2025", 0.946, "model_developer"),
            ("LiveCodeBench", 0.555, "model_developer"),
            ("MMLU-Pro", 0.675, "model_developer"),
        ]:
            assert spot in values, spot
        assert wh.scalar("SELECT count(*) FROM raw_snapshot WHERE source_key = 'llm-stats'") == 4


def test_a_scores_listing_whose_next_page_is_missing_fails_naming_it(tmp_path: Path):
    result, wh = _refresh(tmp_path, _collections())
    with wh:
        assert result.status == "failed"
        assert "pagination not exhausted" in result.error and "v1/scores?cursor=eyJvZmZzZXQiOjV9" in result.error
        assert wh.scalar("SELECT count(*) FROM score WHERE source_key = 'llm-stats'") == 0
