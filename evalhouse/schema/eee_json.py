"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid".

Strict means no NaN/Infinity literals, no duplicate object keys, UTF-8 only. The fast path parses
with orjson (which already refuses non-finite literals and invalid UTF-8) and proves the absence
of duplicate keys by counting: every ':' outside a string ends a key, and orjson writes a ':'
inside a string as itself, so in a document with no ``\\u003a`` escape the ':' bytes of the input
and of the parsed document written back are equal exactly when no key was dropped as a repeat.
A document where the counts differ, one with such an escape or with a number orjson may have
read inexactly (an integer beyond 64 bits), and any document orjson refuses go through the
standard library's parser with hooks, which gives the exact reason.

A document nested deeper than :data:`MAX_JSON_DEPTH` is refused with that reason before it is
written back (orjson refuses to write one deeper than 254 levels) - never a ``RecursionError``
from a parser, the pydantic models or a serialiser further down the load.
"""

from __future__ import annotations

import json
import math
from functools import cache
from typing import Any

import orjson

#: How deep a record may nest. EEE records are a few levels deep (16 at most in ../shared); past
#: this depth the models, fingerprints and serialisers of the load would recurse without bound.
MAX_JSON_DEPTH = 64


def json_depth(value: Any, *, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply ``value`` nests lists and objects (a scalar is 0); stops counting past ``limit``.

    Iterative, so a document nested 100,000 levels deep is measured without recursion.
    """
    deepest = 0
    stack: list[tuple[Any, int]] = [(value, 0)]
    while stack:
        node, depth = stack.pop()
        if isinstance(node, dict):
            children = node.values()
        elif isinstance(node, list | tuple):
            children = node
        else:
            continue
        depth += 1
        deepest = max(deepest, depth)
        if deepest > limit:
            return deepest
        stack.extend((child, depth) for child in children if isinstance(child, dict | list | tuple))
    return deepest


_KEEP_BRACKETS = bytes(b for b in range(256) if b not in b"[]{}")
_KEEP_STRUCTURE = bytes(b for b in range(256) if b not in b'"[]{}')
_ONE_KIND = bytes.maketrans(b"{}", b"[]")


def text_depth(data: bytes, *, limit: int = MAX_JSON_DEPTH) -> int:
    """How deeply the valid JSON text ``data`` nests (as :func:`json_depth` of what it parses to);
    stops counting past ``limit``.

    Read from the bytes, never walking the parsed value: escaped backslashes and then escaped
    quotes are removed (in valid JSON a backslash only ever starts an escape inside a string), so
    every remaining quote opens or closes a string and the text between quote pairs is dropped.
    What is left of brackets outside strings loses one level per pass of removing empty pairs.

    Most strings hold no bracket: with everything but quotes and brackets deleted, they are
    adjacent quote pairs, and removing those leaves the brackets outside strings. A quote left
    after that belongs to a string holding a bracket (scanning from the left, the first such
    string's opening quote is followed by a bracket, so no pair removes it), and then the strings
    are cut out one by one instead.
    """
    unescaped = data.replace(b"\\\\", b"").replace(b'\\"', b"")
    skeleton = unescaped.translate(_ONE_KIND, delete=_KEEP_STRUCTURE).replace(b'""', b"")
    if b'"' in skeleton:
        outside = b"".join(unescaped.split(b'"')[::2])
        skeleton = outside.translate(_ONE_KIND, delete=_KEEP_BRACKETS)
    depth = 0
    while skeleton and depth <= limit:
        skeleton = skeleton.replace(b"[]", b"")
        depth += 1
    return depth


def _depth_checked(data: bytes, parsed: Any) -> Any:
    # fewer brackets than the limit cannot nest deeper than it: most documents skip the count
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and text_depth(data) > MAX_JSON_DEPTH:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return parsed


def _slow_bounded(data: bytes) -> Any:
    try:
        return _depth_checked(data, _slow(data))
    except RecursionError:  # orjson refused it for its depth (over 1,024), and so does the standard parser
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep (too deep to parse)") from None


def _slow(data: bytes) -> Any:
    def reject_constant(name: str) -> Any:
        raise ValueError(f"non-finite number literal {name} is not valid JSON")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"duplicate object keys {dupes}")
        return dict(pairs)

    def finite_float(text: str) -> float:
        value = float(text)
        if value in (math.inf, -math.inf):
            raise ValueError(f"number {text} does not fit a 64-bit float")
        return value

    text = data.decode("utf-8")
    return json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates, parse_float=finite_float)


#: orjson reads an integer literal beyond 64 bits as a float; such a literal has 19+ digits.
_DIGITS = bytes.maketrans(b"123456789", b"000000000")
_LONG_NUMBER = b"0" * 19


@cache
def _orjson_depth_limit() -> int | None:
    """The deepest value orjson writes (it refuses deeper ones: 254 levels in orjson 3), found by
    trying; None when it writes anything up to 4,096 levels (then the bytes are counted instead)."""

    def writes(depth: int) -> bool:
        value: Any = 0
        for _ in range(depth):
            value = [value]
        try:
            orjson.dumps(value)
        except (TypeError, orjson.JSONEncodeError):
            return False
        return True

    low, high = MAX_JSON_DEPTH, 4096
    if not writes(low) or writes(high):
        return None
    while high - low > 1:  # writes(low), not writes(high)
        middle = (low + high) // 2
        low, high = (middle, high) if writes(middle) else (low, middle)
    return low


def _written_within_depth(data: bytes, parsed: Any) -> bytes | None:
    """orjson's compact bytes of ``parsed``, ValueError when it nests deeper than the limit, or
    None when orjson cannot write it for another reason (the standard library's path decides).

    Written inside ``limit - MAX_JSON_DEPTH`` lists, the value is refused by orjson exactly when it
    nests deeper than :data:`MAX_JSON_DEPTH`: the depth check and the bytes the duplicate-key
    count (and the stored record) need come from one write, with no pass over the text."""
    limit = _orjson_depth_limit()
    if limit is None:
        _depth_checked(data, parsed)
        return orjson.dumps(parsed)
    wrappers = limit - MAX_JSON_DEPTH
    value = parsed
    for _ in range(wrappers):
        value = [value]
    try:
        written = orjson.dumps(value)
    except TypeError as exc:  # orjson.JSONEncodeError is one: "Recursion limit reached" when too deep
        if "ecursion" in str(exc):
            raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep") from None
        return None
    return written[wrappers:-wrappers]


def read_json(data: bytes) -> tuple[Any, bytes | None]:
    """:func:`strict_json`, and orjson's compact bytes of what it read when the fast path wrote
    them (``orjson.dumps`` of the value; ``None`` from the standard library's path)."""
    if not data.strip():
        raise ValueError("empty file")
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _slow_bounded(data), None  # raises with the precise reason (or accepts what orjson cannot read)
    written = _written_within_depth(data, parsed)
    if (
        written is None
        or b"\\u003" in data  # an escaped ':' could hide a duplicate key from the count
        or _LONG_NUMBER in data.translate(_DIGITS)  # an integer orjson may have read inexactly
        or data.count(b":") != written.count(b":")  # a key was lost: a duplicate
    ):
        return _slow_bounded(data), None
    return parsed, written


def strict_json(data: bytes) -> Any:
    """Parse JSON as EEE does: no NaN/Infinity literals, no duplicate keys, UTF-8 only."""
    return read_json(data)[0]
