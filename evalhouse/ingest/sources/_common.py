"""Small helpers the aggregator parsers share: strict cell reading and EEE record assembly.

The two parsers (Epoch AI, Artificial Analysis) turn one source row into one EEE aggregate record
with one result per score cell. Everything that must read the same way in both - what counts as a
number, a date, a bound, how a result dict is laid out - lives here so the records agree.
"""

from __future__ import annotations

import json
import math
import re
import sys
from collections.abc import Callable, Mapping
from datetime import date
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from evalhouse.common.yamls import load_package_yaml
from evalhouse.ingest.source import FetchMeta, ParseError
from evalhouse.schema.records import (
    EVALUATED_BY_VALUES,
    RELEASE_DATE,
    RELEASE_DATE_KIND,
    RELEASE_DATE_PRECISION,
    SCHEMA_VERSION,
    ParsedRecord,
    ParseFailure,
)

if TYPE_CHECKING:
    from pydantic import ValidationError

    from evalhouse.schema.eee import EvaluationLog


# A plain decimal or scientific number. Python's float() also takes "nan", "inf", "1_000" and
# surrounding junk-free words like "Infinity"; a leaderboard cell holding those is not a score.
_NUMBER_RE = re.compile(r"[+-]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][+-]?\d+)?")
_DATE_RES = (
    (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "day"),
    (re.compile(r"(\d{4})-(\d{2})"), "month"),
    (re.compile(r"(\d{4})"), "year"),
)


class CellError(ValueError):
    """One cell cannot be read; the message names the value and what was expected."""


def load_mapping(filename: str) -> dict[str, Any]:
    """A declared mapping shipped next to the parser modules (read-only package data)."""
    raw = resources.files("evalhouse.ingest.sources").joinpath(filename).read_bytes()
    data = load_package_yaml(raw)
    if not isinstance(data, dict):
        raise ValueError(f"{filename} must hold a mapping")
    return data


def decode_text(body: bytes, what: str) -> str:
    """UTF-8 text (a BOM is dropped); anything else is a whole-payload ParseError."""
    try:
        return body.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise ParseError(f"{what} is not UTF-8 text ({exc.reason} at byte {exc.start})") from exc


def parse_number(value: Any, unit: str) -> float:
    """A finite float from a cell; never coerces ``"87.5%"``, ``"N/A"`` or ``NaN``.

    JSON numbers pass through (booleans are refused: ``true`` is not a score); strings must be a
    plain number. The error names the value and the declared unit, for the quarantine reason.
    """
    if isinstance(value, bool):
        raise CellError(f"value {value!r} is a boolean, not a number in unit {unit!r}")
    if isinstance(value, int) and abs(value) > sys.float_info.max:  # 10^400: float() would overflow
        digits = int(value.bit_length() * math.log10(2)) + 1  # str() refuses integers past 4,300 digits
        raise CellError(f"value (an integer of about {digits} digits) does not fit a 64-bit float in unit {unit!r}")
    if isinstance(value, int | float):
        number = float(value)
    elif isinstance(value, str) and _NUMBER_RE.fullmatch(value.strip()):
        number = float(value.strip())
    else:
        raise CellError(f"value {value!r} is not a plain number in declared unit {unit!r}")
    if not math.isfinite(number):
        raise CellError(f"value {value!r} is not a finite number in declared unit {unit!r}")
    return number


def parse_release_date(text: str) -> tuple[str, str]:
    """``(YYYY-MM-DD, precision)``; a month or year is stored as its first day."""
    text = text.strip()
    for pattern, precision in _DATE_RES:
        match = pattern.fullmatch(text)
        if match is None:
            continue
        year, month, day = (int(g) for g in (*match.groups(), 1, 1)[:3])
        try:
            return date(year, month, day).isoformat(), precision
        except ValueError as exc:
            raise CellError(f"release date {text!r} is not a valid date ({exc})") from exc
    raise CellError(f"release date {text!r} is not YYYY-MM-DD, YYYY-MM or YYYY")


def date_details(text: str | None) -> dict[str, str]:
    """``model_info.additional_details`` entries for a valid release date (raises CellError)."""
    if not text or not text.strip():
        return {}
    iso, precision = parse_release_date(text)
    return {
        RELEASE_DATE: iso,
        RELEASE_DATE_PRECISION: precision,
        RELEASE_DATE_KIND: "aggregator_field",
    }


def slugify(text: str) -> str:
    """Lower-case words joined by ``-`` (developer slugs: ``"Google DeepMind"`` → ``google-deepmind``)."""
    return re.sub(r"[^a-z0-9]+", "-", text.casefold()).strip("-")


def fact_text(value: Any) -> str | None:
    """A model fact as the string EEE wants: JSON booleans lower-case, numbers via ``repr(float)``.

    The same fact read from a CSV (``"108.0"``, ``"True"``) and from JSON (``108``, ``true``)
    must become the same string, or the three AA input forms would fingerprint differently.
    """
    if value is None:
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, int) and abs(value) > sys.float_info.max:  # no float holds it, as for infinity
        return None
    if isinstance(value, int | float):
        return repr(float(value)) if math.isfinite(value) else None
    text = str(value).strip()
    return text or None


def bound(value: Any) -> float | str:
    """A declared bound: a number, or ``±Infinity`` spelled as EEE's strings."""
    if isinstance(value, str):
        if value in ("Infinity", "-Infinity"):
            return value
        raise ValueError(f"bound {value!r} must be a number or ±Infinity")
    return float(value)


def row_payload(row: Mapping[str, Any]) -> str:
    """The source row as JSON text, kept with a ParseFailure so quarantine shows the input."""
    return json.dumps(dict(row), ensure_ascii=False, sort_keys=False, default=str)


def lazy_payload(row: Mapping[str, Any]) -> Callable[[], str]:
    """:func:`row_payload` of ``row``, written when a failure first asks for it: most rows fail
    nowhere, and writing every row's JSON was a tenth of parsing an export. ``row`` must not
    change afterwards."""
    written: list[str] = []

    def payload() -> str:
        if not written:
            written.append(row_payload(row))
        return written[0]

    return payload


def score_result(  # noqa: PLR0913 - keyword-only arguments are the fields of an EEE evaluation_result
    *,
    source_key: str,
    dataset_name: str,
    url: str,
    metric_id: str,
    metric_name: str,
    metric_kind: str,
    unit: str,
    lower_is_better: bool,
    bounds: tuple[float | str, float | str],
    score: float,
    uncertainty: dict[str, Any] | None = None,
    details: Mapping[str, str] | None = None,
    setup: Mapping[str, str] | None = None,
    evaluation_name: str | None = None,
    result_id: str | None = None,
    metric_parameters: Mapping[str, str | float | bool] | None = None,
    llm_scoring: dict[str, Any] | None = None,
) -> dict[str, Any]:
    """One EEE ``evaluation_results`` entry for one score cell, laid out the same for every source
    (and as the EEE models write it: their keys in their order, see :func:`build_record`).

    ``evaluation_name`` defaults to ``<source>.<dataset>``; a name that narrows the dataset
    ("mmlu - philosophy") makes the cell's subset. ``result_id`` (default ``<dataset>.<metric>``)
    is the source's own key of the cell when one dataset holds several cells of one metric.
    ``metric_parameters`` tell apart two metrics of one name (pass@1 / pass@8, a harness's
    filter); ``llm_scoring`` names an LLM judge."""
    score_details: dict[str, Any] = {"score": score}
    if details:
        score_details["details"] = dict(details)
    if uncertainty:
        score_details["uncertainty"] = uncertainty
    result: dict[str, Any] = {
        "evaluation_result_id": result_id or f"{dataset_name}.{metric_id}",
        "evaluation_name": evaluation_name or f"{source_key}.{dataset_name}",
        "source_data": {"dataset_name": dataset_name, "source_type": "url", "url": [url]},
        "metric_config": {
            "metric_id": metric_id,
            "metric_name": metric_name,
            "metric_kind": metric_kind,
            "metric_unit": unit,
            **({"metric_parameters": dict(metric_parameters)} if metric_parameters else {}),
            "lower_is_better": lower_is_better,
            "score_type": "continuous",
            "min_score": bounds[0],
            "max_score": bounds[1],
            **({"llm_scoring": llm_scoring} if llm_scoring else {}),
        },
        "score_details": score_details,
    }
    if setup:
        result["generation_config"] = {"additional_details": dict(setup)}
    return result


def confidence_interval(lower: float, upper: float) -> dict[str, Any]:
    return {"confidence_interval": {"lower": lower, "upper": upper, "confidence_level": 0.95}}


def standard_error(value: float) -> dict[str, Any]:
    return {"standard_error": {"value": value}}


def source_metadata(  # noqa: PLR0913 - keyword-only arguments are the fields of source_metadata
    *,
    name: str,
    organisation: str,
    organisation_url: str,
    evaluated_by: str,
    details: Mapping[str, str],
    source_type: str = "documentation",
) -> dict[str, Any]:
    """``source_metadata``: first party only when the model's developer ran the evaluation;
    ``source_type`` is ``evaluation_run`` for a harness's own output."""
    if evaluated_by not in EVALUATED_BY_VALUES:
        raise ValueError(f"evaluated_by {evaluated_by!r} is not one of {EVALUATED_BY_VALUES}")
    return {
        "source_name": name,
        "source_type": source_type,
        "source_organization_name": organisation,
        "source_organization_url": organisation_url,
        "evaluator_relationship": "first_party" if evaluated_by == "model_developer" else "third_party",
        "additional_details": {"evalhouse.evaluated_by": evaluated_by, **details},
    }


def build_record(  # noqa: PLR0913 - keyword-only arguments are the parts of an EEE record
    *,
    meta: FetchMeta,
    source_metadata: dict[str, Any],
    eval_library: dict[str, str],
    model_info: dict[str, Any],
    results: list[dict[str, Any]],
    locator: str,
    payload: str | Callable[[], str],
) -> ParsedRecord | ParseFailure:
    """The EEE aggregate record, validated; a record the schema refuses becomes a ParseFailure.

    ``evaluation_id`` stays empty (the loader derives it from the fingerprint) and only
    ``retrieved_timestamp`` carries the fetch time, which the fingerprint ignores.

    The record is what the EEE models write back (``EvaluationLog.model_validate(record)
    .to_json_dict()``). The parts above build it in that form already — the models' keys in their
    order, no ``None``, floats as floats — so a record the fast check calls valid
    (:func:`~evalhouse.schema.eee_check.surely_valid`) and that is its own dump
    (:func:`~evalhouse.schema.eee_dump.dumps_as_itself`) is kept as built, without the models'
    round trip (about 0.1 ms a record, half of parsing an export); any other goes through the
    models, which also word every refusal.
    """
    record = {
        "schema_version": SCHEMA_VERSION,
        "evaluation_id": "",
        "retrieved_timestamp": str(meta.retrieved_at.timestamp()),
        "source_metadata": source_metadata,
        "eval_library": eval_library,
        "model_info": model_info,
        "evaluation_results": results,
    }
    if _kept_as_built(record):
        return ParsedRecord(record=record, locator=locator, valid=True)
    model, invalid = _models()
    try:
        validated = model.model_validate(record)
    except invalid as exc:
        first = exc.errors()[0]
        where = ".".join(str(part) for part in first["loc"])
        reason = f"record does not validate as EEE {SCHEMA_VERSION}: {where}: {first['msg']}"
        return ParseFailure(locator, reason, payload if isinstance(payload, str) else payload())
    return ParsedRecord(record=validated.to_json_dict(), locator=locator, valid=True)


@cache
def _models() -> tuple[type[EvaluationLog], type[ValidationError]]:
    """The EEE record model and pydantic's error, imported when the first record is built (a
    refresh that parses nothing never loads them)."""
    from pydantic import ValidationError  # noqa: PLC0415

    from evalhouse.schema.eee import EvaluationLog  # noqa: PLC0415

    return EvaluationLog, ValidationError


def _kept_as_built(record: dict[str, Any]) -> bool:
    """The record is valid for sure and is what the models would write back."""
    valid, as_dumped = _fast_checks()
    try:
        # a record that is its own dump holds finite floats only (the dump check refuses NaN and
        # infinities where a float is declared, and any float where none is), so the schema check
        # skips its own walk over the numbers, as it does for JSON text
        return as_dumped(record) and valid(record, json_text=True)
    except (ValueError, TypeError, OverflowError):  # a value the schema check cannot take: the models decide
        return False


@cache
def _fast_checks() -> tuple[Callable[..., bool], Callable[[Any], bool]]:
    """The "surely valid" and "its own dump" checks, imported with the first record built."""
    from evalhouse.schema.eee_check import surely_valid  # noqa: PLC0415
    from evalhouse.schema.eee_dump import dumps_as_itself  # noqa: PLC0415

    return surely_valid, dumps_as_itself
