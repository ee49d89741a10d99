"""A fast yes to "is this a valid EEE 0.3.0 aggregate record?", with pydantic deciding every no.

Validating each record with the pydantic models costs about 0.3 ms per 25 results; most records
are valid. This module compiles the models' own JSON Schema (``EvaluationLog.model_json_schema``)
with jsonschema-rs and adds the rules the schema cannot say (the models' validators: the schema
version, a continuous metric's bounds, a levels metric's level names, string-valued model
details, finite numbers). A record this check accepts is one the models accept; anything else
goes to the models, which accept or refuse it with the reason the quarantine records.
``tests/schema/test_eee_check.py`` holds the two to that on real and mutated records.
"""

from __future__ import annotations

import math
from functools import cache
from typing import Any

import jsonschema_rs

from evalhouse.schema.eee import SCHEMA_VERSION, EvaluationLog


@cache
def _schema_validator() -> Any:
    return jsonschema_rs.validator_for(EvaluationLog.model_json_schema())


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _result_ok(result: dict[str, Any]) -> bool:
    config = result["metric_config"]
    kind = config.get("score_type")
    if kind == "continuous" and (config.get("min_score") is None or config.get("max_score") is None):
        return False
    if kind == "levels" and (config.get("level_names") is None or config.get("has_unknown_level") is None):
        return False
    if not (_finite(config.get("min_score")) and _finite(config.get("max_score"))):
        return False
    details = result["score_details"]
    if not _finite(details["score"]):
        return False
    unc = details.get("uncertainty") or {}
    se = unc.get("standard_error") or {}
    ci = unc.get("confidence_interval") or {}
    numbers = (
        se.get("value"),
        ci.get("lower"),
        ci.get("upper"),
        ci.get("confidence_level"),
        unc.get("standard_deviation"),
    )
    return all(_finite(v) for v in numbers)


def surely_valid(record: Any) -> bool:
    """True only for records the pydantic models accept; False means "ask the models"."""
    if not isinstance(record, dict) or record.get("schema_version") != SCHEMA_VERSION:
        return False
    if not _schema_validator().is_valid(record):
        return False
    details = record["model_info"]["additional_details"]
    if any(not isinstance(v, str) for k, v in details.items() if k not in ("deployment_type", "model_availability")):
        return False
    return all(_result_ok(r) for r in record["evaluation_results"])
