"""The Artificial Analysis parser: the paper-000 CSV (../shared), page and API fixtures, bad input."""

from __future__ import annotations

import csv
import io
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sizes import examples

from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore
from evalhouse.curation.registry import load_registry
from evalhouse.ingest.source import FetchMeta, ParseError, SourceState
from evalhouse.ingest.sources import artificial_analysis as aa
from evalhouse.schema.eee import EvaluationLog
from evalhouse.schema.fingerprint import record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseFailure

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "artificial-analysis"
RETRIEVED = datetime(2026, 7, 6, 15, 17, 51, tzinfo=UTC)
FIXTURE_SLUGS = [
    "qwen3-5-9b",
    "glm-4-5v",
    "o3-mini",
    "gemini-3-5-flash",
    "grok-build-0-1-06-16",
    "exaone-4-5-33b-non-reasoning",
]
NO_SCORE_SLUG = "exaone-4-5-33b-non-reasoning"
# Four of the 548 CSV rows carry no benchmark score and no intelligence index (metadata-only
# listings: EXAONE 4.5 33B, GPT-4o mini Realtime, GPT-3.5 Turbo 0613, GPT-4o Realtime); they are
# still configurations of the leaderboard, so they load as records with no results: 548 records.
NO_SCORE_ROWS = ["row 123", "row 151", "row 318", "row 499"]
# The canonical benchmark of every AA field (other modules code against these ids).
AA_BENCHMARKS = {
    "tau2": "tau2_bench",
    "tauBanking": "tau3_banking",
    "terminalbenchV21": "terminal_bench_v2_1",
    "terminalbenchHard": "terminal_bench_hard",
    "scicode": "scicode",
    "lcr": "aa_lcr",
    "omniscience": "aa_omniscience",
    "ifbench": "ifbench",
    "hle": "hle",
    "gpqa": "gpqa_diamond",
    "critpt": "critpt",
    "mmmuPro": "mmmu_pro",
    "apexAgents": "apex_agents",
    "gdpval": "gdpval",
    "intelligenceIndex": "aa_intelligence_index_v4",
    "mmlu_pro": "mmlu_pro",
    "livecodebench": "livecodebench",
    "math_500": "math_500",
    "aime": "aime",
    "aime_25": "aime_2025",
    "codingIndex": "aa_coding_index_v4",
    "agenticIndex": "aa_agentic_index_v4",
}
IMPOSSIBLE_VALUES: list[tuple[str, str, float]] = []  # none in the 2026-07-06 snapshot


def _meta(url: str = aa.PAGE_URL, label: str | None = None, content_type: str | None = None) -> FetchMeta:
    return FetchMeta(
        source_key=aa.SOURCE.key,
        url=url,
        sha256="0" * 64,
        retrieved_at=RETRIEVED,
        content_type=content_type,
        label=label,
    )


def _parse(body: bytes, meta: FetchMeta | None = None) -> list[ParsedRecord | ParseFailure]:
    return list(aa.parse(body, meta=meta or _meta()))


def _records(items: list) -> list[ParsedRecord]:
    return [i for i in items if isinstance(i, ParsedRecord)]


def _failures(items: list) -> list[ParseFailure]:
    return [i for i in items if isinstance(i, ParseFailure)]


def _by_slug(items: list) -> dict[str, dict]:
    return {r.record["model_info"]["additional_details"]["slug"]: r.record for r in _records(items)}


@pytest.fixture(scope="module")
def csv_items(aa_csv: Path) -> list:
    return _parse(aa_csv.read_bytes(), _meta(url=aa_csv.as_uri(), label=aa_csv.name))


@pytest.fixture(scope="module")
def csv_rows(aa_csv: Path) -> list[dict[str, str]]:
    with aa_csv.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def _csv_body(rows: list[dict[str, str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.DictWriter(buf, fieldnames=list(rows[0]), lineterminator="\n")
    writer.writeheader()
    writer.writerows(rows)
    return buf.getvalue().encode()


# ------------------------------------------------------------------------------------------
# The CSV snapshot


def test_csv_gives_one_record_per_configuration(csv_items, csv_rows):
    assert len(csv_rows) == 548
    records, failures = _records(csv_items), _failures(csv_items)
    assert len(records) == 548 and failures == []
    empty = [r.locator for r in records if not r.record["evaluation_results"]]
    assert empty == NO_SCORE_ROWS
    assert all(r.record["model_info"]["additional_details"].get("release_date") for r in records if r.locator in empty)
    assert len({r.record["model_info"]["id"] for r in records}) == 548
    assert [r.locator for r in records][:2] == ["row 1", "row 2"]


def test_every_csv_column_is_read_or_declared_ignored(csv_rows):
    header = set(csv_rows[0])
    read = set(aa.csv_columns())
    assert read <= header
    assert header - read == {"openSourceCategorization"}  # empty in every row; declared ignored
    assert "openSourceCategorization" in aa._MAPPING["ignored"]


def test_every_record_validates_and_every_score_maps(csv_items):
    registry = load_registry()
    canon = Canonicaliser(registry)
    seen: dict[str, int] = {}
    impossible = []
    for rec in _records(csv_items):
        assert EvaluationLog.model_validate(rec.record).to_json_dict() == rec.record
        for res in rec.record["evaluation_results"]:
            name = res["source_data"]["dataset_name"]
            bench = registry.benchmark_for(name, aa.SOURCE.key)
            assert bench is not None and bench.id == AA_BENCHMARKS[name], name
            cfg = res["metric_config"]
            metric = registry.metric_for(cfg["metric_id"])
            assert metric is not None and metric.kind == cfg["metric_kind"]
            assert metric.lower_is_better == cfg["lower_is_better"]
            assert (
                registry.convert(res["score_details"]["score"], registry.unit_for(cfg["metric_unit"]), metric.unit)
                is not None
            )
            score = canon.canonicalise(res, source_key=aa.SOURCE.key)
            if not isinstance(score, CanonicalScore):
                impossible.append((rec.locator, name, res["score_details"]["score"]))
            seen[name] = seen.get(name, 0) + 1
    assert impossible == IMPOSSIBLE_VALUES
    # Non-null counts of SOURCE.md's column table.
    assert seen == {
        "intelligenceIndex": 535,
        "tau2": 428,
        "tauBanking": 112,
        "terminalbenchV21": 121,
        "terminalbenchHard": 421,
        "scicode": 507,
        "lcr": 441,
        "omniscience": 418,
        "ifbench": 437,
        "hle": 509,
        "gpqa": 513,
        "critpt": 422,
        "mmmuPro": 204,
        "apexAgents": 26,
        "gdpval": 117,
    }


def test_every_declared_benchmark_has_its_registry_entry():
    registry = load_registry()
    for bench in aa.BENCHMARKS:
        assert registry.benchmark_for(bench.key, aa.SOURCE.key).id == AA_BENCHMARKS[bench.key]
        for path in bench.value.paths.values():
            assert registry.benchmark_for(path.split(".")[-1], aa.SOURCE.key) is not None or "." in path
    index = registry.benchmarks["aa_intelligence_index_v4"]
    assert index.is_composite and index.family == "aa_intelligence_index"
    assert "inferred" in (index.description or "")


def test_record_content(csv_items):
    rec = _by_slug(csv_items)["qwen3-5-9b"]
    info = rec["model_info"]
    assert (info["name"], info["id"], info["developer"]) == (
        "Qwen3.5 9B (Reasoning)",
        "alibaba/qwen3-5-9b",
        "Alibaba",
    )
    details = info["additional_details"]
    assert details["short_name"] == "Qwen3.5 9B" and details["slug"] == "qwen3-5-9b"
    assert (details["is_reasoning"], details["model_availability"]) == ("true", "open_weights")
    assert details["total_parameters_b"] == "9.65" and details["intelligence_index"] == "21.4379662021172"
    assert (details["release_date"], details["evalhouse.release_date_kind"]) == (
        "2026-03-02",
        "aggregator_field",
    )
    assert rec["eval_library"] == {"name": "artificial-analysis", "version": "unknown"}
    assert rec["source_metadata"]["additional_details"]["evalhouse.evaluated_by"] == "aggregator"
    results = {r["source_data"]["dataset_name"]: r for r in rec["evaluation_results"]}
    gdpval = results["gdpval"]
    assert gdpval["score_details"]["score"] == 631.99
    assert gdpval["score_details"]["uncertainty"]["confidence_interval"] == {
        "lower": 610.26,
        "upper": 653.73,
        "confidence_level": 0.95,
    }
    assert (gdpval["metric_config"]["metric_unit"], gdpval["metric_config"]["max_score"]) == (
        "elo",
        "Infinity",
    )
    omni = results["omniscience"]["metric_config"]
    assert (omni["metric_id"], omni["metric_unit"], omni["min_score"], omni["max_score"]) == (
        "penalised_score",
        "points",
        -100.0,
        100.0,
    )
    index = results["intelligenceIndex"]
    assert index["evaluation_result_id"] == "intelligenceIndex.index"
    assert index["score_details"]["details"] == {"intelligence_index_is_estimated": "false"}
    assert results["gpqa"]["evaluation_name"] == "artificial-analysis.gpqa"


def test_missing_release_date_is_just_absent(csv_items):
    details = _by_slug(csv_items)["grok-build-0-1-06-16"]["model_info"]["additional_details"]
    assert "release_date" not in details and "evalhouse.release_date_precision" not in details


# ------------------------------------------------------------------------------------------
# Three forms, one record


@pytest.fixture(scope="module")
def page_items() -> list:
    return _parse((FIXTURES / "leaderboard_page.html").read_bytes(), _meta(aa.PAGE_URL, "page", "text/html"))


@pytest.fixture(scope="module")
def api_items() -> list:
    return _parse((FIXTURES / "api_models.json").read_bytes(), _meta(aa.API_URL, "api", "application/json"))


@pytest.mark.parametrize("form", ["page", "api"])
def test_page_and_api_give_the_csv_records(form, csv_items, page_items, api_items):
    items = page_items if form == "page" else api_items
    by_csv, by_form = _by_slug(csv_items), _by_slug(items)
    assert list(by_form) == FIXTURE_SLUGS
    for slug in FIXTURE_SLUGS:
        assert by_form[slug]["evaluation_results"] == by_csv[slug]["evaluation_results"], slug
        assert by_form[slug]["model_info"] == by_csv[slug]["model_info"], slug
        assert by_form[slug] == by_csv[slug], slug
        assert record_fingerprint(by_form[slug]) == record_fingerprint(by_csv[slug])
    assert _failures(items) == []
    prefix = "models" if form == "page" else "data"
    (empty,) = [r for r in _records(items) if not r.record["evaluation_results"]]
    assert empty.locator == f"{prefix}[5] slug={NO_SCORE_SLUG}"
    assert empty.record == _by_slug(csv_items)[NO_SCORE_SLUG]
    assert _records(items)[0].locator == f"{prefix}[0] slug=qwen3-5-9b"


def test_page_reads_the_richest_models_array_and_ignores_raw_gdpval(page_items):
    records = _by_slug(page_items)
    gemini = {r["source_data"]["dataset_name"]: r for r in records["gemini-3-5-flash"]["evaluation_results"]}
    assert gemini["gdpval"]["score_details"]["score"] == 1346.5  # from gdpvalBreakdown, not gdpval: 0
    glm = records["glm-4-5v"]
    assert "gdpval" not in {r["source_data"]["dataset_name"] for r in glm["evaluation_results"]}
    assert "training_tokens_trillions" not in glm["model_info"]["additional_details"]  # "$undefined"
    assert glm["model_info"]["additional_details"]["total_parameters_b"] == "108.0"  # page writes 108


def test_form_is_told_from_content_not_url(page_items):
    body = (FIXTURES / "leaderboard_page.html").read_bytes()
    assert _by_slug(_parse(body, _meta("file:///tmp/snapshot.html"))) == _by_slug(page_items)


def test_api_only_benchmarks_are_read_from_the_api():
    body = json.loads((FIXTURES / "api_models.json").read_text(encoding="utf-8"))
    model = body["data"][2]  # o3-mini
    model["evaluations"].update(
        {"mmlu_pro": 0.791, "livecodebench": 0.717, "math_500": 0.973, "aime": 0.77, "aime_25": 0.6}
    )
    body["data"] = [model]
    (rec,) = _records(_parse(json.dumps(body).encode(), _meta(aa.API_URL)))
    registry = load_registry()
    got = {
        r["source_data"]["dataset_name"]: (r["score_details"]["score"], r["metric_config"]["metric_unit"])
        for r in rec.record["evaluation_results"]
    }
    for key, score in {
        "mmlu_pro": 0.791,
        "livecodebench": 0.717,
        "math_500": 0.973,
        "aime": 0.77,
        "aime_25": 0.6,
    }.items():
        assert got[key] == (score, "proportion")
        assert registry.benchmark_for(key, aa.SOURCE.key).id == AA_BENCHMARKS[key]


# ------------------------------------------------------------------------------------------
# Bad input


def test_page_without_payload_names_what_is_missing():
    with pytest.raises(ParseError, match=r"self\.__next_f\.push"):
        _parse(b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body></body></html>")
    no_models = b'<html><script>self.__next_f.push([1,"1:[\\"$\\",\\"div\\",null,{}]\\n"])</script></html>'
    with pytest.raises(ParseError, match='"models"'):
        _parse(no_models)


def test_api_body_that_is_html_is_a_parse_error():
    page = (FIXTURES / "leaderboard_page.html").read_bytes()
    with pytest.raises(ParseError, match=r"expected JSON from the AA API, got HTML \(.*LLM Leaderboard"):
        _parse(page, _meta(aa.API_URL, "api"))
    with pytest.raises(ParseError, match='no "data" list'):
        _parse(b'{"error": "unauthorized", "status": 401}', _meta(aa.API_URL))
    with pytest.raises(ParseError, match="not valid JSON"):
        _parse(b'{"data": [', _meta(aa.API_URL))


def test_csv_with_changed_header_is_a_parse_error(aa_csv):
    text = aa_csv.read_text(encoding="utf-8")
    header, rest = text.split("\n", 1)
    changed = header.replace("gdpval_elo", "gdpvalElo").replace(",tau2,", ",tau2Telecom,")
    with pytest.raises(ParseError, match=r"columns \['tau2', 'gdpval_elo'\] are missing; found header"):
        _parse(f"{changed}\n{rest}".encode())


@pytest.mark.parametrize("cell", ["N/A", "87.5%", "—", "NaN", "nan", "inf"])
def test_bad_score_cells_are_quarantined_and_the_rest_loads(csv_rows, cell):
    rows = [dict(r) for r in csv_rows[:3]]
    rows[1]["gpqa"] = cell
    items = _parse(_csv_body(rows))
    (failure,) = _failures(items)
    assert failure.locator == "row 2:field 'gpqa'"
    assert repr(cell) in failure.reason and "proportion" in failure.reason and "'gpqa'" in failure.reason
    assert [r.locator for r in _records(items)] == ["row 1", "row 2", "row 3"]
    names = {r["source_data"]["dataset_name"] for r in _records(items)[1].record["evaluation_results"]}
    assert "gpqa" not in names and "hle" in names


def test_bad_facts_and_dates_keep_the_record(csv_rows):
    rows = [dict(csv_rows[0])]
    rows[0]["releaseDate"] = "2025-02-30"
    rows[0]["isReasoning"] = "maybe"
    rows[0]["totalParameters"] = "108B"
    items = _parse(_csv_body(rows))
    reasons = {f.locator: f.reason for f in _failures(items)}
    assert set(reasons) == {
        "row 1:field 'releaseDate'",
        "row 1:field 'isReasoning'",
        "row 1:field 'totalParameters'",
    }
    (rec,) = _records(items)
    details = rec.record["model_info"]["additional_details"]
    assert "release_date" not in details and "is_reasoning" not in details and "total_parameters_b" not in details


def test_api_nan_literal_and_non_object_models():
    body = json.loads((FIXTURES / "api_models.json").read_text(encoding="utf-8"))
    body["data"] = [body["data"][0], "not a model", 7]
    text = json.dumps(body).replace('"gpqa": 0.806060606060606', '"gpqa": NaN')
    items = _parse(text.encode(), _meta(aa.API_URL))
    failures = {f.locator: f.reason for f in _failures(items)}
    assert "data[0] slug=qwen3-5-9b:field 'evaluations.gpqa'" in failures
    assert "data[1]" in failures and "data[2]" in failures
    assert len(_records(items)) == 1


# ------------------------------------------------------------------------------------------
# Plan and spec


def test_plan_uses_the_api_only_with_a_key():
    (req,) = aa.plan(SourceState(env={aa.API_KEY_ENV: "sk-test-123"}, etags={aa.api_page_url(1): '"e0"'}))
    assert req.url == f"{aa.API_URL}?page=1" and req.headers["x-api-key"] == "sk-test-123"
    assert req.etag is None  # page 1 unchanged says nothing of the pages after it
    assert "x-api-key" in req.secret_headers
    assert req.redacted_params()["headers"]["x-api-key"] != "sk-test-123"
    (page,) = aa.plan(SourceState(env={}, etags={aa.PAGE_URL: '"e1"'}))
    assert (page.url, page.etag, dict(page.headers)) == (aa.PAGE_URL, '"e1"', {})


def test_source_spec():
    spec = aa.SOURCE
    assert (spec.key, spec.module_name, spec.tier, spec.kind) == (
        "artificial-analysis",
        "artificial_analysis",
        2,
        "leaderboard",
    )
    assert spec.optional_env == ("EVALHOUSE_AA_API_KEY",) and spec.cadence == "daily"


# ------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=examples(150), deadline=None)
@given(
    body=st.one_of(
        st.binary(max_size=2048),
        st.text(max_size=500).map(lambda t: ("<html>" + t).encode()),
        st.text(max_size=500).map(lambda t: ('{"data":' + t).encode()),
        st.text(max_size=500).map(lambda t: ("self.__next_f.push([1," + t).encode()),
    ),
    url=st.sampled_from([aa.PAGE_URL, aa.API_URL, "file:///x.csv"]),
)
def test_arbitrary_bytes_raise_only_parse_error(body, url):
    try:
        items = _parse(body, _meta(url))
    except ParseError:
        return
    assert all(isinstance(i, ParsedRecord | ParseFailure) for i in items)


@settings(max_examples=examples(80), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(
    name=st.sampled_from(["leaderboard_page.html", "api_models.json"]),
    cut=st.integers(min_value=0, max_value=12_000),
    flip=st.integers(min_value=0, max_value=12_000),
)
def test_truncated_or_damaged_fixtures_raise_only_parse_error_and_are_deterministic(name, cut, flip):
    damaged = bytearray((FIXTURES / name).read_bytes()[:cut])
    if damaged and flip % 3 == 0:
        damaged[flip % len(damaged)] ^= 0x55
    try:
        first = _parse(bytes(damaged))
    except ParseError:
        return
    again = _parse(bytes(damaged))
    assert [(i.locator, getattr(i, "record", None)) for i in first] == [
        (i.locator, getattr(i, "record", None)) for i in again
    ]


def test_parsing_the_csv_twice_gives_the_same_records(aa_csv, csv_items):
    again = _parse(aa_csv.read_bytes(), _meta(url=aa_csv.as_uri(), label=aa_csv.name))
    assert [i.record for i in _records(again)] == [i.record for i in _records(csv_items)]
