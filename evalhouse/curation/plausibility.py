"""What a valid EEE record may still say that no measurement can mean, refused row by row.

The EEE JSON Schema types a score as a number and a timestamp as a string; a record can pass it
and still claim a negative standard error, an interval whose lower end lies above its upper end, a
sample count of −5, a model released in 1900 or evaluated in 2100, a retrieval time of
``"yesterday"``, or percentages that are fractions. Each check here is a pure function returning
the reason a value is refused (``None``: plausible); the loader quarantines the row it belongs to
with that reason and loads the row's neighbours:

* a **record** (its ``retrieved_timestamp`` or ``evaluation_timestamp``) — :func:`record_problem`;
* a **result** (its score, uncertainty or ``evaluation_timestamp``) — :func:`result_problem`;
* a **release-date claim** (only the claim; the record and its scores load) — :func:`release_problem`;
* a **unit that disagrees with its values** — :func:`unit_verdicts`, over every result of one
  payload, since "a fraction among percentages" is a fact about a value and its peers.

Numbers are never read from text and never rescaled here: a refusal names what was found and
leaves the value as the source wrote it (in the quarantine row's payload).
"""

from __future__ import annotations

import math
import re
import sys
from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import replace
from datetime import UTC, date, datetime, timedelta
from typing import Any

from evalhouse.common.dates import parse_date
from evalhouse.schema.records import ParsedRecord, ParseItem

#: No model evalhouse scores was released, evaluated or retrieved before this day (the
#: ``release_dates`` expectation suite checks the same bound after every load).
EARLIEST = date(2015, 1, 1)
#: How far past now a timestamp may lie (clocks and time zones disagree by hours, not days).
FUTURE_SLACK = timedelta(days=1)
_MAX_FLOAT = sys.float_info.max
_EPOCH_SECONDS = re.compile(r"\d{1,10}(?:\.\d+)?")
#: Units that are a share of a whole, and the top of the scale each writes.
PERCENT_UNITS = frozenset({"percent", "percentage", "%", "pct"})
#: A group of percent values is judged by its range when it holds at least this many values (and a
#: value below 1 against its peers when at least this many of them are 1 or more, and at most a
#: tenth of the group lies below 1).
PERCENT_PEERS_MIN = 5
PERCENT_OUTLIER_SHARE = 0.10


def _short(value: Any) -> str:
    if isinstance(value, int) and value.bit_length() > 128:  # repr() refuses integers past 4,300 digits
        return f"(an integer of about {int(value.bit_length() * math.log10(2)) + 1} digits)"
    text = repr(value)
    return text if len(text) <= 40 else f"{text[:18]}…{text[-8:]} ({len(text)} characters)"


def number_problem(value: Any, what: str) -> str | None:
    """Why ``value`` is not a JSON number a 64-bit float holds (``None``: it is one)."""
    if type(value) is float:  # the common case first
        return None if math.isfinite(value) else f"{what} {value!r} is not a finite number"
    if isinstance(value, bool):
        return f"{what} is the boolean {str(value).lower()}, not a number"
    if isinstance(value, int):
        return None if abs(value) <= _MAX_FLOAT else f"{what} {_short(value)} does not fit a 64-bit float"
    if isinstance(value, float):
        return None if math.isfinite(value) else f"{what} {value!r} is not a finite number"
    if isinstance(value, str):
        return f"{what} is the string {_short(value)}, not a number (numbers are never read from text)"
    return f"{what} is {type(value).__name__} {_short(value)}, not a number"


def _count_problem(value: Any, what: str) -> str | None:
    if isinstance(value, bool) or not isinstance(value, int):
        return f"{what} is {_short(value)}, not a whole number"
    return f"{what} {value} is negative" if value < 0 else None


def uncertainty_problem(uncertainty: Any) -> str | None:
    """A standard error or deviation below 0, a count below 0, an interval upside down."""
    if not isinstance(uncertainty, Mapping):
        return None
    se = uncertainty.get("standard_error")
    if isinstance(se, Mapping) and "value" in se:
        if why := number_problem(se["value"], "standard_error.value"):
            return why
        if se["value"] < 0:
            return f"standard_error.value {se['value']!r} is negative"
    sd = uncertainty.get("standard_deviation")
    if sd is not None:
        if why := number_problem(sd, "standard_deviation"):
            return why
        if sd < 0:
            return f"standard_deviation {sd!r} is negative"
    for key in ("num_samples", "num_bootstrap_samples"):
        if uncertainty.get(key) is not None and (why := _count_problem(uncertainty[key], key)):
            return why
    ci = uncertainty.get("confidence_interval")
    if isinstance(ci, Mapping) and "lower" in ci and "upper" in ci:
        lower, upper = ci["lower"], ci["upper"]
        why = number_problem(lower, "confidence_interval.lower") or number_problem(upper, "confidence_interval.upper")
        if why:
            return why
        if lower > upper:
            return f"confidence_interval lower {lower!r} lies above upper {upper!r}"
    return None


def instant(value: Any) -> datetime | None:
    """A timestamp as EEE writes it (Unix seconds, as text) or ISO 8601, in naive UTC; else None."""
    text = str(value if value is not None else "").strip()
    if _EPOCH_SECONDS.fullmatch(text) and float(text) < 4e9:
        return datetime.fromtimestamp(float(text), UTC).replace(tzinfo=None)
    try:
        parsed = datetime.fromisoformat(text.replace("Z", "+00:00"))
    except ValueError:
        return None
    return parsed.astimezone(UTC).replace(tzinfo=None) if parsed.tzinfo else parsed


def _now() -> datetime:
    return datetime.now(UTC).replace(tzinfo=None)


def _when_problem(when: datetime, what: str, raw: Any, now: datetime) -> str | None:
    if when.date() < EARLIEST:
        return f"{what} is {when:%Y-%m-%d}, before {EARLIEST:%Y-%m-%d} (written {_short(raw)})"
    if when > now + FUTURE_SLACK:
        return f"{what} is {when:%Y-%m-%d}, in the future (written {_short(raw)})"
    return None


def _evaluated_problem(value: Any, what: str, now: datetime) -> str | None:
    """An ``evaluation_timestamp`` is free text in EEE: a date or instant it holds must be plausible."""
    if value is None:
        return None
    when = instant(value)
    if when is None:
        found = parse_date(str(value)) if isinstance(value, str | int) else None
        if found is None:
            return None
        when = datetime.combine(found[0], datetime.min.time())
    return _when_problem(when, what, value, now)


def record_problem(record: Mapping[str, Any], now: datetime | None = None) -> str | None:
    """Why a record's timestamps cannot be true: it was retrieved at an unreadable or impossible
    time, or evaluated before 2015 or in the future."""
    now = now or _now()
    retrieved = record.get("retrieved_timestamp")
    when = instant(retrieved)
    if when is None:
        return f"retrieved_timestamp {_short(retrieved)} is not Unix seconds or an ISO 8601 time"
    return _when_problem(when, "retrieved_timestamp", retrieved, now) or _evaluated_problem(
        record.get("evaluation_timestamp"), "evaluation_timestamp", now
    )


def result_problem(result: Mapping[str, Any], now: datetime | None = None) -> str | None:
    """Why one result cannot be loaded as a measurement: its score is not a number a float holds,
    its uncertainty is impossible, or it was evaluated before 2015 or in the future."""
    details = result.get("score_details")
    if not isinstance(details, Mapping):
        return "score_details is missing"
    return (
        number_problem(details.get("score"), "score")
        or uncertainty_problem(details.get("uncertainty"))
        or _evaluated_problem(result.get("evaluation_timestamp"), "evaluation_timestamp", now or _now())
    )


def release_problem(text: Any, today: date | None = None) -> str | None:
    """Why a release-date claim is refused: not a date, before 2015, or in the future."""
    found = parse_date(str(text)) if isinstance(text, str | int) and not isinstance(text, bool) else None
    if found is None:
        return f"release_date {_short(text)} is not a date (YYYY-MM-DD, YYYY-MM or YYYY)"
    day = found[0]
    today = today or _now().date()
    if day < EARLIEST:
        return f"release_date {_short(text)} is before {EARLIEST:%Y-%m-%d}"
    if day > today:
        return f"release_date {_short(text)} is in the future"
    return None


# -- units against their values --------------------------------------------------------------


def _group(result: Mapping[str, Any]) -> tuple[Any, ...] | None:
    """The peers of a result: the same benchmark and metric, declared percent (else None)."""
    config = result.get("metric_config")
    if not isinstance(config, Mapping):
        return None
    unit = config.get("metric_unit")
    if not isinstance(unit, str) or unit.strip().casefold() not in PERCENT_UNITS:
        return None
    source = result.get("source_data") if isinstance(result.get("source_data"), Mapping) else {}
    metric = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
    return (result.get("evaluation_name"), source.get("dataset_name"), metric)


def _score(result: Mapping[str, Any]) -> float | None:
    details = result.get("score_details")
    value = details.get("score") if isinstance(details, Mapping) else None
    if number_problem(value, "score") is not None:
        return None
    return float(value)


def unit_verdicts(results: Iterable[tuple[Any, Mapping[str, Any]]]) -> dict[Any, str]:
    """``{key: reason}`` for results whose declared percent disagrees with the range of the values.

    ``results`` are ``(key, result)`` pairs of one payload (the results of every record it holds).
    Results are grouped by benchmark and metric. A percent is a value in [0, 100]; when a record
    declares percent:

    * a bound it declares must be a percent's: ``max_score`` 1 with ``percent`` disagrees (a
      0.61 "percent" bounded by 1 is a fraction, never stored as 0.0061);
    * a group of at least 5 values that all lie in [0, 1] (one at least strictly between) holds
      fractions written as percent, and is refused whole (a lone 0.61 bounded by 100 may be a true
      0.61 %: the hardest benchmarks score so, and it is kept);
    * a value strictly between 0 and 1 (one, or at most a tenth of its group) that read as a percent lies
      below all of its peers (at least 5 values of 1 or more), read as a fraction (× 100) falls
      within their range, and is written with more decimals than any peer reads as a fraction
      among percentages, and is refused. Aider's 0.796 among pass rates of 3.6 to 88.0, all written
      with one decimal, is; its real first-try rate of 0.9 among 1.8 to 52.0 is not, and neither
      are the real lowest scores of boards whose hardest tasks score below 1 % (BFCL's 0.50 %
      web-search accuracy, LiveBench's 0.5 on zebra puzzles among 2.25 to 100 written with up to
      three decimals, SWE-bench Lite's 0.33 %): the lowest value of a percent column is always
      below its peers, so that alone is no evidence of another unit.

    Nothing is rescaled: the source is asked, through the quarantine, which unit it meant.
    """
    groups: dict[tuple[Any, ...], list[tuple[Any, float]]] = defaultdict(list)
    out: dict[Any, str] = {}
    for key, result in results:
        group = _group(result)
        if group is None:
            continue
        config = result["metric_config"]
        top = config.get("max_score")
        if isinstance(top, int | float) and not isinstance(top, bool) and 0 < top <= 1:
            out[key] = f"metric_unit {config['metric_unit']!r} disagrees with max_score {top!r} (a fraction's bound)"
            continue
        value = _score(result)
        if value is not None:
            groups[group].append((key, value))
    for (name, dataset, metric), members in groups.items():
        values = [v for _, v in members]
        label = f"{dataset or name} {metric or ''}".strip()
        enough = len(values) >= PERCENT_PEERS_MIN
        if enough and all(0 <= v <= 1 for v in values) and any(0 < v < 1 for v in values):
            for key, value in members:
                out[key] = (
                    f"unit disagrees with values: declared percent, but every {label} value lies in [0, 1] "
                    f"({len(values)} value(s), this one {value!r}): fractions written as percent? refused, not rescaled"
                )
            continue
        small = [(k, v) for k, v in members if 0 < v < 1]
        peers = [v for v in values if v >= 1]
        if not small or len(peers) < PERCENT_PEERS_MIN or len(small) > max(1, PERCENT_OUTLIER_SHARE * len(values)):
            continue
        low, high = min(peers), max(peers)
        written = max(_decimals(v) for v in peers)
        for key, value in small:
            if low <= value * 100 <= high and _decimals(value) > written:
                out[key] = (
                    f"unit disagrees with values: {value!r} reads as a fraction among percentages ({label}: "
                    f"as a percent it lies below all {len(peers)} others, {low:g} to {high:g}, and has more "
                    f"decimals than any of them ({_decimals(value)} > {written}); as a fraction it is "
                    f"{value * 100:g} among them); refused, not rescaled"
                )
    return out


def _decimals(value: float) -> int:
    """The decimals a value is written with (its shortest repr: 0.796 -> 3, 88.0 -> 0, 92.683 -> 3)."""
    text = repr(float(value))
    if "e" in text or "E" in text:
        return 0 if abs(value) >= 1 else 17
    return len(text.split(".", 1)[1].rstrip("0")) if "." in text else 0


def judge_units(items: list[ParseItem]) -> list[ParseItem]:
    """``items`` with each record's unit verdicts (:func:`unit_verdicts` over the whole payload)
    written on it as ``refused_results``; the loader quarantines those results with the reason."""
    pairs = (
        ((i, j), result)
        for i, item in enumerate(items)
        if isinstance(item, ParsedRecord) and isinstance(item.record, dict)
        for j, result in enumerate(_results(item.record))
        if isinstance(result, Mapping)
    )
    verdicts = unit_verdicts(pairs)
    if not verdicts:
        return items
    by_item: dict[int, dict[int, str]] = defaultdict(dict)
    for (i, j), reason in verdicts.items():
        by_item[i][j] = reason
    return [
        replace(item, refused_results={**item.refused_results, **by_item[i]}) if i in by_item else item
        for i, item in enumerate(items)
    ]


def _results(record: Mapping[str, Any]) -> list[Any]:
    results = record.get("evaluation_results")
    return results if isinstance(results, list) else []
