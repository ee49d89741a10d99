"""The Artificial Analysis Data API on its real bytes: page 1 of the free listing (recorded byte for
byte, tests/fixtures/artificial-analysis/SOURCE.md), its pagination followed over loopback HTTP to
the last page, and a listing whose next page is missing (the run fails naming it).

Counts are taken from the payload itself here (every non-null value under ``evaluations``),
never from the parser.
"""

from __future__ import annotations

import json
from collections import Counter
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import pytest
from httpserver import serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror, mirror_relpath
from evalhouse.ingest.source import FetchMeta, LayoutChanged
from evalhouse.ingest.sources import artificial_analysis as aa
from evalhouse.pipeline import refresh as R
from evalhouse.schema.records import ParsedRecord, ParseFailure
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

PAGE1 = Path(__file__).resolve().parents[1] / "fixtures" / "artificial-analysis" / "language_models_free_page1.json"
#: The API's evaluation fields and the record's benchmark key for each.
INDICES = {
    "artificial_analysis_intelligence_index": "intelligenceIndex",
    "artificial_analysis_coding_index": "codingIndex",
    "artificial_analysis_agentic_index": "agenticIndex",
}
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False, "max_retries": 0}
KEY = {aa.API_KEY_ENV: "aa-test-key"}


def _meta(url: str) -> FetchMeta:
    return FetchMeta(aa.SOURCE.key, url, "0" * 64, datetime(2026, 6, 27, tzinfo=UTC), "application/json", "api")


def _parse(doc: dict[str, Any], page: int = 1) -> list[ParsedRecord | ParseFailure]:
    return list(aa.parse(json.dumps(doc).encode(), meta=_meta(aa.api_page_url(page))))


def cells(doc: dict[str, Any]) -> list[tuple[str, str, float]]:
    """``(AA model id, benchmark key, value)`` of every non-null evaluation value in an API page."""
    return [
        (model["id"], INDICES.get(name, name), value)
        for model in doc["data"]
        for name, value in (model.get("evaluations") or {}).items()
        if value is not None
    ]


def parsed_cells(items: list) -> list[tuple[str, str, float]]:
    return [
        (
            i.record["model_info"]["additional_details"]["aa_model_id"],
            r["source_data"]["dataset_name"],
            r["score_details"]["score"],
        )
        for i in items
        if isinstance(i, ParsedRecord)
        for r in i.record["evaluation_results"]
    ]


@pytest.fixture(scope="module")
def page1() -> dict[str, Any]:
    return json.loads(PAGE1.read_text(encoding="utf-8"))


# ------------------------------------------------------------------------------------------
# The recorded page, parsed


def test_the_real_page_gives_one_record_per_model_and_every_index_value(page1):
    items = list(aa.parse(PAGE1.read_bytes(), meta=_meta(aa.api_page_url(1))))
    records = [i for i in items if isinstance(i, ParsedRecord)]
    assert [i for i in items if isinstance(i, ParseFailure)] == []
    assert len(records) == len(page1["data"]) == 200
    expected = cells(page1)
    # what SOURCE.md states, counted from the bytes: 197 intelligence, 30 coding, 14 agentic values
    assert Counter(k for _, k, _ in expected) == {"intelligenceIndex": 197, "codingIndex": 30, "agenticIndex": 14}
    assert sorted(parsed_cells(items)) == sorted(expected)  # recall 100%: nothing dropped, nothing invented
    for rec in records:
        for result in rec.record["evaluation_results"]:
            assert result["score_details"]["details"] == {"intelligence_index_version": "4.1"}


def test_spot_values_against_the_bytes(page1):
    by_slug = {
        i.record["model_info"]["additional_details"]["slug"]: i.record
        for i in aa.parse(PAGE1.read_bytes(), meta=_meta(aa.api_page_url(1)))
        if isinstance(i, ParsedRecord)
    }

    def score(slug: str, key: str) -> float:
        (value,) = [
            r["score_details"]["score"]
            for r in by_slug[slug]["evaluation_results"]
            if r["source_data"]["dataset_name"] == key
        ]
        return value

    # read off the recorded file (lines 49-51, 82-84, 21, and the Qwen3.5 Omni Plus block)
    assert score("gemini-3-5-flash", "intelligenceIndex") == 50.2
    assert score("gemini-3-5-flash", "codingIndex") == 70.1
    assert score("gemini-3-5-flash", "agenticIndex") == 37.4
    assert score("mimo-v2-5-pro", "codingIndex") == 60.2
    assert score("glm-4-5v", "intelligenceIndex") == 7
    assert score("qwen3-5-omni-plus", "intelligenceIndex") == 30.6
    omni = by_slug["qwen3-5-omni-plus"]
    assert {r["source_data"]["dataset_name"] for r in omni["evaluation_results"]} == {"intelligenceIndex"}
    assert (omni["model_info"]["name"], omni["model_info"]["developer"]) == ("Qwen3.5 Omni Plus", "Alibaba")
    assert omni["model_info"]["additional_details"]["release_date"] == "2026-03-30"
    # speeds and prices (nested under performance / pricing) are not capability scores: never results
    names = {r["source_data"]["dataset_name"] for rec in by_slug.values() for r in rec["evaluation_results"]}
    assert names == set(INDICES.values())


def test_a_creator_without_a_slug_gets_the_model_id_the_csv_gives_it(page1, aa_csv):
    import csv

    csv_ids = {}
    with aa_csv.open(newline="", encoding="utf-8") as fh:
        for row in csv.DictReader(fh):
            csv_ids[row["id"]] = f"{row['modelCreatorSlug']}/{row['slug']}"
    assert all("slug" not in m["model_creator"] for m in page1["data"])  # the free API names no creator slug
    api_ids = {
        i.record["model_info"]["additional_details"]["aa_model_id"]: i.record["model_info"]["id"]
        for i in aa.parse(PAGE1.read_bytes(), meta=_meta(aa.api_page_url(1)))
        if isinstance(i, ParsedRecord)
    }
    shared_ids = set(api_ids) & set(csv_ids)
    assert len(shared_ids) == 200  # every model of page 1 is one of the CSV's 548 (same AA uuid)
    assert {k: api_ids[k] for k in shared_ids} == {k: csv_ids[k] for k in shared_ids}
    assert api_ids["0081ab31-d10a-44a0-a10d-eee5533fec65"] == "zai/glm-4-5v"  # "Z AI", AA's slug zai


# ------------------------------------------------------------------------------------------
# Pagination, pure


def test_follow_asks_for_the_next_page_until_the_last(page1):
    (nxt,) = aa.follow(PAGE1.read_bytes(), meta=_meta(aa.api_page_url(1)))
    assert nxt.url == f"{aa.API_URL}?page=2" and nxt.label == "api"
    last = {**page1, "pagination": {"page": 3, "page_size": 200, "total_pages": 3, "has_more": False}}
    assert aa.follow(json.dumps(last).encode(), meta=_meta(aa.api_page_url(3))) == []
    legacy = {"status": 200, "data": page1["data"][:2]}  # the unpaginated legacy list follows nothing
    assert aa.follow(json.dumps(legacy).encode(), meta=_meta(aa.API_URL)) == []
    assert aa.api_page_url(4, f"{aa.API_URL}?page=3&x=1") == f"{aa.API_URL}?x=1&page=4"


@pytest.mark.parametrize(
    ("pagination", "page", "message"),
    [
        ({"page": 3, "page_size": 200, "total_pages": 3, "has_more": True}, 3, "page 3 of 3 with has_more=True"),
        ({"page": 1, "page_size": 200, "total_pages": 3, "has_more": False}, 1, "page 1 of 3 with has_more=False"),
        ({"page": 1, "page_size": 200, "total_pages": 3, "has_more": True}, 2, "asked for page 2"),
        ({"page": 1, "has_more": True}, 1, "lacks page/total_pages"),
        ("1 of 3", 1, "not an object"),
    ],
)
def test_pagination_that_cannot_be_followed_to_its_end_is_a_layout_change(page1, pagination, page, message):
    doc = {**page1, "pagination": pagination}
    with pytest.raises(LayoutChanged, match=message):
        _parse(doc, page)


def test_another_index_version_is_never_stored_as_v4(page1):
    with pytest.raises(LayoutChanged, match=r"version 5\.0"):
        _parse({**page1, "intelligence_index_version": 5.0})


def test_an_undeclared_evaluation_is_quarantined_with_its_name_and_the_model_still_loads(page1):
    model = json.loads(json.dumps(page1["data"][1]))  # gemini-3-5-flash: three indices
    model["evaluations"]["artificial_analysis_multilingual_index"] = 61.5
    model["evaluations"]["artificial_analysis_math_index"] = None  # a null is not a value
    items = _parse({**page1, "data": [model]})
    (failure,) = [i for i in items if isinstance(i, ParseFailure)]
    assert failure.locator == "data[0] slug=gemini-3-5-flash:field 'evaluations.artificial_analysis_multilingual_index'"
    assert "undeclared AA evaluation 'artificial_analysis_multilingual_index' = 61.5" in failure.reason
    (rec,) = [i for i in items if isinstance(i, ParsedRecord)]
    assert len(rec.record["evaluation_results"]) == 3


# ------------------------------------------------------------------------------------------
# Over loopback HTTP, through the refresh


def _tail_page(page: int, total: int, n: int) -> bytes:
    """An authored page after the recorded one (no real later page is recorded): ``n`` models."""
    models = [
        {
            "id": f"authored-{page}-{i}",
            "name": f"Authored Tail Model {page}.{i}",
            "slug": f"authored-tail-{page}-{i}",
            "release_date": "2026-06-01",
            "model_creator": {"id": "authored-creator", "name": "Authored Lab"},
            "evaluations": {
                "artificial_analysis_intelligence_index": 10.0 + page + i,
                "artificial_analysis_coding_index": None if i else 20.5,
                "artificial_analysis_agentic_index": None,
            },
            "pricing": {"price_1m_input_tokens": None},
            "performance": {"median_output_tokens_per_second": 1.0},
        }
        for i in range(n)
    ]
    more = page < total
    pagination = {"page": page, "page_size": 200, "total_pages": total, "has_more": more}
    return json.dumps(
        {"tier": "free", "intelligence_index_version": 4.1, "pagination": pagination, "data": models}
    ).encode()


def _pages_asked(srv: Any) -> list[int]:
    """The API pages the refresh asked the mirror for, in order (a mirror path hashes the query)."""
    paths = {f"/m/{mirror_relpath(aa.api_page_url(n))}": n for n in range(1, 10)}
    return [paths[r.path] for r in srv.requests if r.path in paths]


def _refresh(tmp_path: Path, pages: dict[int, bytes]) -> tuple[Any, Warehouse, Any]:
    """One refresh of the AA source (with a key: the API) replaying ``pages`` over loopback."""
    build_mirror(tmp_path / "m" / "m", {aa.api_page_url(n): body for n, body in pages.items()})

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, **FAST)

    srv_cm = serve(static_dir=tmp_path / "m")
    srv = srv_cm.__enter__()
    wh = Warehouse.open(tmp_path / "w.duckdb")
    options = R.RefreshOptions(mirror=f"{srv.url}/m", env=KEY, client_factory=client)
    try:
        (result,) = R.refresh(wh, RawStore(tmp_path / "raw"), ["artificial-analysis"], options)
    finally:
        srv_cm.__exit__(None, None, None)
    return result, wh, srv


def test_a_listing_whose_next_page_is_missing_fails_the_run_naming_it(tmp_path: Path):
    result, wh, srv = _refresh(tmp_path, {1: PAGE1.read_bytes()})  # the real page 1 says 3 pages; 2 is absent
    with wh:
        assert result.status == "failed"
        assert "pagination not exhausted" in result.error and f"{aa.API_URL}?page=2" in result.error
        assert "404" in result.error
        assert wh.scalar("SELECT count(*) FROM score WHERE source_key = 'artificial-analysis'") == 0
        assert wh.scalar("SELECT count(*) FROM evaluation WHERE source_key = 'artificial-analysis'") == 0
        # page 1's bytes are kept for inspection; the run names its guard
        assert wh.scalar("SELECT count(*) FROM raw_snapshot WHERE source_key = 'artificial-analysis'") == 1
        assert wh.scalar("SELECT details->>'$.guard' FROM ingest_run WHERE run_id = ?", [result.run_id]) == "pagination"
    assert _pages_asked(srv) == [1, 2]


def test_pagination_is_followed_to_the_last_page_and_every_cell_is_accounted_for(tmp_path: Path, page1):
    tail = {2: _tail_page(2, 3, 3), 3: _tail_page(3, 3, 2)}
    result, wh, srv = _refresh(tmp_path, {1: PAGE1.read_bytes(), **tail})
    expected = cells(page1) + [c for body in tail.values() for c in cells(json.loads(body))]
    assert len(expected) == 241 + 4 + 3  # page 2: three indices and one coding; page 3: two and one
    with wh:
        assert result.status == "completed", result.error
        report = result.report
        assert report.scores_loaded + report.scores_quarantined + report.scores_in_duplicates == len(expected)
        assert report.scores_loaded >= 0.99 * len(expected)
        assert report.parse_failures == 0 and report.records_loaded == 200 + 3 + 2
        loaded = wh.con.execute(
            "SELECT benchmark_raw, raw_value, locator FROM score WHERE source_key = 'artificial-analysis'"
        ).fetchall()
        assert Counter(b for b, _, _ in loaded) == Counter(k for _, k, _ in expected)
        got = {(b, v) for b, v, _ in loaded}
        for spot in [("codingIndex", 70.1), ("agenticIndex", 37.4), ("intelligenceIndex", 30.6), ("codingIndex", 60.2)]:
            assert spot in got, spot
        benchmarks = dict(
            wh.con.execute(
                "SELECT benchmark_raw, any_value(benchmark_id) FROM score WHERE source_key = 'artificial-analysis'"
                " GROUP BY 1"
            ).fetchall()
        )
        assert benchmarks == {
            "intelligenceIndex": "aa_intelligence_index_v4",
            "codingIndex": "aa_coding_index_v4",
            "agenticIndex": "aa_agentic_index_v4",
        }
    assert _pages_asked(srv) == [1, 2, 3]
    asked = [r for r in srv.requests if "models/free" in r.path]
    # later pages inherit page 1's headers; a mirror is never sent the key
    assert [r.headers.get("accept") for r in asked] == ["application/json"] * 3
    assert not any("x-api-key" in r.headers for r in asked)


def test_pages_left_at_the_runs_page_limit_are_named_not_dropped(tmp_path: Path, monkeypatch):
    monkeypatch.setattr(R, "MAX_FOLLOWED_PAGES", 2)
    result, wh, _srv = _refresh(tmp_path, {1: PAGE1.read_bytes(), 2: _tail_page(2, 3, 1), 3: _tail_page(3, 3, 1)})
    with wh:
        assert result.status == "failed" and "page_limit" in result.error and f"{aa.API_URL}?page=3" in result.error
        assert wh.scalar("SELECT count(*) FROM score WHERE source_key = 'artificial-analysis'") == 0
