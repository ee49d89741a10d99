"""Arrow columns from Python lists without ``pyarrow.array``, which imports pandas on first use.

``pa.array(values)`` checks whether ``values`` is a pandas object, and that check imports pandas
(≈ 0.25 s, more than a whole refresh of a small source spends inserting). The columns a load
writes are plain: strings, integers, floats, booleans, dates, naive timestamps and lists of strings, each
possibly NULL. :func:`column` builds those from Arrow buffers (strings through Arrow's own
builder) and gives exactly what ``pa.array`` gives — same type, same values, same nulls; anything
else (mixed types, time zones, nested values, integers beyond 64 bits) goes to ``pa.array``.
"""

from __future__ import annotations

import datetime as dt
from array import array
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    import pyarrow as pa

_I64 = (-(2**63), 2**63 - 1)
_EXACT_FLOAT_INT = 2**53  # ints an explicit float64 column takes exactly (pa.array's own limit)
_EPOCH_ORDINAL = dt.date(1970, 1, 1).toordinal()


class _Other(Exception):
    """Not one of the plain shapes: ``pa.array`` decides."""


def column(values: Sequence[Any], type_: pa.DataType | None = None) -> pa.Array:
    """``pa.array(values, type=type_)`` for plain columns, without importing pandas."""
    import pyarrow as pa  # noqa: PLC0415 - Arrow loads with the first bulk insert, not on a quiet night

    try:
        return _build(pa, list(values), type_ if type_ is not None else _infer(pa, values))
    except _Other:
        return pa.array(values, type=type_)


def _infer(pa: Any, values: Sequence[Any]) -> pa.DataType:
    kinds = set(map(type, values)) - {type(None)}
    if not kinds:
        return pa.null()
    if len(kinds) > 1:
        raise _Other
    kind = kinds.pop()
    simple = {str: pa.string(), int: pa.int64(), float: pa.float64(), bool: pa.bool_()}
    if kind in simple:
        return simple[kind]
    if kind is dt.datetime and all(v is None or v.tzinfo is None for v in values):
        return pa.timestamp("us")
    if kind is dt.date:
        return pa.date32()
    if kind is list and all(v is None or all(type(x) is str for x in v) for v in values):
        if not any(v for v in values):
            raise _Other  # only empty lists: pa.array makes them list<null>
        return pa.list_(pa.string())
    raise _Other


def _bits(flags: list[bool]) -> bytes:
    """Arrow's bitmap (least significant bit first) of ``flags``."""
    import numpy as np  # noqa: PLC0415 - loaded by pyarrow already

    return np.packbits(np.array(flags, dtype=bool), bitorder="little").tobytes()


def _validity(values: list[Any]) -> tuple[bytes | None, int]:
    nulls = values.count(None)
    if not nulls:
        return None, 0
    return _bits([v is not None for v in values]), nulls


def _kinds(values: list[Any]) -> set[type]:
    return set(map(type, values)) - {type(None)}


def _fixed(pa: Any, type_: pa.DataType, values: list[Any], code: str, data: list[Any]) -> pa.Array:
    validity, nulls = _validity(values)
    buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(array(code, data))]
    return pa.Array.from_buffers(type_, len(values), buffers, null_count=nulls)


def _strings(pa: Any, values: list[Any]) -> pa.Array:
    if not _kinds(values) <= {str}:
        raise _Other
    builder = pa.lib.StringBuilder()
    builder.append_values(values)
    return builder.finish()


def _ints(values: list[Any]) -> list[int]:
    if not _kinds(values) <= {int}:
        raise _Other
    data = [0 if v is None else v for v in values]
    if data and not _I64[0] <= min(data) <= max(data) <= _I64[1]:
        raise _Other
    return data


def _floats(values: list[Any]) -> list[float]:
    kinds = _kinds(values)
    if not kinds <= {float, int}:
        raise _Other
    if int in kinds and not all(abs(v) <= _EXACT_FLOAT_INT for v in values if type(v) is int):
        raise _Other
    return [0.0 if v is None else float(v) for v in values]


def _micros(values: list[Any]) -> list[int]:
    out = []
    for v in values:
        if v is None:
            out.append(0)
        elif type(v) is dt.datetime and v.tzinfo is None:
            days = v.toordinal() - _EPOCH_ORDINAL
            out.append(((days * 24 + v.hour) * 60 + v.minute) * 60_000_000 + v.second * 1_000_000 + v.microsecond)
        else:
            raise _Other
    return out


def _days(values: list[Any]) -> list[int]:
    if not _kinds(values) <= {dt.date}:
        raise _Other
    return [0 if v is None else v.toordinal() - _EPOCH_ORDINAL for v in values]


def _bools(pa: Any, values: list[Any]) -> pa.Array:
    if not _kinds(values) <= {bool}:
        raise _Other
    validity, nulls = _validity(values)
    buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(_bits([v is True for v in values]))]
    return pa.Array.from_buffers(pa.bool_(), len(values), buffers, null_count=nulls)


def _string_lists(pa: Any, values: list[Any]) -> pa.Array:
    offsets, flat = [0], []
    for v in values:
        if v is not None:
            if type(v) is not list:
                raise _Other
            flat.extend(v)
        offsets.append(len(flat))
    if len(flat) >= 2**31:
        raise _Other
    child = _strings(pa, flat)
    validity, nulls = _validity(values)
    buffers = [None if validity is None else pa.py_buffer(validity), pa.py_buffer(array("i", offsets))]
    return pa.Array.from_buffers(pa.list_(pa.string()), len(values), buffers, null_count=nulls, children=[child])


def _build(pa: Any, values: list[Any], type_: pa.DataType) -> pa.Array:
    if type_ == pa.string():
        return _strings(pa, values)
    if type_ == pa.int64():
        return _fixed(pa, type_, values, "q", _ints(values))
    if type_ == pa.float64():
        return _fixed(pa, type_, values, "d", _floats(values))
    if type_ == pa.bool_():
        return _bools(pa, values)
    if type_ == pa.timestamp("us"):
        return _fixed(pa, type_, values, "q", _micros(values))
    if type_ == pa.date32():
        return _fixed(pa, type_, values, "i", _days(values))
    if type_ == pa.list_(pa.string()):
        return _string_lists(pa, values)
    if type_ == pa.null() and all(v is None for v in values):
        return pa.nulls(len(values))
    raise _Other
