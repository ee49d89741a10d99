"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid".

Strict means no NaN/Infinity literals, no duplicate object keys, UTF-8 only. The fast path parses
with orjson (which already refuses non-finite literals and invalid UTF-8) and proves the absence
of duplicate keys by counting: every ':' outside a string ends a key, so in a document with no
``\\u003a`` escape the ':' bytes equal the parsed keys plus the ':' inside parsed strings exactly
when no key repeats. A document where the counts differ, one with such an escape or with a number
orjson may have read inexactly (an integer beyond 64 bits), and any document orjson refuses go
through the standard library's parser with hooks, which gives the exact reason.

A document nested deeper than :data:`MAX_JSON_DEPTH` is refused with that reason (never a
``RecursionError`` from a parser, the pydantic models or a serialiser further down the load).
"""

from __future__ import annotations

import json
import math
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


def _depth_checked(data: bytes, parsed: Any) -> Any:
    # fewer brackets than the limit cannot nest deeper than it: most documents skip the walk
    if data.count(b"[") + data.count(b"{") > MAX_JSON_DEPTH and json_depth(parsed) > MAX_JSON_DEPTH:
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep")
    return parsed


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


#: Beyond this magnitude orjson reads an integer literal as a float; the reference keeps the int.
_INT_LIMIT = 2.0**63


def _colons(value: Any) -> int | None:
    """Keys plus ':' characters inside keys and strings, over a parsed document (iterative); None
    when a float is so large that it may have been an integer literal orjson could not hold."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        children = item.values() if isinstance(item, dict) else item if isinstance(item, list) else (item,)
        if isinstance(item, dict):
            total += len(item) + sum(key.count(":") for key in item)
        for child in children:
            kind = type(child)
            if kind is str:
                total += child.count(":")
            elif kind is dict or kind is list:
                stack.append(child)
            elif kind is float and abs(child) >= _INT_LIMIT:
                return None
    return total


def strict_json(data: bytes) -> Any:
    """Parse JSON as EEE does: no NaN/Infinity literals, no duplicate keys, UTF-8 only."""
    if not data.strip():
        raise ValueError("empty file")
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _depth_checked(data, _slow_bounded(data))  # the precise reason (or what orjson cannot read)
    if b"\\u003" in data or data.count(b":") != _colons(parsed):
        return _depth_checked(data, _slow_bounded(data))  # an escaped ':' could hide a duplicate key
    return _depth_checked(data, parsed)


def _slow_bounded(data: bytes) -> Any:
    try:
        return _slow(data)
    except RecursionError:  # orjson refused it for its depth, and so does the standard parser
        raise ValueError(f"nested more than {MAX_JSON_DEPTH} levels deep (too deep to parse)") from None
