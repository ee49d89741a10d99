"""Bundles: several files of one harness run stored and parsed as one payload.

A HELM run is a directory of five JSON files and an lm-evaluation-harness run is a results file
plus one samples file per task; a parser needs them together. The pipeline packs them into one
deterministic zip (sorted names, fixed timestamps, a manifest member), stores that in the raw
store like any fetched payload, and hands it to the parser. The bytes of every file are kept
exactly, the bundle's sha256 is stable, and ``evalhouse reparse`` re-parses it unchanged.
"""

from __future__ import annotations

import hashlib
import io
import json
import zipfile
from collections.abc import Mapping

from evalhouse.ingest.budgets import read_zip
from evalhouse.ingest.source import ParseError

MANIFEST = ".evalhouse-bundle.json"
CONTENT_TYPE = "application/zip"
_EPOCH = (1980, 1, 1, 0, 0, 0)


def pack(files: Mapping[str, bytes], *, target: str | None = None) -> bytes:
    """One zip of ``files`` (name -> bytes) whose bytes depend only on the names and contents."""
    manifest = {
        "target": target,
        "files": {name: hashlib.sha256(data).hexdigest() for name, data in sorted(files.items())},
    }
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", compression=zipfile.ZIP_DEFLATED) as zf:
        for name, data in [(MANIFEST, json.dumps(manifest, sort_keys=True).encode()), *sorted(files.items())]:
            info = zipfile.ZipInfo(name, date_time=_EPOCH)
            info.compress_type = zipfile.ZIP_DEFLATED
            info.external_attr = 0o644 << 16
            zf.writestr(info, data)
    return buf.getvalue()


def is_zip(body: bytes) -> bool:
    return body[:4] == b"PK\x03\x04"


def unpack(body: bytes) -> dict[str, bytes]:
    """Every member of a zip (a bundle, or a harness's own zip such as Inspect's ``.eval``),
    inflated within the archive budgets (:mod:`evalhouse.ingest.budgets`: a zip bomb is refused
    by its declared sizes before anything is inflated).

    A truncated, corrupt, encrypted or over-budget zip is a :class:`ParseError` naming why.
    """
    return dict(read_zip(body))


def members(body: bytes) -> tuple[dict[str, bytes], str | None]:
    """The files of a payload and the target file the user named (None for a directory).

    A payload that is not a zip is one file: ``({"": body}, None)``.
    """
    if not is_zip(body):
        return {"": body}, None
    files = unpack(body)
    manifest = files.pop(MANIFEST, None)
    try:
        target = json.loads(manifest).get("target") if manifest else None
    except (ValueError, AttributeError, RecursionError) as exc:
        raise ParseError(f"the bundle's {MANIFEST} is not a JSON object: {exc}") from exc
    return files, target
