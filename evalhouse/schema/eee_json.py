"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid".

Strict means no NaN/Infinity literals, no duplicate object keys, UTF-8 only. The fast path parses
with orjson (which already refuses non-finite literals and invalid UTF-8) and proves the absence
of duplicate keys by counting: every ':' outside a string ends a key, so the document's ':' bytes
equal the parsed keys plus the ':' inside parsed strings. A document where the counts differ (a
duplicate key, or a ':' written as ``\\u003a``) and any document orjson refuses go through the
standard library's parser with hooks, which gives the exact reason.
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


def _colons(value: Any) -> int:
    """Keys plus ':' characters inside keys and strings, over a parsed document (iterative)."""
    total = 0
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, dict):
            total += len(item)
            for key, child in item.items():
                total += key.count(":")
                if isinstance(child, str):
                    total += child.count(":")
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, list):
            for child in item:
                if isinstance(child, str):
                    total += child.count(":")
                elif isinstance(child, dict | list):
                    stack.append(child)
        elif isinstance(item, str):
            total += item.count(":")
    return total


def strict_json(data: bytes) -> Any:
    """Parse JSON as EEE does: no NaN/Infinity literals, no duplicate keys, UTF-8 only."""
    if not data.strip():
        raise ValueError("empty file")
    try:
        parsed = orjson.loads(data)
    except orjson.JSONDecodeError:
        return _slow(data)  # raises with the precise reason (or accepts what orjson cannot read)
    if data.count(b":") != _colons(parsed):
        return _slow(data)
    return parsed
