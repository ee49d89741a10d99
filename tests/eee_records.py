"""Test data: EEE 0.3.0 aggregate records and datastore trees, built the same way everywhere."""

from __future__ import annotations

import json
import uuid
from pathlib import Path
from typing import Any


def eee_record(
    model_id: str,
    scores: dict[str, float] | float = 0.5,
    *,
    name: str | None = None,
    unit: str = "proportion",
    evaluation_id: str | None = None,
    retrieved_timestamp: str = "1750000000",
    release_date: str | None = None,
) -> dict[str, Any]:
    """One record with an accuracy result per benchmark (``scores`` a float means ``demo_bench``)."""
    if not isinstance(scores, dict):
        scores = {"demo_bench": scores}
    details = {"deployment_type": "unknown", "model_availability": "open_weights"}
    if release_date:
        details["release_date"] = release_date
    upper = 100.0 if unit == "percent" else 1.0
    return {
        "schema_version": "0.3.0",
        "evaluation_id": evaluation_id or f"c/{model_id}/1",
        "retrieved_timestamp": retrieved_timestamp,
        "source_metadata": {
            "source_type": "documentation",
            "source_organization_name": "Org",
            "evaluator_relationship": "third_party",
        },
        "eval_library": {"name": "lm_eval", "version": "0.4.9"},
        "model_info": {
            "name": name or model_id.rsplit("/", maxsplit=1)[-1],
            "id": model_id,
            "developer": "org",
            "additional_details": details,
        },
        "evaluation_results": [
            {
                "evaluation_name": bench,
                "source_data": {"dataset_name": bench, "source_type": "other"},
                "metric_config": {
                    "metric_id": "accuracy",
                    "metric_unit": unit,
                    "lower_is_better": False,
                    "score_type": "continuous",
                    "min_score": 0.0,
                    "max_score": upper,
                },
                "score_details": {"score": value},
            }
            for bench, value in scores.items()
        ],
    }


def write_file(root: Path, rel: str, content: bytes | str | dict[str, Any]) -> Path:
    """Write ``content`` (a record, text or bytes) at ``root/data/<rel>``."""
    path = root / "data" / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, dict):
        content = json.dumps(content)
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    return path


def write_tree(root: Path, records: list[dict[str, Any]], collection: str = "c") -> Path:
    """Lay records out as ``data/<collection>/org/<model>/<uuid4>.json``; returns ``root``."""
    for rec in records:
        model = rec["model_info"]["id"].split("/")[-1]
        write_file(root, f"{collection}/org/{model}/{uuid.uuid4()}.json", rec)
    return root


def warehouse_file(path: Path) -> Path:
    """A migrated, closed warehouse file at ``path`` (for tests that then connect to it directly)."""
    from evalhouse.warehouse.db import Warehouse

    Warehouse.open(path).close()
    return path
