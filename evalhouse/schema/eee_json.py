"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid"."""

from __future__ import annotations

import json
from typing import Any

#: How deep a record may nest. EEE records are a few levels deep; past this depth the pydantic
#: models, fingerprints and DuckDB's JSON functions would recurse without bound, so a deeper
#: document is refused with this reason instead of crashing the run with a RecursionError.
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
        stack.extend((child, depth) for child in children)
    return deepest


def strict_json(data: bytes, *, max_depth: int = MAX_JSON_DEPTH) -> Any:
    """Parse JSON as EEE does: no NaN/Infinity literals, no duplicate keys, UTF-8 only.

    A document nested deeper than ``max_depth`` is a ``ValueError`` that says so.
    """

    def reject_constant(name: str) -> Any:
        raise ValueError(f"non-finite number literal {name} is not valid JSON")

    def no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        keys = [k for k, _ in pairs]
        dupes = sorted({k for k in keys if keys.count(k) > 1})
        if dupes:
            raise ValueError(f"duplicate object keys {dupes}")
        return dict(pairs)

    if not data.strip():
        raise ValueError("empty file")
    text = data.decode("utf-8")
    try:
        doc = json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)
    except RecursionError:
        raise ValueError(f"nested more than {max_depth} levels deep (too deep to parse)") from None
    if json_depth(doc, limit=max_depth) > max_depth:
        raise ValueError(f"nested more than {max_depth} levels deep")
    return doc
