"""A fast yes to "is this a valid EEE 0.3.0 aggregate record?", with pydantic deciding every no.

Validating each record with the pydantic models costs about 0.3 ms per 25 results; most records
are valid. This module compiles the models' own JSON Schema (``EvaluationLog.model_json_schema``)
with jsonschema-rs, extended with what the models' validators say that JSON Schema can too (a
continuous metric's bounds, a levels metric's level names, string-valued model details), and
checks in Python what it cannot: the schema version and, for records not read from JSON text,
finite numbers. A record this check accepts is one the models accept; anything else goes to the
models, which accept or refuse it with the reason the quarantine records.
``tests/schema/test_eee_check.py`` holds the two to that on real and mutated records.

The extended schema ships as data (``eee_checks.json``, beside the dump plan of
:mod:`evalhouse.schema.eee_dump`), so checking a record never imports the models: building them
and their JSON Schema was ≈ 90 ms of every process that loads records. ``python -m
evalhouse.schema.eee_dump`` writes the file from the models, and ``tests/schema/test_eee_shipped.py``
fails when it is not what the models give.
"""

from __future__ import annotations

import copy
import json
import math
from functools import cache
from typing import Any

import jsonschema_rs

from evalhouse.common.resources import package_text
from evalhouse.schema.records import SCHEMA_VERSION

#: The shipped fast checks: ``{"json_schema": extended_schema(), "dump_plan": ...}``.
SHIPPED = "eee_checks.json"


def _not_null(*names: str) -> dict[str, Any]:
    return {"required": list(names), "properties": {n: {"not": {"type": "null"}} for n in names}}


@cache
def shipped_checks() -> dict[str, Any]:
    """The fast checks as shipped in :data:`SHIPPED` (written from the models, never edited)."""
    return json.loads(package_text("evalhouse.schema", SHIPPED))


@cache
def _schema_validator() -> Any:
    return jsonschema_rs.validator_for(shipped_checks()["json_schema"])


def extended_schema() -> dict[str, Any]:
    """The models' JSON Schema plus what their validators add that JSON Schema can say: a
    continuous metric names both bounds, a levels metric its level names and unknown level, and
    every model detail but the two required axes is a string (what :data:`SHIPPED` holds)."""
    from evalhouse.schema.eee import EvaluationLog  # noqa: PLC0415 - only to write or test the shipped file

    schema = copy.deepcopy(EvaluationLog.model_json_schema())
    defs = schema["$defs"]
    defs["ModelDetails"]["additionalProperties"] = {"type": "string"}
    defs["MetricConfig"]["allOf"] = [
        {"if": {"required": ["score_type"], "properties": {"score_type": {"const": kind}}}, "then": _not_null(*names)}
        for kind, names in (
            ("continuous", ("min_score", "max_score")),
            ("levels", ("level_names", "has_unknown_level")),
        )
    ]
    return schema


def _finite(value: Any) -> bool:
    return not isinstance(value, float) or math.isfinite(value)


def _result_ok(result: dict[str, Any]) -> bool:
    """The result's numbers are finite (a record parsed from JSON text holds no other)."""
    config = result["metric_config"]
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


def surely_valid(record: Any, *, json_text: bool = False) -> bool:
    """True only for records the pydantic models accept; False means "ask the models".

    ``json_text``: the record was parsed from JSON text, which has no NaN or infinity, so the
    walk over every result's numbers is skipped."""
    if not isinstance(record, dict) or record.get("schema_version") != SCHEMA_VERSION:
        return False
    try:
        if not _schema_validator().is_valid(record):
            return False
    except ValueError:  # jsonschema-rs reads plain JSON types only (a str subclass is "unsupported")
        return False
    return json_text or all(_result_ok(r) for r in record["evaluation_results"])
