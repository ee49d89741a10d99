"""The load path's fast answers equal the slow reference ones: strict JSON reading, the EEE
fingerprint, and the "surely valid" record check (which may only ever say yes when pydantic does).

Checked on every real record in ../shared (the legacy datastore corpus, the EEE samples) and on
hypothesis-generated documents (seeded, 1,000+ examples each)."""

from __future__ import annotations

import copy
import json
import math
import random
from collections.abc import Iterator
from functools import cache
from pathlib import Path
from typing import Any

import orjson
import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from sizes import examples

from evalhouse.schema.eee import EvaluationLog
from evalhouse.schema.eee_check import surely_valid
from evalhouse.schema.eee_json import _slow, strict_json
from evalhouse.schema.eee_legacy import migrate_legacy
from evalhouse.schema.fingerprint import (
    _canonical_parts,
    _reference_hash,
    _Unsafe,
    fingerprint_with_results,
    normalized_hash,
)

LEGACY = "datasets/eee-datastore-legacy/data"
EXAMPLES = settings(max_examples=examples(1000), deadline=None, suppress_health_check=[HealthCheck.too_slow])

text = st.text(alphabet=st.characters(codec="utf-8", exclude_categories=["Cs"]), max_size=12)
leaves = st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | text
documents = st.recursive(
    leaves,
    lambda children: st.lists(children, max_size=5) | st.dictionaries(text | st.sampled_from(
        ["evaluation_id", "retrieved_timestamp", "score", "a:b"]), children, max_size=5),
    max_leaves=40,
)  # fmt: skip


def reference_parse(data: bytes) -> Any:
    if not data.strip():
        raise ValueError("empty file")
    return _slow(data)


def outcome(f: Any, data: bytes) -> tuple[str, Any]:
    try:
        return "ok", f(data)
    except (ValueError, UnicodeDecodeError, RecursionError) as exc:
        return "refused", type(exc).__name__


@seed(20261201)
@EXAMPLES
@given(documents)
def test_strict_json_reads_as_the_reference_does(doc: Any) -> None:
    for data in (
        json.dumps(doc, allow_nan=True).encode(),  # infinities become the Infinity literal: refused
        json.dumps(doc, ensure_ascii=False, allow_nan=True, indent=1).encode(),
    ):
        assert outcome(strict_json, data) == outcome(reference_parse, data)


@pytest.mark.parametrize(
    "data",
    [b'{"a":1,"a":2}', b'{"a":"x\\u003ay","b":{"a":1,"a":1}}', b'{"a":NaN}', b'{"x":1e400}', b"\xef\xbb\xbf{}",
     b'{"k:1":"v:2"}', b'{"a":"\\u003a"}', b"[1,2", b"   "],
)  # fmt: skip
def test_strict_json_edge_cases_match_the_reference(data: bytes) -> None:
    assert outcome(strict_json, data) == outcome(reference_parse, data)


@seed(20261201)
@EXAMPLES
@given(st.dictionaries(text | st.sampled_from(["evaluation_id", "evaluation_results"]), documents, max_size=6))
def test_the_fast_fingerprint_equals_the_reference(doc: dict[str, Any]) -> None:
    assert normalized_hash(doc) == _reference_hash(doc)


@pytest.mark.parametrize(
    "doc",
    [
        {"a": 1e-7},  # a bare number: the part ends at the end of the text
        {"a": 1e16, "b": "x"},
        {"a": 1e-7, "b": "x"},  # a bare number followed by the next part
        {"a": 2.5e-9, "b": 3},
        {"a": [1e-7]},
        {"a": [1.5e20, "3.8e+25"]},
        {"model": {"training_compute_flop": "3.8e+25"}, "y": {"z": 2.5e-9}},
        {"model": {"training_compute_flop": "3.8e+25"}},  # exponent-like text only: no rewrite needed
        {"a": "1e-7,", "b": 1e-7},
        {"a": 0.00001, "b": {"c": 1e300}},
        {"evaluation_results": [{"score_details": {"score": 1e-5}}, {"score_details": {"score": 0.5}}]},
    ],
)
def test_floats_orjson_spells_otherwise_are_rewritten_and_exponent_like_text_is_not(doc: dict[str, Any]) -> None:
    _canonical_parts(doc, json_exact=True)  # the fast path takes these (it raises otherwise)
    assert normalized_hash(doc) == _reference_hash(doc)
    assert normalized_hash(doc, json_exact=True) == _reference_hash(doc)


ascii_text = st.text(alphabet=st.characters(min_codepoint=32, max_codepoint=126), max_size=8)
ascii_leaves = (
    st.booleans()
    | st.integers(-(2**63), 2**63 - 1)
    | st.floats(allow_nan=False, allow_infinity=False)
    | st.sampled_from([1e-7, 2.5e-9, 1e16, 1.5e20, 0.00001, "3.8e+25", "1e-7,"])
    | ascii_text
)
ascii_records = st.dictionaries(
    ascii_text | st.sampled_from(["evaluation_results", "model_info"]),
    ascii_leaves
    | st.lists(st.dictionaries(ascii_text, ascii_leaves, max_size=4), max_size=4)
    | st.dictionaries(ascii_text, ascii_leaves | st.dictionaries(ascii_text, ascii_leaves, max_size=3), max_size=4),
    max_size=6,
)


@seed(20261203)
@EXAMPLES
@given(ascii_records)
def test_the_fast_fingerprint_equals_the_reference_on_records_the_fast_path_takes(doc: dict[str, Any]) -> None:
    """ASCII records without nulls or nested lists: what the one-pass canonical JSON takes whole."""
    assert normalized_hash(doc, json_exact=True) == _reference_hash(doc)
    assert normalized_hash(doc) == _reference_hash(doc)


@pytest.fixture(scope="module", autouse=True)
def _records_read_once() -> Iterator[None]:
    """The real and pinned records are read once for this module's tests (each copies a record
    before changing it), and let go after them."""
    yield
    real_records.cache_clear()
    _pinned_records.cache_clear()


@cache
def real_records(shared: Path) -> list[dict[str, Any]]:
    records = [json.loads(p.read_text()) for p in sorted((shared / LEGACY).rglob("*.json"))]
    records += [migrate_legacy(r)[0] for r in records]
    records += [json.loads(p.read_text()) for p in sorted((shared / "formats/eee").rglob("*.json"))
                if "schema" not in p.name]  # fmt: skip
    return records


def test_the_fast_fingerprint_equals_the_reference_on_every_real_record(shared: Path) -> None:
    records = real_records(shared)
    assert len(records) > 5000
    for record in records:
        assert normalized_hash(record) == _reference_hash(record)
        assert normalized_hash(record, json_exact=True) == _reference_hash(record)


def test_real_records_read_from_json_take_the_fast_path_and_give_each_results_bytes(shared: Path) -> None:
    """Real results carry a ``source_data.url`` list and records hold nulls: the fast path orders the
    one and, for records read from JSON text, reads the other as a null; only HAL's agentic tool
    lists (and non-ASCII text) still take the reference path."""
    records = [migrate_legacy(json.loads(p.read_text()))[0] for p in sorted((shared / LEGACY).rglob("*.json"))]
    fast = 0
    for record in records:
        fingerprint, results = fingerprint_with_results(record, json_exact=True)
        assert fingerprint == _reference_hash(record)
        if results is not None:
            fast += 1
            assert results == [orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in record["evaluation_results"]]
    assert fast >= 0.9 * len(records), f"{fast} of {len(records)} real records on the fast path"


_URLS = st.lists(st.text(alphabet=st.sampled_from(list('ab/:!"\\ ')), max_size=6), max_size=4)


@seed(20261201)
@EXAMPLES
@given(
    st.lists(st.fixed_dictionaries({"source_data": st.fixed_dictionaries({"url": _URLS}), "x": documents}), max_size=4),
    documents,
)
def test_results_with_url_lists_fingerprint_as_the_reference_does(results: list[Any], other: Any) -> None:
    doc = {"evaluation_results": results, "other": other, "retrieved_timestamp": "1"}
    assert normalized_hash(doc) == _reference_hash(doc)
    try:
        json.dumps(doc, allow_nan=False)
    except ValueError:
        return  # an infinity: not a document JSON text holds, which json_exact promises
    assert normalized_hash(doc, json_exact=True) == _reference_hash(doc)
    try:
        _, raw = _canonical_parts(doc, json_exact=True)
    except (_Unsafe, TypeError, orjson.JSONEncodeError):
        return
    assert raw == [orjson.dumps(r, option=orjson.OPT_SORT_KEYS) for r in results]


def test_a_null_takes_the_fast_path_only_for_records_read_from_json() -> None:
    doc = {"evaluation_results": [{"score": None}], "a": None}
    with pytest.raises(_Unsafe):  # orjson writes NaN as null: from a parser, a null may be a NaN
        _canonical_parts(doc)
    assert _canonical_parts(doc, json_exact=True)[1] == [b'{"score":null}']
    assert normalized_hash({"a": float("nan")}) == _reference_hash({"a": float("nan")})


def pydantic_valid(record: Any) -> bool:
    try:
        EvaluationLog.model_validate(record)
    except ValueError:
        return False
    return True


MUTATIONS = (
    lambda r: r["evaluation_results"][0]["metric_config"].pop("max_score", None),
    lambda r: r["evaluation_results"][0]["score_details"].__setitem__("score", float("inf")),
    lambda r: r["evaluation_results"][0]["score_details"].__setitem__("score", "0.5"),
    lambda r: r["evaluation_results"][0]["metric_config"].__setitem__("score_type", "levels"),
    lambda r: r["model_info"]["additional_details"].__setitem__("params", 7),
    lambda r: r["model_info"].pop("id"),
    lambda r: r.__setitem__("schema_version", "0.2.0"),
    lambda r: r["source_metadata"].__setitem__("evaluator_relationship", "friend"),
    lambda r: r["evaluation_results"].append({"evaluation_name": "x"}),
    lambda r: r["evaluation_results"][0]["score_details"].__setitem__(
        "uncertainty", {"confidence_interval": {"lower": 0.1, "upper": 0.2, "confidence_level": 1.5}}
    ),
    lambda r: r["model_info"]["additional_details"].__setitem__("deployment_type", "cloud"),
    lambda r: r.__setitem__("surprise", {"nested": [1, 2]}),
)


def test_surely_valid_never_says_yes_where_pydantic_says_no(shared: Path) -> None:
    rng = random.Random(20261201)
    said_yes = agreed = 0
    for record in real_records(shared):
        fast, slow = surely_valid(record), pydantic_valid(record)
        assert not (fast and not slow), record.get("evaluation_id")
        said_yes += fast
        agreed += fast == slow
        if isinstance(record.get("evaluation_results"), list) and record["evaluation_results"] and slow:
            for mutate in rng.sample(MUTATIONS, 4):
                broken = copy.deepcopy(record)
                mutate(broken)
                assert not (surely_valid(broken) and not pydantic_valid(broken)), (record.get("evaluation_id"), mutate)
    assert said_yes > 2000, "the fast check answers for the bulk of real valid records"


#: JSON values whose strings are full of what could fool a byte scan: brackets, quotes, backslashes.
_TRICKY_TEXT = st.text(alphabet=st.sampled_from(list('[]{}"\\\\/:,ab\u00e9\u2028')), max_size=12)
_NESTED = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False, allow_infinity=False) | _TRICKY_TEXT,
    lambda children: st.lists(children, max_size=4) | st.dictionaries(_TRICKY_TEXT, children, max_size=4),
    max_leaves=40,
)


@seed(20261201)
@EXAMPLES
@given(value=_NESTED, indent=st.sampled_from([None, 1, 2]), ascii_only=st.booleans())
def test_depth_read_from_the_bytes_equals_the_depth_of_the_parsed_value(value: Any, indent, ascii_only) -> None:
    from evalhouse.schema.eee_json import json_depth, text_depth

    text = json.dumps(value, indent=indent, ensure_ascii=ascii_only).encode()
    assert text_depth(text) == json_depth(value)
    assert text_depth(text, limit=2) == min(json_depth(value), 3)  # stops counting past the limit


def test_the_depth_limit_holds_on_the_fast_path() -> None:
    deep = b"[" * 65 + b"]" * 65
    with pytest.raises(ValueError, match="nested more than 64 levels"):
        strict_json(deep)
    hidden = b'{"a": "' + b"]" * 200 + b'", "b": ' + b"[" * 65 + b"]" * 65 + b"}"  # closers in a string hide nothing
    with pytest.raises(ValueError, match="nested more than 64 levels"):
        strict_json(hidden)
    fine = b'{"a": "' + b"[" * 200 + b'", "b": ' + b"[" * 63 + b"]" * 63 + b"}"  # openers in a string add nothing
    assert strict_json(fine)["a"] == "[" * 200


def _as_written(value: Any) -> str:
    """JSON text with key order and types (1 and 1.0, true and 1 are told apart)."""
    return json.dumps(value, allow_nan=True)


#: Ways a valid record can differ from what the models write back: key order, None, a value of
#: another type than declared, an unknown key, an infinite bound, a str subclass.
def _reversed_keys(obj: dict[str, Any]) -> None:
    items = list(obj.items())
    obj.clear()
    obj.update(reversed(items))


DRIFTS = (
    _reversed_keys,
    lambda r: _reversed_keys(r["evaluation_results"][0]["metric_config"]),
    lambda r: r["model_info"].__setitem__("developer", None),
    lambda r: (
        r["model_info"].update({"additional_details": r["model_info"].pop("additional_details")})
        or r["model_info"].__setitem__("name", r["model_info"].pop("name"))
    ),
    lambda r: r["evaluation_results"][0]["score_details"].__setitem__("score", 1),
    lambda r: r["evaluation_results"][0]["score_details"].__setitem__("score", True),
    lambda r: r["evaluation_results"][0]["metric_config"].__setitem__("max_score", 100),
    lambda r: r["evaluation_results"][0]["metric_config"].__setitem__("max_score", float("inf")),
    lambda r: r["evaluation_results"][0]["metric_config"].__setitem__("max_score", "Infinity"),
    lambda r: r["evaluation_results"][0]["metric_config"].__setitem__("evaluation_description", None),
    lambda r: r["evaluation_results"][0].__setitem__("surprise", "kept"),
    lambda r: r["evaluation_results"][0].__setitem__("surprise", 3),
    lambda r: r["evaluation_results"][0]["score_details"].update(
        {"uncertainty": {"num_samples": 10.0, "standard_error": {"value": 1}}}
    ),
    lambda r: r["evaluation_results"][0]["score_details"].update(
        {"uncertainty": {"confidence_interval": {"upper": 0.3, "lower": 0.1}}}
    ),
    lambda r: r["source_metadata"].__setitem__("source_name", type("Name", (str,), {})("x")),
    lambda r: r["model_info"]["additional_details"].update({"zz": "late", "deployment_type": "unknown"}),
    lambda r: r.__setitem__("detailed_evaluation_results", None),
)


def _surely(record: dict[str, Any]) -> bool:
    try:
        return surely_valid(record)
    except ValueError:  # a value the schema check cannot take (a str subclass): the models decide
        return False


@cache
def _pinned_records(shared: Path) -> list[dict[str, Any]]:
    from pinned_digest import parse_items

    from evalhouse.schema.records import ParsedRecord

    return [i.record for items in parse_items(shared).values() for i in items if isinstance(i, ParsedRecord)]


def test_a_record_said_to_be_its_own_dump_is_what_the_models_write(shared: Path) -> None:
    """:func:`dumps_as_itself` (the parsers keep such a record as built) never says yes to a valid
    record the models would write differently: on every real record, the pinned sources' parsed
    records, and records drifted from them in order, types, None values and unknown keys."""
    from evalhouse.schema.eee_dump import dumps_as_itself

    rng = random.Random(20261202)
    pinned = _pinned_records(shared)
    said_yes = said_no = 0
    real = real_records(shared)
    for record in [*rng.sample(real, 1500), *rng.sample(pinned, 600)]:
        variants = [record]
        if isinstance(record.get("evaluation_results"), list) and record["evaluation_results"]:
            for drift in rng.sample(DRIFTS, 6):
                drifted = copy.deepcopy(record)
                try:
                    drift(drifted)
                except (KeyError, IndexError, TypeError, AttributeError):  # a record without that part
                    continue
                variants.append(drifted)
        for variant in variants:
            if not (_surely(variant) and pydantic_valid(variant)):
                continue
            written = _as_written(EvaluationLog.model_validate(variant).to_json_dict())
            if dumps_as_itself(variant):
                assert written == _as_written(variant), variant.get("evaluation_id")
                said_yes += 1
            else:
                said_no += 1
    assert all(dumps_as_itself(r) for r in pinned), "the pinned parsers build records in the models' form"
    assert said_yes > 1000 and said_no > 500


def test_a_record_with_values_of_subclassed_types_is_left_to_the_models(shared: Path) -> None:
    """jsonschema-rs refuses to read a str subclass (a parser's enum, say): the fast check says
    "ask the models" instead of raising, and the models decide as they do for plain strings."""

    class Name(str):
        pass

    record = next(r for r in real_records(shared) if pydantic_valid(r) and r.get("schema_version") == "0.3.0")
    record = copy.deepcopy(record)
    record["model_info"]["name"] = Name(record["model_info"]["name"])
    assert surely_valid(record) is False
    assert pydantic_valid(record)


def _put(record: dict[str, Any], path: tuple[Any, ...], value: Any) -> bool:
    node: Any = record
    for step in path[:-1]:
        node = node.get(step) if isinstance(node, dict) else (node[step] if isinstance(node, list) and node else None)
        if node is None:
            return False
    if not isinstance(node, dict):
        return False
    node[path[-1]] = value
    return True


NUMBER_SPOTS = [
    ("evaluation_results", 0, "score_details", "score"),
    ("evaluation_results", 0, "score_details", "uncertainty", "standard_error", "value"),
    ("evaluation_results", 0, "score_details", "uncertainty", "confidence_interval", "lower"),
    ("evaluation_results", 0, "metric_config", "min_score"),
    ("evaluation_results", 0, "metric_config", "max_score"),
    ("evaluation_results", 0, "metric_config", "unknown_number"),
    ("model_info", "additional_details", "training_compute_flop"),
]


def test_a_record_that_is_its_own_dump_holds_no_nan_or_infinity(shared: Path) -> None:
    """Why a parser's record kept as built skips the schema check's walk over its numbers
    (``build_record``): a NaN or an infinity anywhere makes :func:`dumps_as_itself` say no, so the
    record goes through the models, which refuse it."""
    from evalhouse.ingest.sources._common import _kept_as_built
    from evalhouse.schema.eee_dump import dumps_as_itself

    pinned = _pinned_records(shared)
    tried = 0
    for record in random.Random(20261203).sample(pinned, 200):
        for spot in NUMBER_SPOTS:
            for bad in (math.nan, math.inf, -math.inf):
                variant = copy.deepcopy(record)
                if _put(variant, spot, bad):
                    tried += 1
                    assert not dumps_as_itself(variant), spot
                    assert not _kept_as_built(variant), spot
    assert tried > 1000
