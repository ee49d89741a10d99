"""Turning values into strict JSON: numpy scalars to Python, NaN/inf to null, unknowns to text.

The one converter every writer uses (CLI ``--json``, analysis records, check results), so a
document evalhouse prints is always valid JSON (``json.dumps(..., allow_nan=False)`` holds).
"""

from __future__ import annotations

import json
import math
from datetime import date, datetime
from decimal import Decimal
from pathlib import PurePath
from typing import Any


def to_jsonable(value: Any) -> Any:
    """A structure of dict/list/str/int/float/bool/None equal in meaning to ``value``.

    Non-finite floats become ``None`` (JSON has no NaN); numpy scalars and arrays become Python
    numbers and lists; dates become ISO strings; sets become sorted lists; other objects their
    ``repr``.
    """
    if value is None or isinstance(value, bool | str):
        return value
    if isinstance(value, int):
        return value
    if isinstance(value, float):
        return value if math.isfinite(value) else None
    if isinstance(value, dict):
        return {str(k): to_jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_jsonable(v) for v in value]
    if isinstance(value, set | frozenset):
        return sorted((to_jsonable(v) for v in value), key=repr)
    if isinstance(value, datetime | date):
        return value.isoformat()
    if isinstance(value, Decimal):
        return to_jsonable(float(value))
    if isinstance(value, PurePath):
        return str(value)
    item = getattr(value, "item", None)  # numpy scalar
    if callable(item) and getattr(value, "shape", None) == ():
        return to_jsonable(item())
    tolist = getattr(value, "tolist", None)  # numpy array
    if callable(tolist):
        return to_jsonable(tolist())
    if hasattr(value, "model_dump"):  # pydantic model
        return to_jsonable(value.model_dump(mode="json"))
    return repr(value)


def dumps(value: Any, *, indent: int | None = None, sort_keys: bool = False) -> str:
    """Strict JSON text of ``value`` (through :func:`to_jsonable`; never bare NaN/Infinity)."""
    return json.dumps(to_jsonable(value), indent=indent, sort_keys=sort_keys, ensure_ascii=False, allow_nan=False)
