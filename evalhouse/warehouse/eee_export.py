"""EEE datastore trees out: the warehouse's records as ``data/<collection>/<developer>/<model>/<uuid>.json``.

An imported record goes back to the path it came from (so its
``detailed_evaluation_results.file_path`` stays true); a record parsed by evalhouse gets a path whose
UUID is derived from its fingerprint, so exporting the same warehouse twice writes the same files.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore

INVALID_COMPONENT = re.compile(r'[<>:"\\|?*\x00-\x1f]')
WINDOWS_RESERVED = {
    "CON",
    "PRN",
    "AUX",
    "NUL",
    *(f"COM{i}" for i in range(1, 10)),
    *(f"LPT{i}" for i in range(1, 10)),
}


class DatastoreError(InputError):
    """A datastore tree or path that cannot be read or written as the EEE layout requires."""


def _component(text: str, what: str) -> str:
    name = text.replace("/", "_").replace(":", "_")
    if (
        not name
        or name in {".", "..", "unknown", "data"}
        or INVALID_COMPONENT.search(name)
        or name.endswith((".", " "))
        or name.split(".")[0].upper() in WINDOWS_RESERVED
    ):
        raise DatastoreError(f"{what} {text!r} is not a portable datastore path component")
    return name


def datastore_path(collection: str, record: dict[str, Any], fingerprint: str) -> str:
    """``data/<collection>/<developer>/<model>/<uuid4>.json`` with a fingerprint-derived UUID."""
    model_id = record["model_info"]["id"]
    parts = model_id.split("/")
    if len(parts) >= 2:
        developer, model = parts[0], "/".join(parts[1:])
    else:
        developer, model = record["model_info"].get("developer") or "", parts[0]
    file_uuid = uuid.UUID(bytes=bytes.fromhex(fingerprint[:32]), version=4)
    return "/".join(
        [
            "data",
            _component(collection, "collection"),
            _component(developer, "developer"),
            _component(model, "model"),
            f"{file_uuid}.json",
        ]
    )


@dataclass
class ExportSummary:
    written: int = 0
    samples: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


def export_tree(
    wh: Warehouse,
    out_dir: Path,
    store: RawStore,
    *,
    where: str = "",
    params: list[Any] | None = None,
) -> ExportSummary:
    """Write records (and their samples files) under ``out_dir/data/...``.

    ``where`` is an optional SQL filter on ``evaluation`` (with ``params``). A record whose model id
    cannot become a portable path is reported in ``skipped``, never silently left out.
    """
    summary = ExportSummary()
    out_dir = Path(out_dir)
    sql = (
        "SELECT evaluation_id, collection, datastore_path, fingerprint, record, samples_sha256"
        f" FROM evaluation {where} ORDER BY collection, evaluation_id"
    )
    for eval_id, collection, stored_path, fingerprint, record_json, samples_sha in wh.con.execute(
        sql, params or []
    ).fetchall():
        record = json.loads(record_json)
        try:
            rel = stored_path or datastore_path(collection, record, fingerprint)
        except DatastoreError as exc:
            summary.skipped.append((eval_id, str(exc)))
            continue
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
            encoding="utf-8",
        )
        summary.written += 1
        if samples_sha:
            samples_rel = rel.removesuffix(".json") + "_samples.jsonl"
            (out_dir / samples_rel).write_bytes(store.get(samples_sha))
            summary.samples += 1
    return summary
