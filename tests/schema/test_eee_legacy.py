"""EEE 0.2.x records brought to 0.3.0: one real record of every legacy collection, and the EEE
project's own migration where the every-eval-ever package ships one."""

from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from evalhouse.schema.eee import EvaluationLog
from evalhouse.schema.eee_legacy import TARGET_VERSION, migrate_legacy

LEGACY = "datasets/eee-datastore-legacy/data"


def first_record_of_each_collection(shared: Path) -> dict[str, dict]:
    out = {}
    for collection in sorted(p for p in (shared / LEGACY).iterdir() if p.is_dir()):
        path = min(collection.rglob("*.json"))
        out[collection.name] = json.loads(path.read_text())
    return out


def test_a_real_record_of_every_legacy_collection_migrates_to_a_valid_030_record(shared: Path) -> None:
    records = first_record_of_each_collection(shared)
    assert len(records) >= 10, "the pinned corpus has helm_*, hal-*, global-mmlu-lite and hfopenllm_v2"
    for collection, record in records.items():
        before = copy.deepcopy(record)
        migrated, steps = migrate_legacy(record, collection)
        assert record == before, "the input record is not modified"
        assert migrated["schema_version"] == TARGET_VERSION
        assert steps[0].startswith(f"migrated from EEE {before['schema_version']} to 0.3.0")
        EvaluationLog.model_validate(migrated)  # raises if the migration left anything invalid
        assert len(migrated["evaluation_results"]) == len(before["evaluation_results"]), "no result dropped"
        scores = [r["score_details"]["score"] for r in migrated["evaluation_results"]]
        assert scores == [r["score_details"]["score"] for r in before["evaluation_results"]], "no value changed"
        if "source_data" in before:
            assert "source_data" not in migrated and "top-level source_data moved into each result" in steps
            assert all(r["source_data"] == before["source_data"] for r in migrated["evaluation_results"])


def test_a_030_record_is_returned_unchanged_and_an_unknown_version_is_refused(shared: Path) -> None:
    record = json.loads((shared / "formats/eee/example_aggregate.json").read_text())
    migrated, _ = migrate_legacy(record)
    again, steps = migrate_legacy(migrated)
    assert again is migrated and steps == []
    with pytest.raises(ValueError, match=r"'9\.9\.9' is neither 0\.3\.0 nor a legacy"):
        migrate_legacy({**record, "schema_version": "9.9.9"})


def rewardbench_v2_legacy_record() -> dict:
    """A RewardBench 2 record as the datastore held it before 0.3.0 (authored from the upstream
    migration's docstring: a top-level source_data, no bounds, inference_platform 'unknown')."""
    return {
        "schema_version": "0.2.0",
        "evaluation_id": "reward-bench-2/allenai_Llama-3.1-Tulu-3-8B-RM/1750000000",
        "retrieved_timestamp": "1750000000",
        "source_data": {"dataset_name": "RewardBench 2", "source_type": "hf_dataset"},
        "eval_library": {"name": "rewardbench", "version": "unknown"},
        "source_metadata": {
            "source_name": "RewardBench 2",
            "source_type": "documentation",
            "source_organization_name": "AllenAI",
            "evaluator_relationship": "third_party",
        },
        "model_info": {
            "name": "Llama-3.1-Tulu-3-8B-RM",
            "id": "allenai/Llama-3.1-Tulu-3-8B-RM",
            "developer": "allenai",
            "inference_platform": "unknown",
        },
        "evaluation_results": [
            {
                "evaluation_name": "Math",
                "metric_config": {"evaluation_description": "Math score", "lower_is_better": False},
                "score_details": {"score": 0.612},
            }
        ],
    }


def test_rewardbench_uses_the_eee_projects_own_migration_when_installed() -> None:
    pytest.importorskip("every_eval_ever", reason="the every-eval-ever test extra is not installed")
    migrated, steps = migrate_legacy(rewardbench_v2_legacy_record(), "reward-bench")
    assert any("every_eval_ever.adapters.rewardbench.migrate_to_v030.migrate_file" in s for s in steps), steps
    result = migrated["evaluation_results"][0]
    # the upstream function's own rules: RewardBench 2's source data and 0-1 bounds
    assert result["source_data"]["hf_repo"] == "allenai/reward-bench-2-results"
    assert (result["metric_config"]["min_score"], result["metric_config"]["max_score"]) == (0.0, 1.0)
    assert "inference_platform" not in migrated["model_info"]
    EvaluationLog.model_validate(migrated)


def test_a_record_the_upstream_migration_refuses_gets_the_generic_steps_and_the_reason() -> None:
    pytest.importorskip("every_eval_ever", reason="the every-eval-ever test extra is not installed")
    record = rewardbench_v2_legacy_record()
    del record["eval_library"]  # upstream's EvaluationLog requires it; the generic steps add it
    migrated, steps = migrate_legacy(record, "reward-bench")
    refused = [s for s in steps if "refused the record" in s]
    assert refused and "eval_library" in refused[0] and refused[0].endswith("generic steps used")
    assert migrated["eval_library"] == {"name": "unknown", "version": "unknown"}
    EvaluationLog.model_validate(migrated)
