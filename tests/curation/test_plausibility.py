"""The plausibility checks one by one: what each refuses, and the neighbours it must not refuse."""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import pytest
import yaml

from evalhouse.curation.plausibility import (
    judge_units,
    number_problem,
    record_problem,
    release_problem,
    result_problem,
    uncertainty_problem,
    unit_verdicts,
)
from evalhouse.schema.records import ParsedRecord, ParseFailure

NOW = datetime(2026, 6, 1, 12, 0)


@pytest.mark.parametrize(
    ("value", "words"),
    [
        ("0.5", "the string '0.5'"),
        (True, "the boolean true"),
        (False, "the boolean false"),
        (10**400, "does not fit a 64-bit float"),
        (float("nan"), "not a finite number"),
        (float("-inf"), "not a finite number"),
        (None, "NoneType"),
        ([0.5], "list"),
    ],
)
def test_a_score_must_be_a_number_a_float_holds(value, words: str) -> None:
    assert words in number_problem(value, "score")


@pytest.mark.parametrize("value", [0, 1, 0.5, -3.25, 1e308, 10**300, -(10**300)])
def test_numbers_pass(value) -> None:
    assert number_problem(value, "score") is None


@pytest.mark.parametrize(
    ("uncertainty", "words"),
    [
        ({"standard_error": {"value": -0.01}}, "standard_error.value -0.01 is negative"),
        ({"standard_error": {"value": "0.1"}}, "standard_error.value is the string"),
        ({"standard_deviation": -1.0}, "standard_deviation -1.0 is negative"),
        ({"num_samples": -5}, "num_samples -5 is negative"),
        ({"num_samples": 2.5}, "not a whole number"),
        ({"num_samples": True}, "not a whole number"),
        ({"num_bootstrap_samples": -1}, "num_bootstrap_samples -1 is negative"),
        ({"confidence_interval": {"lower": 0.7, "upper": 0.2}}, "lower 0.7 lies above upper 0.2"),
        ({"confidence_interval": {"lower": 0.1, "upper": 10**400}}, "does not fit"),
    ],
)
def test_impossible_uncertainty(uncertainty: dict, words: str) -> None:
    assert words in uncertainty_problem(uncertainty)


@pytest.mark.parametrize(
    "uncertainty",
    [
        None,
        {},
        {"standard_error": {"value": 0.0}},
        {"num_samples": 0},
        {"confidence_interval": {"lower": 0.4, "upper": 0.4}},
        {"confidence_interval": {"lower": 0.1}},  # half an interval is the schema's business, not this one's
    ],
)
def test_possible_uncertainty(uncertainty) -> None:
    assert uncertainty_problem(uncertainty) is None


def _record(**kw) -> dict:
    return {"retrieved_timestamp": "1770682486.623709", **kw}


@pytest.mark.parametrize(
    ("record", "words"),
    [
        (_record(retrieved_timestamp="yesterday"), "not Unix seconds or an ISO 8601 time"),
        (_record(retrieved_timestamp=""), "not Unix seconds"),
        (_record(retrieved_timestamp="-5"), "not Unix seconds"),
        (_record(retrieved_timestamp="0"), "1970-01-01, before 2015-01-01"),
        (_record(retrieved_timestamp="4102444800"), "not Unix seconds"),  # 2100: beyond the epoch reading
        (_record(retrieved_timestamp="2100-01-01T00:00:00Z"), "in the future"),
        (_record(evaluation_timestamp="1900-01-01"), "evaluation_timestamp is 1900-01-01"),
        (_record(evaluation_timestamp="2100-01-01T10:00:00"), "in the future"),
    ],
)
def test_implausible_record_times(record: dict, words: str) -> None:
    assert words in record_problem(record, NOW)


@pytest.mark.parametrize(
    "record",
    [
        _record(),
        _record(retrieved_timestamp="2026-06-01T20:00:00Z"),  # hours ahead: clocks disagree
        _record(evaluation_timestamp="2024-12-21"),
        _record(evaluation_timestamp="2025-01-20T10-15-00"),  # Vectara's file-name stamp: its day is read
        _record(evaluation_timestamp="run of the spring sweep"),  # free text, as EEE allows
    ],
)
def test_plausible_record_times(record: dict) -> None:
    assert record_problem(record, NOW) is None


def test_a_result_is_judged_by_score_uncertainty_and_time() -> None:
    good = {"score_details": {"score": 0.5, "uncertainty": {"num_samples": 100}}}
    assert result_problem(good, NOW) is None
    assert "num_samples -1" in result_problem({"score_details": {"score": 0.5, "uncertainty": {"num_samples": -1}}})
    assert "score is the string" in result_problem({"score_details": {"score": "0.5"}})
    late = {**good, "evaluation_timestamp": "2099-01-01"}
    assert "in the future" in result_problem(late, NOW)


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("1900-01-01", "before 2015-01-01"),
        ("2100-01-01", "in the future"),
        ("2026-06-02", "in the future"),
        ("2024-02-30", "is not a date"),
        ("last spring", "is not a date"),
        ("", "is not a date"),
    ],
)
def test_implausible_release_dates(text: str, words: str) -> None:
    assert words in release_problem(text, date(2026, 6, 1))


@pytest.mark.parametrize("text", ["2015-01-01", "2024-02-29", "2026-06-01", "2025-05", "2023"])
def test_plausible_release_dates(text: str) -> None:
    assert release_problem(text, date(2026, 6, 1)) is None


def _result(name: str, value: float, unit: str = "percent", top: float = 100.0, metric: str = "pass_rate") -> dict:
    return {
        "evaluation_name": name,
        "source_data": {"dataset_name": name},
        "metric_config": {"metric_id": metric, "metric_unit": unit, "min_score": 0.0, "max_score": top},
        "score_details": {"score": value},
    }


def test_fractions_written_as_percent_are_refused_whole() -> None:
    verdicts = unit_verdicts([(i, _result("b", v)) for i, v in enumerate([0.61, 0.2, 0.0, 0.35, 0.9])])
    assert sorted(verdicts) == [0, 1, 2, 3, 4]
    assert all("every b pass_rate value lies in [0, 1]" in r for r in verdicts.values())


def test_percent_with_a_fractions_bound_disagrees() -> None:
    verdicts = unit_verdicts([("k", _result("b", 61.0, top=1.0))])
    assert "disagrees with max_score 1.0" in verdicts["k"]


@pytest.mark.parametrize(
    "values",
    [
        [0.0, 0.0, 1.0],  # zeros and ones read the same in both units
        [0.61],  # a lone 0.61 bounded by 100 may be a true 0.61 % (ARC-AGI-2 and HLE score so)
        [0.5, 0.8, 0.2],  # too few to say the group is fractions
        [0.61, 12.0],  # one value above 1: not every value is a fraction, and too few peers to judge
        [55.0, 61.5, 70.0],
    ],
)
def test_percent_groups_that_do_not_disagree(values: list[float]) -> None:
    assert unit_verdicts([(i, _result("b", v)) for i, v in enumerate(values)]) == {}


def test_other_units_are_not_judged_here() -> None:
    results = [(i, _result("b", v, unit="proportion", top=1.0)) for i, v in enumerate([0.61, 0.2])]
    assert unit_verdicts(results) == {}


def _aider(shared: Path) -> list[dict]:
    return yaml.safe_load(
        (shared / "datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml").read_text()
    )


def test_a_fraction_among_real_percentages_is_refused_and_a_real_low_rate_is_not(shared: Path) -> None:
    runs = _aider(shared)
    pairs = []
    for i, run in enumerate(runs):
        for field in ("pass_rate_1", "pass_rate_2"):
            if run.get(field) is not None:
                pairs.append(((i, field), _result("polyglot", float(run[field]), metric=field)))
    assert unit_verdicts(pairs) == {}  # the real board: first-try rates as low as 0.9 among 1.8 to 52.0
    hit = next(i for i, r in enumerate(runs) if r.get("pass_rate_2", 0) > 50)
    target = (hit, "pass_rate_2")
    edited = [
        (k, _result("polyglot", r["score_details"]["score"] / 100, metric=k[1]) if k == target else r) for k, r in pairs
    ]
    verdicts = unit_verdicts(edited)
    assert list(verdicts) == [target]
    assert "reads as a fraction among percentages" in verdicts[target]


def test_judge_units_writes_the_verdicts_on_the_records_of_one_payload() -> None:
    peers = [
        ParsedRecord({"evaluation_results": [_result("b", v)]}, f"row {i}") for i, v in enumerate([20, 30, 40, 50, 60])
    ]
    odd = ParsedRecord({"evaluation_results": [_result("b", 35.0, metric="other"), _result("b", 0.45)]}, "row odd")
    failure = ParseFailure("row x", "unreadable")
    judged = judge_units([*peers, failure, odd])
    assert judged[:6] == [*peers, failure]
    assert list(judged[6].refused_results) == [1]
    assert judged[6].record is odd.record
