"""The Epoch AI Benchmarking Hub parser on the real 2025-11 export (../shared), plus bad input."""

from __future__ import annotations

import csv
import io
import zipfile
from collections import Counter, defaultdict
from datetime import UTC, datetime
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from sizes import examples

from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore
from evalhouse.curation.registry import load_registry
from evalhouse.ingest.source import FetchMeta, ParseError, SourceState
from evalhouse.ingest.sources import epoch_benchmarks as eb
from evalhouse.schema.eee import EvaluationLog
from evalhouse.schema.fingerprint import record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseFailure

RETRIEVED = datetime(2025, 11, 2, 12, 0, tzinfo=UTC)
GPQA_HEADLINE = "Best score (across scorers)"

# Rows of the real export that are quarantined, and why (asserted exactly below).
# * No score at all: the row carries model metadata only (every declared score cell is empty).
# * No model: Model version is empty and the file has no name column with a value; Epoch's Notes
#   say why ("Model version deliberately omitted because it's a mix of o3 (high) & gpt-4.1", an
#   Aider architect pairing; "multiple models" for Terminal-Bench agents), so the score cannot be
#   attributed to one model.
NO_SCORE = "no score reported"
NO_MODEL = "no model identified"
EXPECTED_FAILURES = {
    "adversarial_nli_external.csv:row 1": NO_SCORE,  # BERT, paper lists no ANLI score
    "adversarial_nli_external.csv:row 2": NO_SCORE,  # XLNET
    "adversarial_nli_external.csv:row 3": NO_SCORE,  # RoBERTa
    "aider_polyglot_external.csv:row 9": NO_MODEL,  # o3 (high) + gpt-4.1 architect pair
    "aider_polyglot_external.csv:row 18": NO_MODEL,  # DeepSeek R1 + claude-3-5-sonnet pair
    "aider_polyglot_external.csv:row 44": NO_MODEL,  # no Model version, no name column
    "aider_polyglot_external.csv:row 48": NO_MODEL,  # QwQ-32B + Qwen 2.5 Coder pair
    "arc_ai2_external.csv:row 131": NO_SCORE,
    "arc_ai2_external.csv:row 132": NO_SCORE,
    "fictionlivebench_external.csv:row 10": NO_MODEL,  # "pending confirmation" of the model
    "os_universe_external.csv:row 9": NO_SCORE,  # an entirely empty row (only an id)
    "superglue_external.csv:row 6": NO_SCORE,
    "terminalbench_external.csv:row 4": NO_MODEL,  # agent over "multiple models"
    "terminalbench_external.csv:row 8": NO_MODEL,
}
# The Epoch Capabilities Index lists 425 models, 283 of them without an ECI score (Epoch shows
# them for metadata only); each of those rows is a "no score reported" failure.
ECI_ROWS_WITHOUT_SCORE = 283
# Values outside their metric's canonical bounds after unit conversion; the canonicaliser would
# quarantine them. None in the 2025-11 export.
IMPOSSIBLE_VALUES: list[tuple[str, str, float]] = []


def _meta(label: str, url: str = "file:///shared/epoch") -> FetchMeta:
    return FetchMeta(source_key=eb.SOURCE.key, url=url, sha256="0" * 64, retrieved_at=RETRIEVED, label=label)


def _parse(body: bytes, label: str) -> list[ParsedRecord | ParseFailure]:
    return list(eb.parse(body, meta=_meta(label)))


def _records(items: list) -> list[ParsedRecord]:
    return [i for i in items if isinstance(i, ParsedRecord)]


def _failures(items: list) -> list[ParseFailure]:
    return [i for i in items if isinstance(i, ParseFailure)]


def _row_of(locator: str) -> int:
    return int(locator.split(":row ")[1].split(":", maxsplit=1)[0])


def _data_rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.fixture(scope="module")
def epoch_files(epoch_dir: Path) -> list[Path]:
    return sorted(epoch_dir.glob("*.csv"))


@pytest.fixture(scope="module")
def parsed(epoch_files: list[Path]) -> dict[str, list]:
    return {p.name: _parse(p.read_bytes(), p.name) for p in epoch_files}


def _csv_bytes(header: list[str], rows: list[list[str]]) -> bytes:
    buf = io.StringIO()
    writer = csv.writer(buf, lineterminator="\n")
    writer.writerow(header)
    writer.writerows(rows)
    return buf.getvalue().encode()


# ------------------------------------------------------------------------------------------
# The declared mapping covers the real export


def test_the_mapping_declares_exactly_the_43_files(epoch_files):
    assert len(epoch_files) == 43
    assert set(eb.MAPPING.files) == {p.name for p in epoch_files}


def test_every_column_of_every_file_is_declared(epoch_files):
    """Nothing is dropped silently: each column is a score, uncertainty, setup, text, fact or ignored."""
    common = eb.MAPPING.common
    shared = {
        common["model_version"],
        common["release_date"],
        common["organization"],
        common["country"],
        common["training_compute"],
        common["source"],
        *common["source_links"],
        *common["ignored"],
    }
    for path in epoch_files:
        fm = eb.MAPPING.files[path.name]
        declared = set(shared) | set(fm.setup) | set(fm.details) | set(fm.model_facts) | set(fm.ignored)
        declared |= set(fm.name_columns)
        for sc in fm.scores:
            declared |= {sc.column, *sc.uncertainty_columns}
        header = next(csv.reader(path.open(newline="", encoding="utf-8")))
        assert set(header) <= declared, (path.name, sorted(set(header) - declared))
        assert set(fm.required_columns(common["model_version"])) <= set(header), path.name


def test_every_row_becomes_one_record_or_fails(epoch_files, parsed):
    for path in epoch_files:
        items = parsed[path.name]
        n_rows = len(_data_rows(path))
        records = Counter(_row_of(r.locator) for r in _records(items))
        failed = {_row_of(f.locator) for f in _failures(items)}
        assert all(v == 1 for v in records.values()), path.name
        assert set(records) | failed == set(range(1, n_rows + 1)), path.name
        assert all(r.locator == f"{path.name}:row {_row_of(r.locator)}" for r in _records(items))


def test_failures_on_the_real_export_are_exactly_the_listed_ones(epoch_dir, parsed):
    failures = [f for items in parsed.values() for f in _failures(items)]
    eci = [f for f in failures if f.locator.startswith("epoch_capabilities_index.csv")]
    others = {f.locator: f.reason for f in failures if f not in eci}
    assert set(others) == set(EXPECTED_FAILURES)
    for locator, reason in others.items():
        assert reason.startswith(EXPECTED_FAILURES[locator]), (locator, reason)
    eci_rows = _data_rows(epoch_dir / "epoch_capabilities_index.csv")
    unscored = {f"epoch_capabilities_index.csv:row {n}" for n, r in enumerate(eci_rows, 1) if not r["ECI Score"]}
    assert len(unscored) == ECI_ROWS_WITHOUT_SCORE
    assert {f.locator for f in eci} == unscored
    assert all(f.reason.startswith(NO_SCORE) and f.payload for f in eci)


def test_record_counts(parsed):
    counts = {name: len(_records(items)) for name, items in parsed.items()}
    assert sum(counts.values()) == 3039
    assert counts["gpqa_diamond.csv"] == 130
    assert counts["epoch_capabilities_index.csv"] == 142


def test_every_record_validates_as_eee(parsed):
    for items in parsed.values():
        for rec in _records(items):
            log = EvaluationLog.model_validate(rec.record)
            assert log.to_json_dict() == rec.record
            assert rec.record["evaluation_id"] == ""
            assert rec.record["retrieved_timestamp"] == str(RETRIEVED.timestamp())


# ------------------------------------------------------------------------------------------
# Registry: benchmarks, metrics and units resolve and convert within bounds


def test_every_result_resolves_and_converts_within_bounds(parsed):
    registry = load_registry()
    canon = Canonicaliser(registry)
    impossible = []
    benchmarks = set()
    for items in parsed.values():
        for rec in _records(items):
            for res in rec.record["evaluation_results"]:
                cfg = res["metric_config"]
                bench = registry.benchmark_for(res["source_data"]["dataset_name"], eb.SOURCE.key)
                assert bench is not None, res["source_data"]["dataset_name"]
                metric = registry.metric_for(cfg["metric_id"])
                assert metric is not None and metric.id == cfg["metric_id"], cfg
                assert metric.kind == cfg["metric_kind"] and metric.lower_is_better == cfg["lower_is_better"]
                unit = registry.unit_for(cfg["metric_unit"])
                assert unit is not None, cfg["metric_unit"]
                assert registry.convert(res["score_details"]["score"], unit, metric.unit) is not None
                score = canon.canonicalise(res, source_key=eb.SOURCE.key)
                if isinstance(score, CanonicalScore):
                    benchmarks.add(score.benchmark_id)
                else:
                    impossible.append((rec.locator, cfg["metric_name"], res["score_details"]["score"]))
    assert impossible == IMPOSSIBLE_VALUES
    assert len(benchmarks) == 44  # 42 benchmark files + ECI + ARC-Easy (a column of arc_ai2)


def test_declared_benchmarks_all_resolve_even_without_rows():
    registry = load_registry()
    for fm in eb.MAPPING.files.values():
        for name in {fm.benchmark, *(sc.benchmark for sc in fm.scores if sc.benchmark)}:
            assert registry.benchmark_for(name, eb.SOURCE.key) is not None, name
    assert registry.benchmark_for("arc_ai2_external.easy", eb.SOURCE.key).id == "arc_easy"
    assert registry.benchmark_for("arc_ai2_external", eb.SOURCE.key).id == "arc_challenge"
    eci = registry.benchmark_for("epoch_capabilities_index", eb.SOURCE.key)
    assert eci.is_composite


def test_gpqa_diamond_from_epoch_and_aa_is_one_benchmark():
    registry = load_registry()
    assert registry.benchmark_for("gpqa_diamond", "epoch-benchmarks").id == "gpqa_diamond"
    assert registry.benchmark_for("gpqa", "artificial-analysis").id == "gpqa_diamond"


# ------------------------------------------------------------------------------------------
# What the records say


def _find(parsed, file: str, row: int) -> dict:
    (rec,) = [r for r in _records(parsed[file]) if r.locator == f"{file}:row {row}"]
    return rec.record


def _result(record: dict, metric_id: str, dataset: str | None = None) -> dict:
    return next(
        r
        for r in record["evaluation_results"]
        if r["metric_config"]["metric_id"] == metric_id
        and (dataset is None or r["source_data"]["dataset_name"] == dataset)
    )


def test_own_run_record(parsed):
    rec = _find(parsed, "gpqa_diamond.csv", 1)
    assert rec["eval_library"] == {"name": "inspect_ai", "version": "unknown"}
    assert rec["source_metadata"]["additional_details"]["evalhouse.evaluated_by"] == "aggregator"
    assert rec["source_metadata"]["evaluator_relationship"] == "third_party"
    assert rec["model_info"]["id"] == "openai/gpt-5-nano-2025-08-07_high"
    res = rec["evaluation_results"][0]
    assert res["evaluation_name"] == "epoch-benchmarks.gpqa_diamond"
    assert res["evaluation_result_id"] == "gpqa_diamond.accuracy"
    assert res["metric_config"]["metric_name"] == GPQA_HEADLINE
    assert res["metric_config"]["metric_unit"] == "proportion"
    assert "value" in res["score_details"]["uncertainty"]["standard_error"]
    assert res["score_details"]["details"]["epoch_record_id"]


def test_units_are_the_declared_ones_not_the_headers(parsed):
    cad = _result(_find(parsed, "cad_eval_external.csv", 1), "pass_rate")
    assert cad["metric_config"]["metric_name"] == "Overall pass (%)"
    assert (cad["metric_config"]["metric_unit"], cad["score_details"]["score"]) == ("proportion", 0.32)
    aider = _result(_find(parsed, "aider_polyglot_external.csv", 1), "pass_rate")
    assert (aider["metric_config"]["metric_unit"], aider["score_details"]["score"]) == ("percent", 88.0)
    assert aider["metric_config"]["max_score"] == 100.0
    assert aider["generation_config"]["additional_details"] == {"prompting": "diff"}


def test_uncertainty_columns(parsed):
    arena = _result(_find(parsed, "webdev_arena_external.csv", 1), "elo")
    assert arena["score_details"]["score"] == 1477.51
    ci = arena["score_details"]["uncertainty"]["confidence_interval"]
    assert (ci["lower"], ci["upper"], ci["confidence_level"]) == (1468.65, 1484.85, 0.95)
    assert arena["score_details"]["uncertainty"]["num_samples"] == 5848
    assert arena["metric_config"]["min_score"] == "-Infinity"
    metr = _result(_find(parsed, "metr_time_horizons_external.csv", 1), "time_horizon")
    assert metr["metric_config"]["metric_unit"] == "minutes"
    ci = metr["score_details"]["uncertainty"]["confidence_interval"]
    assert ci["lower"] <= metr["score_details"]["score"] <= ci["upper"]
    balrog = _find(parsed, "balrog_external.csv", 1)
    ids = [r["metric_config"]["metric_id"] for r in balrog["evaluation_results"]]
    assert ids[:2] == ["progress", "progress.babyai"]
    assert all("standard_error" in r["score_details"]["uncertainty"] for r in balrog["evaluation_results"])


def test_arc_easy_is_its_own_benchmark_in_the_same_record(parsed):
    both = [
        rec.record for rec in _records(parsed["arc_ai2_external.csv"]) if len(rec.record["evaluation_results"]) == 2
    ]
    assert len(both) >= 70
    challenge, easy = both[0]["evaluation_results"]
    assert challenge["source_data"]["dataset_name"] == "arc_ai2_external"
    assert easy["source_data"]["dataset_name"] == "arc_ai2_external.easy"
    assert easy["evaluation_result_id"] == "arc_ai2_external.easy.accuracy"
    assert easy["evaluation_name"] == "epoch-benchmarks.arc_ai2_external.easy"


def test_setup_and_text_columns(parsed):
    live = _find(parsed, "live_bench_external.csv", 1)["evaluation_results"][0]
    assert live["generation_config"]["additional_details"] == {"benchmark_version": "LiveBench-2024-11-25"}
    assert "livebench_model" in live["score_details"]["details"]
    shots = Counter(
        r["generation_config"]["additional_details"]["shots"]
        for items in parsed.values()
        for rec in _records(items)
        for r in rec.record["evaluation_results"]
        if "shots" in r.get("generation_config", {}).get("additional_details", {})
    )
    assert "25-shot" not in shots and "0\n" not in shots
    assert shots["25"] >= 10 and shots["few"] > 0
    tb = _find(parsed, "terminalbench_external.csv", 1)["evaluation_results"][0]
    assert tb["generation_config"]["additional_details"] == {"agent": "Ante"}


def test_who_ran_it(parsed):
    by_row = defaultdict(set)
    for items in parsed.values():
        for rec in _records(items):
            details = rec.record["source_metadata"]["additional_details"]
            by_row[details.get("evalhouse.original_source", "")].add(
                (details["evalhouse.evaluated_by"], rec.record["source_metadata"]["evaluator_relationship"])
            )
    assert by_row["ARC Prize Leaderboard"] == {("benchmark_creator", "third_party")}
    assert by_row["Stanford HELM"] <= {("independent_evaluator", "third_party")}
    llama2 = by_row["Llama 2: Open Foundation and Fine-Tuned Chat Models"]
    assert ("model_developer", "first_party") in llama2  # Meta scoring Llama 2
    assert ("independent_evaluator", "third_party") in llama2  # Meta scoring MPT and Falcon
    values = {v for pairs in by_row.values() for v, _ in pairs}
    assert values <= {
        "model_developer",
        "benchmark_creator",
        "independent_evaluator",
        "aggregator",
        "unknown",
    }


def test_model_info(parsed):
    eci = _find(parsed, "epoch_capabilities_index.csv", 1)
    assert eci["model_info"]["name"] == "gpt-5-nano-2025-08-07_high"  # the identifier resolves
    assert eci["model_info"]["additional_details"]["evalhouse.original_model_name"] == "GPT-5 nano (high)"
    assert eci["model_info"]["additional_details"]["model_availability"] == "closed_weights"
    assert eci["model_info"]["additional_details"]["model_accessibility"] == "API access"
    assert eci["evaluation_results"][0]["metric_config"]["metric_id"] == "index"
    osw = _find(parsed, "os_world_external.csv", 2)["model_info"]
    assert osw["id"] == "unknown/Agent S2 w/ Claude 3.7 (50 steps)"
    assert osw["additional_details"][eb.MODEL_ID_COLUMN] == "Agent"
    mmlu = _find(parsed, "mmlu_external.csv", 1)["model_info"]
    assert (mmlu["id"], mmlu["name"], mmlu["developer"]) == (
        "amazon/amazon.nova-lite-v1:0",
        "amazon.nova-lite-v1:0",
        "Amazon",
    )
    assert mmlu["additional_details"]["evalhouse.original_model_name"] == "Amazon Nova Lite"
    details = mmlu["additional_details"]
    assert (details["release_date"], details["evalhouse.release_date_precision"]) == ("2024-12-03", "day")
    assert details["evalhouse.release_date_kind"] == "aggregator_field"


# ------------------------------------------------------------------------------------------
# The zip export


def _zip(members: dict[str, bytes]) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as archive:
        for name, data in members.items():
            archive.writestr(name, data)
    return buf.getvalue()


def test_zip_parses_to_the_same_records_as_the_files(epoch_files, parsed):
    members = {f"benchmark_data/{p.name}": p.read_bytes() for p in reversed(epoch_files)}
    items = _parse(_zip(members), "benchmark_data.zip")
    one_by_one = [i for p in epoch_files for i in parsed[p.name]]
    assert [i.locator for i in items] == [i.locator for i in one_by_one]
    assert [i.record for i in _records(items)] == [i.record for i in _records(one_by_one)]
    assert [record_fingerprint(r.record) for r in _records(items)] == [
        record_fingerprint(r.record) for r in _records(one_by_one)
    ]


def test_zip_member_without_mapping_fails_row_by_row(epoch_dir):
    new = _csv_bytes(["Model version", "Score"], [["gpt-9", "0.5"], ["gpt-10", "0.6"]])
    gpqa = (epoch_dir / "gpqa_diamond.csv").read_bytes()
    items = _parse(_zip({"new_benchmark.csv": new, "gpqa_diamond.csv": gpqa, "README.txt": b"hi"}), "x.zip")
    unmapped = [i for i in items if i.locator.startswith("new_benchmark.csv")]
    assert [i.locator for i in unmapped] == ["new_benchmark.csv:row 1", "new_benchmark.csv:row 2"]
    assert all(isinstance(i, ParseFailure) and "no mapping for new_benchmark.csv" in i.reason for i in unmapped)
    assert len(_records(items)) == 130


def test_truncated_or_corrupt_zip_is_a_parse_error(epoch_dir):
    body = _zip({"gpqa_diamond.csv": (epoch_dir / "gpqa_diamond.csv").read_bytes()})
    with pytest.raises(ParseError, match="truncated or corrupt"):
        _parse(body[: len(body) // 2], "benchmark_data.zip")
    corrupt = bytearray(body)
    corrupt[60:90] = bytes(30)  # inside the deflated data: CRC or inflate error
    with pytest.raises(ParseError):
        _parse(bytes(corrupt), "benchmark_data.zip")
    with pytest.raises(ParseError, match="no CSV files"):
        _parse(_zip({"notes.txt": b"x"}), "benchmark_data.zip")
    with pytest.raises(ParseError, match="expected the Epoch zip"):
        _parse(b"<html>gateway timeout</html>", "benchmark_data.zip")


# ------------------------------------------------------------------------------------------
# Bad input


def test_a_single_csv_needs_its_file_name(epoch_dir):
    body = (epoch_dir / "gpqa_diamond.csv").read_bytes()
    with pytest.raises(ParseError, match="needs its file name"):
        list(eb.parse(body, meta=_meta(label=None, url="https://example.org/download")))
    by_url = list(eb.parse(body, meta=_meta(label=None, url="file:///data/gpqa_diamond.csv?x=1")))
    assert len(_records(by_url)) == 130


def test_changed_header_fails_every_row(epoch_dir):
    text = (epoch_dir / "gpqa_diamond.csv").read_text(encoding="utf-8")
    items = _parse(text.replace(GPQA_HEADLINE, "Best score", 1).encode(), "gpqa_diamond.csv")
    assert len(items) == 130 and not _records(items)
    assert all(GPQA_HEADLINE in f.reason and "found header" in f.reason for f in items)
    assert items[0].locator == "gpqa_diamond.csv:row 1" and items[0].payload


@pytest.mark.parametrize("cell", ["N/A", "87.5%", "—", "NaN", "nan", "inf", "1_000", "0,5"])
def test_bad_headline_cell_is_quarantined_and_other_rows_load(epoch_dir, cell):
    rows = _data_rows(epoch_dir / "gpqa_diamond.csv")[:3]
    header = list(rows[0])
    rows[1][GPQA_HEADLINE] = cell
    items = _parse(_csv_bytes(header, [list(r.values()) for r in rows]), "gpqa_diamond.csv")
    (failure,) = _failures(items)
    assert failure.locator == f"gpqa_diamond.csv:row 2:column '{GPQA_HEADLINE}'"
    assert repr(cell) in failure.reason and "proportion" in failure.reason and GPQA_HEADLINE in failure.reason
    assert [r.locator for r in _records(items)] == ["gpqa_diamond.csv:row 1", "gpqa_diamond.csv:row 3"]


def test_bad_cell_among_good_cells_keeps_the_record(epoch_dir):
    rows = _data_rows(epoch_dir / "balrog_external.csv")[:1]
    rows[0]["Crafter progress"] = "—"
    rows[0]["BabyAI Standard error"] = "n/a"
    rows[0]["Release date"] = "2024-13-45"
    items = _parse(_csv_bytes(list(rows[0]), [list(rows[0].values())]), "balrog_external.csv")
    failures = {f.locator: f.reason for f in _failures(items)}
    assert set(failures) == {
        "balrog_external.csv:row 1:column 'Crafter progress'",
        "balrog_external.csv:row 1:column 'BabyAI Standard error'",
        "balrog_external.csv:row 1:column 'Release date'",
    }
    assert "'2024-13-45'" in failures["balrog_external.csv:row 1:column 'Release date'"]
    (rec,) = _records(items)
    ids = [r["metric_config"]["metric_id"] for r in rec.record["evaluation_results"]]
    assert "progress.crafter" not in ids and len(ids) == 6
    baby = _result(rec.record, "progress.babyai")
    assert "uncertainty" not in baby["score_details"]
    assert "release_date" not in rec.record["model_info"]["additional_details"]


def test_ragged_row_and_undecodable_file(epoch_dir):
    rows = _data_rows(epoch_dir / "vpct_external.csv")[:2]
    body = _csv_bytes(list(rows[0]), [list(rows[0].values()), [*rows[1].values(), "extra"]])
    items = _parse(body, "vpct_external.csv")
    assert "row has" in _failures(items)[0].reason and len(_records(items)) == 1
    with pytest.raises(ParseError, match="not UTF-8"):
        _parse(b"Model version,Correct\n\xff\xfe,0.5\n", "vpct_external.csv")
    with pytest.raises(ParseError, match="empty"):
        _parse(b"", "vpct_external.csv")


# ------------------------------------------------------------------------------------------
# Plan and spec


def test_plan_is_one_conditional_get():
    (req,) = eb.plan(SourceState(etags={eb.ZIP_URL: '"abc"'}, last_modified={eb.ZIP_URL: "Sun, 02 Nov 2025"}))
    assert (req.url, req.etag, req.last_modified) == (eb.ZIP_URL, '"abc"', "Sun, 02 Nov 2025")
    (fresh,) = eb.plan(SourceState())
    assert fresh.etag is None and fresh.last_modified is None


def test_source_spec():
    spec = eb.SOURCE
    assert (spec.key, spec.module_name, spec.tier, spec.kind) == (
        "epoch-benchmarks",
        "epoch_benchmarks",
        2,
        "aggregator_export",
    )
    assert spec.cadence == "daily" and "CC BY 4.0" in (spec.licence or "")


# ------------------------------------------------------------------------------------------
# Properties


@settings(max_examples=examples(150), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.binary(max_size=2048), label=st.sampled_from(["gpqa_diamond.csv", "benchmark_data.zip", "x.csv"]))
def test_arbitrary_bytes_raise_only_parse_error(body, label):
    try:
        items = _parse(body, label)
    except ParseError:
        return
    assert all(isinstance(i, ParsedRecord | ParseFailure) for i in items)


@pytest.fixture(scope="module")
def small_zip(epoch_dir: Path) -> bytes:
    return _zip({n: (epoch_dir / n).read_bytes() for n in ("vpct_external.csv", "gso_external.csv")})


@settings(max_examples=examples(60), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=20_000), flip=st.integers(min_value=0, max_value=20_000))
def test_truncated_or_damaged_zip_raises_only_parse_error(small_zip, cut, flip):
    damaged = bytearray(small_zip[: cut % (len(small_zip) + 1)])
    if damaged:
        damaged[flip % len(damaged)] ^= 0xFF
    try:
        items = _parse(bytes(damaged), "benchmark_data.zip")
    except ParseError:
        return
    assert all(isinstance(i, ParsedRecord | ParseFailure) for i in items)


@settings(max_examples=examples(40), deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(cut=st.integers(min_value=0, max_value=60_000))
def test_truncated_csv_never_crashes_and_parsing_is_deterministic(epoch_dir, cut):
    body = (epoch_dir / "webdev_arena_external.csv").read_bytes()[:cut]
    try:
        first = _parse(body, "webdev_arena_external.csv")
    except ParseError:
        return
    again = _parse(body, "webdev_arena_external.csv")
    assert [(type(i), i.locator, getattr(i, "record", None), getattr(i, "reason", None)) for i in first] == [
        (type(i), i.locator, getattr(i, "record", None), getattr(i, "reason", None)) for i in again
    ]
