"""Boards compared as values: keys, repeated keys, the tolerance rule (pure, no warehouse)."""

from __future__ import annotations

from typing import Any

import pytest

from evalhouse.pipeline.boards import board_from, compare, moved


def _record(model: str, results: list[tuple[str, Any]], *, cites: str | None = None) -> dict[str, Any]:
    details = {"evalhouse.original_source": cites} if cites else {}
    return {
        "model_info": {"id": model, "name": model.upper()},
        "source_metadata": {"additional_details": details},
        "evaluation_results": [
            {
                "evaluation_name": bench,
                "source_data": {"dataset_name": bench},
                "metric_config": {"metric_id": "accuracy"},
                "score_details": {"score": value},
            }
            for bench, value in results
        ],
    }


def test_the_tolerance_is_relative_to_the_larger_magnitude() -> None:
    assert not moved(100.0, 100.1, 0.001)  # 0.1 is less than 0.1% of 100.1 (0.1001)
    assert moved(100.0, 100.2, 0.001)
    assert moved(0.0, 1e-12, 0.001)  # from zero any change is a move
    assert not moved(-5.0, -5.0, 0.0)
    assert moved(0.5, 0.5000001, 0.0)


def test_a_key_held_twice_pairs_its_values_in_order_and_the_rest_is_new_or_vanished() -> None:
    before = board_from([_record("m", [("b", 0.5), ("b", 0.7)], cites="paper")])
    after = board_from([_record("m", [("b", 0.5), ("b", 0.71), ("b", 0.9)], cites="paper")])
    c = compare(before, after)
    assert [(x["old"], x["new"]) for x in c["values"]["moved"]] == [(0.7, 0.71)]
    assert (c["values"]["compared"], c["values"]["new"], c["values"]["vanished"]) == (2, 1, 0)
    assert c["models"]["new"] == [] and c["models"]["vanished"] == []


def test_a_different_citation_is_a_different_value_not_a_move() -> None:
    before = board_from([_record("m", [("b", 0.5)], cites="paper A")])
    after = board_from([_record("m", [("b", 0.6)], cites="paper B")])
    c = compare(before, after)
    assert c["values"]["moved"] == [] and (c["values"]["new"], c["values"]["vanished"]) == (1, 1)


def test_models_and_benchmarks_that_come_and_go_and_values_that_are_not_numbers() -> None:
    before = board_from([_record("a", [("x", 1.0), ("y", "n/a")]), _record("b", [("x", 2.0)])])
    after = board_from([_record("a", [("x", 1.0), ("z", 3.0)]), _record("c", [("x", None)])])
    c = compare(before, after)
    assert [m["id"] for m in c["models"]["new"]] == ["c"] and c["models"]["new"][0]["values"] == 0
    assert [(m["id"], m["name"], m["values"]) for m in c["models"]["vanished"]] == [("b", "B", 1)]
    assert (c["benchmarks"]["new"], c["benchmarks"]["vanished"]) == (["z"], [])  # y never held a number
    assert (c["values"]["before"], c["values"]["after"], c["values"]["compared"]) == (2, 2, 1)
    assert (c["values"]["new"], c["values"]["vanished"]) == (1, 0)


@pytest.mark.parametrize("value", [float("nan"), float("inf"), True])
def test_a_score_that_is_not_a_finite_number_is_no_value(value: Any) -> None:
    assert board_from([_record("a", [("x", value)])]).values == {}
