"""Arrow columns built without ``pa.array`` (which imports pandas) equal ``pa.array``'s: the same
type, values and nulls, inferred or with the type given; shapes outside the plain ones are
``pa.array``'s to build. Hypothesis, seeded, 1,000 columns per test."""

from __future__ import annotations

import datetime as dt
import subprocess
import sys
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from sizes import examples

from evalhouse.warehouse.arrow_columns import column

EXAMPLES = settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
text = st.text(max_size=8)
naive = st.datetimes(min_value=dt.datetime(1, 1, 1), max_value=dt.datetime(9999, 12, 31))
plain = st.sampled_from(
    [
        (text, pa.string()),
        (st.integers(-(2**63), 2**63 - 1), pa.int64()),
        (st.floats(), pa.float64()),
        (st.booleans(), pa.bool_()),
        (naive, pa.timestamp("us")),
        (st.dates(), pa.date32()),
        (st.lists(text, max_size=3), pa.list_(pa.string())),
    ]
)


def same(got: pa.Array, expected: pa.Array) -> bool:
    values = [repr(v) for v in got.to_pylist()] == [repr(v) for v in expected.to_pylist()]  # NaN is NaN
    return got.type == expected.type and got.null_count == expected.null_count and values


@st.composite
def columns(draw: Any) -> tuple[list[Any], pa.DataType]:
    values, type_ = draw(plain)
    return draw(st.lists(st.none() | values, max_size=40)), type_


@seed(20261201)
@EXAMPLES
@given(columns())
def test_an_inferred_column_is_what_pa_array_infers(col: tuple[list[Any], pa.DataType]) -> None:
    values, _ = col
    assert same(column(values), pa.array(values))


@seed(20261201)
@EXAMPLES
@given(columns())
def test_a_typed_column_is_what_pa_array_builds(col: tuple[list[Any], pa.DataType]) -> None:
    values, type_ = col
    assert same(column(values, type_), pa.array(values, type=type_))


@pytest.mark.parametrize(
    "values",
    [[1, 2.5], [True, 1], [[]], [[], None], [2**64], [dt.datetime(2026, 1, 1, tzinfo=dt.UTC)], [{"a": 1}], [(1, 2)],
     [float("nan"), None], [None, None], [1, None, 2**53 + 1]],
)  # fmt: skip
def test_other_shapes_are_built_as_pa_array_builds_them(values: list[Any]) -> None:
    for type_ in (None, pa.float64(), pa.int64(), pa.string()):
        assert outcome(column, values, type_) == outcome(pa.array, values, type_), type_


def outcome(build: Any, values: list[Any], type_: pa.DataType | None) -> tuple[str, Any]:
    try:
        got = build(values, type=type_) if build is pa.array else build(values, type_)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        return "refused", type(exc).__name__
    return "built", (str(got.type), got.null_count, [repr(v) for v in got.to_pylist()])


def test_a_plain_column_does_not_import_pandas() -> None:
    code = (
        "import sys, datetime as dt\nfrom evalhouse.warehouse.arrow_columns import column\n"
        "column(['a', None]); column([1, None]); column([0.5]); column([True, None]); column([['a'], None])\n"
        "column([dt.datetime(2026, 1, 1)]); column([dt.date(2026, 1, 1), None])\n"
        "assert 'pandas' not in sys.modules, 'pandas was imported'\n"
    )
    subprocess.run([sys.executable, "-c", code], check=True)
