"""The pydantic EEE models against the upstream JSON Schemas and sample files."""

from __future__ import annotations

import copy
import json
import math
from pathlib import Path

import jsonschema
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError
from sizes import examples

from evalhouse.schema.eee import EvaluationLog, InstanceRecord, MetricConfig, SchemaVersionError
from evalhouse.schema.fingerprint import normalized_hash, record_fingerprint

DEMO = "formats/eee/demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40"


@pytest.fixture(scope="module")
def schemas(shared: Path) -> tuple[dict, dict]:
    eee = shared / "formats" / "eee"
    return json.loads((eee / "eval.schema.json").read_text()), json.loads(
        (eee / "instance_level_eval.schema.json").read_text()
    )


@pytest.fixture(scope="module")
def demo(shared: Path) -> dict:
    return json.loads((shared / f"{DEMO}.json").read_text())


def minimal_record(**overrides: object) -> dict:
    record = {
        "schema_version": "0.3.0",
        "evaluation_id": "demo/x/1",
        "retrieved_timestamp": "1750000000.5",
        "source_metadata": {
            "source_type": "documentation",
            "source_organization_name": "Org",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "unknown", "version": "unknown"},
        "model_info": {
            "name": "m",
            "id": "org/m",
            "additional_details": {"deployment_type": "unknown", "model_availability": "unknown"},
        },
        "evaluation_results": [
            {
                "evaluation_name": "bench",
                "source_data": {"dataset_name": "bench", "source_type": "other"},
                "metric_config": {
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": 0,
                    "max_score": 1,
                },
                "score_details": {"score": 0.5},
            }
        ],
    }
    record.update(overrides)
    return record


def test_demo_aggregate_and_samples_load(shared: Path, demo: dict, schemas: tuple[dict, dict]) -> None:
    log = EvaluationLog.model_validate(demo)
    assert log.model_info.id == "demo-org/demo-model"
    assert log.evaluation_results[0].score_details.score == 0.75
    jsonschema.validate(log.to_json_dict(), schemas[0])
    for line in (shared / f"{DEMO}_samples.jsonl").read_text().splitlines():
        row = InstanceRecord.model_validate_json(line)
        jsonschema.validate(row.to_json_dict(), schemas[1])
        assert row.evaluation_id == log.evaluation_id


def test_model_output_roundtrips_the_demo_exactly(demo: dict) -> None:
    assert EvaluationLog.model_validate(demo).to_json_dict() == demo


def test_legacy_020_record_is_rejected_naming_the_version(shared: Path) -> None:
    legacy = json.loads((shared / "formats" / "eee" / "example_aggregate.json").read_text())
    with pytest.raises(ValidationError) as info:
        EvaluationLog.model_validate(legacy)
    message = str(info.value)
    assert "0.2.0" in message and "0.3.0" in message
    assert isinstance(info.value.errors()[0]["ctx"]["error"], SchemaVersionError)


def test_infinite_bounds_serialise_as_strings(schemas: tuple[dict, dict]) -> None:
    record = minimal_record()
    record["evaluation_results"][0]["metric_config"].update(min_score=-math.inf, max_score="Infinity")
    out = EvaluationLog.model_validate(record).to_json_dict()
    cfg = out["evaluation_results"][0]["metric_config"]
    assert (cfg["min_score"], cfg["max_score"]) == ("-Infinity", "Infinity")
    jsonschema.validate(out, schemas[0])
    json.dumps(out, allow_nan=False)  # strict JSON: no bare Infinity literal


@pytest.mark.parametrize(
    ("path", "value"),
    [
        (("evaluation_results", 0, "score_details", "score"), math.nan),
        (("evaluation_results", 0, "metric_config", "max_score"), math.nan),
        (("evaluation_results", 0, "score_details", "score"), math.inf),
    ],
)
def test_nan_and_infinite_scores_are_rejected(path: tuple, value: float) -> None:
    record = minimal_record()
    target = record
    for key in path[:-1]:
        target = target[key]
    target[path[-1]] = value
    with pytest.raises(ValidationError):
        EvaluationLog.model_validate(record)


def test_continuous_needs_bounds_and_levels_need_names() -> None:
    with pytest.raises(ValidationError, match="continuous"):
        MetricConfig.model_validate({"lower_is_better": False, "score_type": "continuous", "min_score": 0})
    with pytest.raises(ValidationError, match="continuous"):
        MetricConfig.model_validate(
            {
                "lower_is_better": False,
                "score_type": "continuous",
                "min_score": 0,
                "max_score": None,
            }
        )
    with pytest.raises(ValidationError, match="levels"):
        MetricConfig.model_validate({"lower_is_better": False, "score_type": "levels", "level_names": ["a"]})
    ok = MetricConfig.model_validate(
        {
            "lower_is_better": False,
            "score_type": "levels",
            "level_names": ["a", "b"],
            "has_unknown_level": False,
        }
    )
    assert ok.level_names == ["a", "b"]


def test_enums_and_closed_top_level() -> None:
    bad = minimal_record()
    bad["source_metadata"]["evaluator_relationship"] = "friends"
    with pytest.raises(ValidationError, match="evaluator_relationship"):
        EvaluationLog.model_validate(bad)
    with pytest.raises(ValidationError, match="extra"):
        EvaluationLog.model_validate(minimal_record(unexpected="x"))
    details = minimal_record()
    details["model_info"]["additional_details"]["params_billions"] = 8.0  # 0.2.0 style: must be a string
    with pytest.raises(ValidationError, match="must be a string"):
        EvaluationLog.model_validate(details)


def test_instance_interaction_shapes(schemas: tuple[dict, dict]) -> None:
    base = {
        "schema_version": "0.3.0",
        "evaluation_id": "e",
        "model_id": "o/m",
        "evaluation_name": "b",
        "sample_id": "1",
        "input": {"raw": "q", "reference": ["a"]},
        "answer_attribution": [
            {
                "turn_idx": 0,
                "source": "output.raw",
                "extracted_value": "a",
                "extraction_method": "match",
                "is_terminal": True,
            }
        ],
        "evaluation": {"score": 1.0, "is_correct": True},
    }
    single = InstanceRecord.model_validate({**base, "interaction_type": "single_turn", "output": {"raw": ["a"]}})
    jsonschema.validate(single.to_json_dict(), schemas[1])
    with pytest.raises(ValidationError, match="single_turn"):
        InstanceRecord.model_validate({**base, "interaction_type": "single_turn", "messages": []})
    agentic = InstanceRecord.model_validate(
        {
            **base,
            "interaction_type": "agentic",
            "messages": [{"turn_idx": 0, "role": "user", "content": "q"}],
        }
    )
    jsonschema.validate(agentic.to_json_dict(), schemas[1])
    with pytest.raises(ValidationError, match="agentic"):
        InstanceRecord.model_validate({**base, "interaction_type": "agentic", "output": {"raw": ["a"]}})


def test_fingerprint_matches_the_eee_tools(demo: dict) -> None:
    eee = pytest.importorskip(
        "every_eval_ever.validator.check_duplicate_entries", reason="every-eval-ever not installed"
    )
    assert normalized_hash(demo) == eee.normalized_hash(demo)


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.text(max_size=5),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4),
    max_leaves=20,
)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.dictionaries(st.text(min_size=1, max_size=6), json_values, min_size=1, max_size=6),
    st.text(),
    st.text(),
    st.randoms(),
)
def test_fingerprint_ignores_key_order_list_order_and_volatile_fields(payload: dict, eid: str, ts: str, rnd) -> None:
    a = {**payload, "evaluation_id": eid, "retrieved_timestamp": ts}
    items = list(a.items())
    rnd.shuffle(items)
    b = {k: (list(reversed(v)) if isinstance(v, list) else v) for k, v in items}
    b["evaluation_id"] = eid + "-other"
    b["retrieved_timestamp"] = ts + "9"
    assert normalized_hash(a) == normalized_hash(b)


def test_fingerprint_sees_a_changed_score_and_ignores_the_samples_path(demo: dict) -> None:
    changed = copy.deepcopy(demo)
    changed["evaluation_results"][0]["score_details"]["score"] = 0.751
    assert record_fingerprint(changed) != record_fingerprint(demo)
    moved = copy.deepcopy(demo)
    moved["detailed_evaluation_results"]["file_path"] = "data/x/y/z/11111111-1111-4111-8111-111111111111_samples.jsonl"
    assert record_fingerprint(moved) == record_fingerprint(demo)


def test_every_record_the_parsers_produce_validates_against_the_json_schema(
    schemas: tuple[dict, dict], aa_csv: Path, epoch_dir: Path
) -> None:
    from datetime import UTC, datetime

    from evalhouse.ingest.pinned import epoch_zip
    from evalhouse.ingest.source import FetchMeta
    from evalhouse.ingest.sources import artificial_analysis, epoch_benchmarks
    from evalhouse.schema.records import ParsedRecord

    validator = jsonschema.Draft7Validator(schemas[0])
    when = datetime(2026, 7, 6, tzinfo=UTC)
    payloads = [
        (artificial_analysis, aa_csv.read_bytes(), "aa_models_raw_parsed.csv"),
        (epoch_benchmarks, epoch_zip(epoch_dir), "benchmark_data.zip"),
    ]
    n = 0
    for module, body, label in payloads:
        meta = FetchMeta(module.SOURCE.key, f"https://example.invalid/{label}", "0" * 64, when, None, label)
        for item in module.parse(body, meta=meta):
            if isinstance(item, ParsedRecord):
                record = {**item.record, "evaluation_id": "x/y/z"}
                produced = EvaluationLog.model_validate(record).to_json_dict()
                errors = list(validator.iter_errors(produced))
                assert not errors, (item.locator, errors[0].message)
                n += 1
    assert n >= 3500
