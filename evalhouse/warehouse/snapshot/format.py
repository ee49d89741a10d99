"""The snapshot format: the manifest's name and version, its one serialisation, and its hashes.

A snapshot is a folder with ``manifest.json``, which lists every other file with its sha256. The
snapshot id is the sha256 of the manifest's content fields (every field but the id, the seal, the
label and the clock: :func:`content_id`) and the seal the sha256 of every field but itself
(:func:`seal`), both over one canonical JSON; the manifest is written in one form
(:func:`manifest_bytes`), so any hand edit is visible. Creating and verifying a snapshot both
hash by these.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

FORMAT = "evalhouse-snapshot"
FORMAT_VERSION = 3
# 1: every view frozen and the records as a datastore tree only; 2: ``score`` a table of its own
READS_FORMATS = (1, 2, 3)
MANIFEST = "manifest.json"
# Manifest fields that are not content: the id itself, its seal, the label and the clock.
NOT_CONTENT = ("snapshot_id", "seal_sha256", "name", "created_at")


def canonical_json(value: Any) -> bytes:
    """The bytes the id is computed over: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """The one serialisation evalhouse writes (so any hand edit, even of spacing, is visible)."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def content_id(manifest: dict[str, Any]) -> str:
    """sha256 of the content fields: equal for two snapshots of the same warehouse state."""
    content = {k: v for k, v in manifest.items() if k not in NOT_CONTENT}
    return hashlib.sha256(canonical_json(content)).hexdigest()


def seal(manifest: dict[str, Any]) -> str:
    """sha256 of every field but the seal, so an edit to the label or the clock is caught too."""
    return hashlib.sha256(canonical_json({k: v for k, v in manifest.items() if k != "seal_sha256"})).hexdigest()


def file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree_files(root: Path) -> list[str]:
    """Every regular file under ``root`` as a sorted relative POSIX path, the manifest excluded."""
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if rel != MANIFEST:
                found.append(rel)
    return sorted(found)
