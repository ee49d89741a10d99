"""Record fingerprints: EEE's normalised hash, so evalhouse and the EEE tools agree on "same".

The hash ignores ``evaluation_id`` and ``retrieved_timestamp`` at any depth and the order of every
list, and is taken over canonical JSON (sorted keys, compact separators, ASCII). A re-scrape that
only changed the fetch time therefore fingerprints identically, which is what lets a nightly
refresh of an unchanged leaderboard add nothing.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

VOLATILE_KEYS = frozenset({"evaluation_id", "retrieved_timestamp"})


def canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=True)


def _normalise(value: Any) -> Any:
    if isinstance(value, dict):
        return {k: _normalise(v) for k, v in value.items() if k not in VOLATILE_KEYS}
    if isinstance(value, list):
        return sorted((_normalise(v) for v in value), key=canonical_json)
    return value


def normalized_hash(record: dict[str, Any]) -> str:
    """sha256 of the record without volatile keys, lists order-insensitive (EEE-compatible)."""
    return hashlib.sha256(canonical_json(_normalise(record)).encode("utf-8")).hexdigest()


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
