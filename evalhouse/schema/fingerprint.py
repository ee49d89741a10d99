"""Record fingerprints: EEE's normalised hash, so evalhouse and the EEE tools agree on "same".

The hash ignores ``evaluation_id`` and ``retrieved_timestamp`` at any depth and the order of every
list, and is taken over canonical JSON (sorted keys, compact separators, ASCII). A re-scrape that
only changed the fetch time therefore fingerprints identically, which is what lets a nightly
refresh of an unchanged leaderboard add nothing.
"""

from __future__ import annotations

import hashlib
import json
import math
import re
from json.encoder import encode_basestring_ascii as _quote  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import orjson

VOLATILE_KEYS = frozenset({"evaluation_id", "retrieved_timestamp"})
_SORTED = orjson.OPT_SORT_KEYS
#: A float orjson spells differently from Python's json (exponent form, or 0.0000x).
_EXPONENT = re.compile(rb"[0-9][eE][-+]?[0-9]")
_TOKENS = re.compile(rb'"(?:[^"\\]|\\.)*"|-?[0-9]+(?:\.[0-9]+)?(?:[eE][-+]?[0-9]+)?')


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return sorted((_normalise(v) for v in value), key=canonical_json)
    return value


def _reference_hash(record: dict[str, Any]) -> str:
    return hashlib.sha256(canonical_json(_normalise(record)).encode("utf-8")).hexdigest()


class _Unsafe(Exception):
    """orjson's bytes would differ from Python's json for this document: use the reference path."""


def _python_float(token: re.Match[bytes]) -> bytes:
    text = token.group(0)
    if text[0] == 34 or not (b"." in text or b"e" in text or b"E" in text):
        return text  # a string, or an integer (written the same by both)
    return repr(float(text)).encode()


def _floaty(data: bytes) -> bool:
    return b"0.0000" in data or _EXPONENT.search(data) is not None


def _as_python_json(data: bytes, floaty: bool) -> bytes:
    """orjson's compact sorted bytes as Python's json writes them (ASCII input only); ``floaty``
    says the document holds a float the two spell differently somewhere."""
    return _TOKENS.sub(_python_float, data) if floaty and _floaty(data) else data


def _canonical_fast(record: dict[str, Any]) -> bytes:
    """The reference canonical JSON, built from orjson's output where that is provably the same.

    orjson (sorted keys, compact) writes ASCII documents as Python's json does except floats below
    1e-4 or from 1e16 up; those are rewritten token by token. Documents with non-ASCII text, with
    lists below the top level, or with a volatile key below the top level take the reference path.
    """
    whole = orjson.dumps(record, option=_SORTED)
    if not whole.isascii() or b"\x7f" in whole or b"null" in whole:
        raise _Unsafe  # non-ASCII text is escaped by json; orjson writes NaN and infinities as null
    top_lists = sum(1 for k, v in record.items() if type(v) is list and k not in VOLATILE_KEYS)
    if whole.count(b"[") != top_lists + sum(1 for k in VOLATILE_KEYS if type(record.get(k)) is list):
        raise _Unsafe  # a nested list (or a '[' in a string): its order needs the reference path
    for key in VOLATILE_KEYS:
        if whole.count(f'"{key}"'.encode()) != (key in record):
            raise _Unsafe
    floaty = _floaty(whole)
    parts = []
    for key in sorted(record):
        if key in VOLATILE_KEYS:
            continue
        value = record[key]
        if type(value) is list:
            items = sorted(_as_python_json(orjson.dumps(v, option=_SORTED), floaty) for v in value)
            text = b"[" + b",".join(items) + b"]"
        else:
            text = _as_python_json(orjson.dumps(value, option=_SORTED), floaty)
        parts.append(json.dumps(key).encode() + b":" + text)
    return b"{" + b",".join(parts) + b"}"


_SPECIAL_FLOATS = {math.inf: "Infinity", -math.inf: "-Infinity"}


def _canonical(value: Any) -> str:
    """``canonical_json(_normalise(value))`` in one pass, for plain JSON values.

    A list's canonical form is its items' canonical forms, sorted and joined: sorting items by
    their canonical JSON and then writing them (the reference) writes exactly those strings in
    that order, so each item is serialised once instead of once per comparison and once more at
    the end. Anything but str-keyed dicts, lists and JSON scalars (a tuple, an int subclass, a
    non-str key) is :class:`_Unsafe` and takes the reference path.
    """
    kind = type(value)
    if kind is str:
        return _quote(value)
    if kind is dict:
        parts = []
        for key in sorted(value):
            if type(key) is not str:
                raise _Unsafe
            if key not in VOLATILE_KEYS:
                parts.append(f"{_quote(key)}:{_canonical(value[key])}")
        return "{" + ",".join(parts) + "}"
    if kind is list:
        return "[" + ",".join(sorted([_canonical(v) for v in value])) + "]"
    if kind is float:
        if math.isnan(value):
            return "NaN"
        return _SPECIAL_FLOATS.get(value) or float.__repr__(value)
    if kind is int:
        return int.__repr__(value)
    if value is None:
        return "null"
    if value is True:
        return "true"
    if value is False:
        return "false"
    raise _Unsafe


def normalized_hash(record: dict[str, Any]) -> str:
    """sha256 of the record without volatile keys, lists order-insensitive (EEE-compatible)."""
    try:
        return hashlib.sha256(_canonical_fast(record)).hexdigest()
    except (_Unsafe, TypeError, orjson.JSONEncodeError):
        pass
    try:
        return hashlib.sha256(_canonical(record).encode("ascii")).hexdigest()
    except (_Unsafe, TypeError):  # TypeError: keys of mixed types do not sort
        return _reference_hash(record)


def record_fingerprint(record: dict[str, Any]) -> str:
    """The ledger fingerprint: the normalised hash minus the per-run samples file path.

    EEE's cron drops ``detailed_evaluation_results.file_path`` because it carries a fresh uuid4
    on every run; the samples ``checksum`` stays in, so changed samples still change the record.
    """
    details = record.get("detailed_evaluation_results")
    if isinstance(details, dict) and "file_path" in details:
        record = {
            **record,
            "detailed_evaluation_results": {k: v for k, v in details.items() if k != "file_path"},
        }
    return normalized_hash(record)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()
