"""The one-pass canonical JSON (the fingerprint's second fast path, for records with nested lists
such as every Epoch and AA record) writes exactly the reference's bytes: on hypothesis documents
(infinities included, seeded, 1,000 examples; NaN by example) and on every pinned record."""

from __future__ import annotations

import datetime as dt
import math
from typing import Any

import pytest
from hypothesis import HealthCheck, given, seed, settings
from sizes import examples
from test_fast_paths import documents  # JSON-like documents with volatile keys at any depth

from evalhouse.schema.fingerprint import (
    _canonical,
    _normalise,
    _reference_hash,
    _Unsafe,
    canonical_json,
    normalized_hash,
)


@seed(20261201)
@settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(documents)
def test_one_pass_canonical_json_equals_the_reference(doc: Any) -> None:
    assert _canonical(doc) == canonical_json(_normalise(doc))


@pytest.mark.parametrize(
    "doc",
    [{"a": (1, 2)}, {1: "x"}, {"d": dt.date(2026, 1, 1)}, {"a": {"b": [{1: 2}]}}],
)
def test_what_is_not_plain_json_is_left_to_the_reference(doc: Any) -> None:
    with pytest.raises(_Unsafe):
        _canonical(doc)


def test_special_floats_are_written_as_json_writes_them() -> None:
    doc = [math.nan, math.inf, -math.inf, 1e-7, 1e16, -0.0, 0.1]
    assert _canonical(doc) == canonical_json(_normalise(doc))


def test_every_pinned_record_fingerprints_as_the_reference_does(shared: Any) -> None:
    from pinned_digest import parse_items

    records = [item.record for items in parse_items(shared).values() for item in items if hasattr(item, "record")]
    assert len(records) > 3500
    for record in records:
        assert _canonical(record) == canonical_json(_normalise(record))
        assert normalized_hash(record) == _reference_hash(record)
