"""Generated EEE 0.3.0 datastore trees shaped like the real datastore (for benchmarks only).

A record holds ``results`` results over distinct benchmarks, with the parts real adapters write:
a metric config with bounds and a description, uncertainty (standard error, confidence interval,
sample count), generation config, source data. Models spread over developers; names and values
are deterministic in ``seed``, so two runs write the same bytes.
"""

from __future__ import annotations

import json
import random
import uuid
from pathlib import Path

DEVELOPERS = ("meta", "qwen", "mistral", "google", "microsoft", "tii", "01-ai", "deepseek", "allenai", "nvidia")
SUFFIXES = ("", "-Instruct", "-Chat", "-Base", "-v0.1", "-DPO", "-GGUF", "-it")


def record(i: int, results: int, rng: random.Random, *, one_model_each: bool = False) -> dict:
    dev = DEVELOPERS[i % len(DEVELOPERS)]
    model = f"Model{i if one_model_each else i // 3}-{(i % 7) + 1}B{SUFFIXES[i % len(SUFFIXES)]}"
    model_id = f"{dev}/{model}"
    return {
        "schema_version": "0.3.0",
        "evaluation_id": f"bench-{i % 4}/{dev}_{model}/{1750000000 + i}",
        "retrieved_timestamp": str(1750000000 + i),
        "source_metadata": {
            "source_name": "Generated leaderboard",
            "source_type": "documentation",
            "source_organization_name": "Generated",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "model_info": {
            "name": model,
            "id": model_id,
            "developer": dev,
            "additional_details": {
                "deployment_type": "unknown",
                "model_availability": "open_weights",
                "precision": "bfloat16" if i % 2 else "float16",
            },
        },
        "evaluation_results": [
            {
                "evaluation_name": f"task_{k:02d}",
                "source_data": {
                    "dataset_name": f"task_{k:02d}",
                    "source_type": "hf_dataset",
                    "hf_repo": f"org/task_{k}",
                },
                "metric_config": {
                    "evaluation_description": f"Accuracy on task_{k:02d}",
                    "metric_id": "accuracy",
                    "metric_name": "Accuracy",
                    "metric_unit": "proportion",
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": 0.0,
                    "max_score": 1.0,
                },
                "score_details": {
                    "score": round(rng.random(), 4),
                    "uncertainty": {
                        "standard_error": {"value": round(rng.random() / 50, 5)},
                        "num_samples": 500 + k,
                    },
                },
                "generation_config": {"generation_args": {"temperature": 0.0, "max_tokens": 1024}},
            }
            for k in range(results)
        ],
    }


def write_corpus(
    root: Path, records: int, results: int, *, collections: int = 4, seed: int = 0, one_model_each: bool = False
) -> int:
    """Write ``records`` records under ``root/data``; returns the number of results written.

    By default three records share a model name (runs of one model); ``one_model_each`` gives every
    record its own model, as in the real datastore (about one record per model)."""
    rng = random.Random(seed)
    for i in range(records):
        rec = record(i, results, rng, one_model_each=one_model_each)
        dev, model = rec["model_info"]["id"].split("/")
        name = uuid.UUID(int=rng.getrandbits(128), version=4)
        path = root / "data" / f"bench-{i % collections}" / dev / model / f"{name}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))
    return records * results
