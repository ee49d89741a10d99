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
from functools import lru_cache
from json.encoder import encode_basestring_ascii as _quote  # type: ignore[attr-defined]
from pathlib import Path
from typing import Any

import orjson

VOLATILE_KEYS = frozenset({"evaluation_id", "retrieved_timestamp"})
_SORTED = orjson.OPT_SORT_KEYS
#: A number in exponent form as orjson writes it: digits, a signed exponent, and then what ends a
#: number in compact JSON (a comma, a closing bracket, or the end of the text). Text such as Epoch's
#: "3.8e+25" (a string: a quote follows) does not match, so its records skip the token rewrite.
_EXPONENT = re.compile(rb"[0-9][eE][-+]?[0-9]+(?:[,}\]]|\Z)")
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
    """Whether orjson's bytes may hold a float Python's json spells otherwise: below 1e-4 orjson
    writes ``0.00001`` or ``1.5e-7``, from 1e16 ``1e+16`` (an exponent always signed), so two
    byte searches rule most documents out before the regex scans one."""
    if b"0.0000" in data:
        return True
    return (b"e-" in data or b"e+" in data) and _EXPONENT.search(data) is not None


def _as_python_json(data: bytes, floaty: bool) -> bytes:
    """orjson's compact sorted bytes as Python's json writes them (ASCII input only); ``floaty``
    says the document holds a float the two spell differently somewhere."""
    return _TOKENS.sub(_python_float, data) if floaty and _floaty(data) else data


def _url_sorted(item: Any, raw: bytes) -> tuple[bytes, int]:
    """An item of a top-level list as canonical JSON needs it (before float spelling), and how many
    lists it holds that this accounts for: a result's ``source_data.url`` list, ordered by its
    strings' canonical JSON (real EEE results carry one; any other nested list is :class:`_Unsafe`)."""
    source = item.get("source_data") if type(item) is dict else None
    urls = source.get("url") if type(source) is dict else None
    if type(urls) is not list:
        return raw, 0
    if len(urls) < 2:
        return raw, 1
    if any(type(u) is not str for u in urls):
        raise _Unsafe
    ordered = sorted(urls, key=_quote)
    if ordered == urls:
        return raw, 1
    return orjson.dumps({**item, "source_data": {**source, "url": ordered}}, option=_SORTED), 1


def _canonical_parts(record: dict[str, Any], *, json_exact: bool = False) -> tuple[bytes, list[bytes] | None]:
    """The reference canonical JSON built from orjson's output where that is provably the same, and
    orjson's own sorted-keys bytes of each ``evaluation_results`` item (what score fingerprints
    hash; ``None`` when the record has no such list).

    orjson (sorted keys, compact) writes ASCII documents as Python's json does except floats below
    1e-4 or from 1e16 up; those are rewritten token by token. Each top-level value (each item of a
    top-level list) is written once and checked as written: documents with non-ASCII text, with a
    list below the top level other than a result's ``source_data.url`` (sorted here), or with a
    volatile key below the top level take the reference path. orjson writes NaN and infinities as
    ``null``, so a ``null`` also takes it unless ``json_exact`` says the record was read from JSON
    text (which holds neither).
    """
    written: list[tuple[str, bytes | list[bytes]]] = []
    pieces: list[bytes] = []
    results: list[bytes] | None = None
    nested = 0
    for key in sorted(record):
        if key in VOLATILE_KEYS:
            continue
        value = record[key]
        if type(value) is list:
            raw = [orjson.dumps(v, option=_SORTED) for v in value]
            items = []
            for v, r in zip(value, raw, strict=True):
                canonical, lists = _url_sorted(v, r)
                items.append(canonical)
                nested += lists
            if key == "evaluation_results":
                results = raw
            written.append((key, items))
            pieces += items
        else:
            text = orjson.dumps(value, option=_SORTED)
            written.append((key, text))
            pieces.append(text)
    blob = b",".join(pieces)  # separated, so a number at the end of one piece ends there
    if not blob.isascii() or b"\x7f" in blob or (not json_exact and b"null" in blob):
        raise _Unsafe  # non-ASCII text is escaped by json; orjson writes NaN and infinities as null
    if blob.count(b"[") != nested:
        raise _Unsafe  # another nested list (or a '[' in a string): its order needs the reference path
    if any(f'"{key}"'.encode() in blob for key in VOLATILE_KEYS):
        raise _Unsafe  # a volatile key below the top level is dropped there too
    floaty = _floaty(blob)
    parts = []
    for key, value in written:
        if type(value) is list:
            text = b"[" + b",".join(sorted(_as_python_json(t, True) for t in value) if floaty else sorted(value)) + b"]"
        else:
            text = _as_python_json(value, floaty)
        parts.append(_key_text(key) + text)
    return b"{" + b",".join(parts) + b"}", results


@lru_cache(maxsize=4096)
def _key_text(key: str) -> bytes:
    """``"key":`` as canonical JSON writes it (a record's top-level keys are a handful, again and again)."""
    return json.dumps(key).encode() + b":"


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


def _hash_with_parts(record: dict[str, Any], *, json_exact: bool = False) -> tuple[str, list[bytes] | None]:
    try:
        canonical, results = _canonical_parts(record, json_exact=json_exact)
        return hashlib.sha256(canonical).hexdigest(), results
    except (_Unsafe, TypeError, orjson.JSONEncodeError):
        pass
    try:
        return hashlib.sha256(_canonical(record).encode("ascii")).hexdigest(), None
    except (_Unsafe, TypeError):  # TypeError: keys of mixed types do not sort
        return _reference_hash(record), None


def normalized_hash(record: dict[str, Any], *, json_exact: bool = False) -> str:
    """sha256 of the record without volatile keys, lists order-insensitive (EEE-compatible).

    ``json_exact``: the record was read from JSON text, so it holds no NaN or infinity (a ``null``
    is a null), which lets more records take the fast path; the hash is the same either way."""
    return _hash_with_parts(record, json_exact=json_exact)[0]


def _without_samples_path(record: dict[str, Any]) -> dict[str, Any]:
    details = record.get("detailed_evaluation_results")
    if isinstance(details, dict) and "file_path" in details:
        record = {
            **record,
            "detailed_evaluation_results": {k: v for k, v in details.items() if k != "file_path"},
        }
    return record


def record_fingerprint(record: dict[str, Any], *, json_exact: bool = False) -> str:
    """The ledger fingerprint: the normalised hash minus the per-run samples file path.

    EEE's cron drops ``detailed_evaluation_results.file_path`` because it carries a fresh uuid4
    on every run; the samples ``checksum`` stays in, so changed samples still change the record.
    """
    return normalized_hash(_without_samples_path(record), json_exact=json_exact)


def fingerprint_with_results(record: dict[str, Any], *, json_exact: bool = False) -> tuple[str, list[bytes] | None]:
    """:func:`record_fingerprint`, and orjson's sorted-keys bytes of each of the record's
    ``evaluation_results`` in order when the fast path wrote them on the way (the score
    fingerprints hash exactly those bytes; ``None``: write them per result)."""
    return _hash_with_parts(_without_samples_path(record), json_exact=json_exact)


def sha256_bytes(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def sha256_file(path: Path, chunk: int = 1 << 20) -> str:
    """sha256 of a file's bytes, read in chunks."""
    digest = hashlib.sha256()
    with path.open("rb") as fh:
        while block := fh.read(chunk):
            digest.update(block)
    return digest.hexdigest()
