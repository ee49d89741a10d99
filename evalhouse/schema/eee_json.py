"""Reading EEE JSON the way the EEE tools do: strict, so evalhouse and EEE agree on "valid"."""

from __future__ import annotations

import json
from typing import Any


def strict_json(data: bytes) -> Any:
    """Parse JSON as EEE does: no NaN/Infinity literals, no duplicate keys, UTF-8 only."""

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
    return json.loads(text, parse_constant=reject_constant, object_pairs_hook=no_duplicates)
