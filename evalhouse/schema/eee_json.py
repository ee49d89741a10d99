"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid".

Strict means no NaN/Infinity literals, no duplicate object keys, UTF-8 only. The fast path parses
with orjson (which already refuses non-finite literals and invalid UTF-8) and proves the absence
of duplicate keys by counting: every ':' outside a string ends a key, so in a document with no
``\\u003a`` escape the ':' bytes equal the parsed keys plus the ':' inside parsed strings exactly
when no key repeats. A document where the counts differ, one with such an escape or with a number
orjson may have read inexactly (an integer beyond 64 bits), and any document orjson refuses go
through the standard library's parser with hooks, which gives the exact reason.
"""

from __future__ import annotations

import json
import math
from typing import Any

import orjson


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
        return _slow(data)  # raises with the precise reason (or accepts what orjson cannot read)
    if b"\\u003" in data or data.count(b":") != _colons(parsed):
        return _slow(data)  # an escaped ':' could hide a duplicate key from the count
    return parsed
