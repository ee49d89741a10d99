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


SOURCE_MODEL_ID = "evalhouse.source_model_id"


def _portable(name: str) -> bool:
    return bool(name) and not (
        name.lower() in {".", "..", "unknown", "data"}
        or INVALID_COMPONENT.search(name)
        or name.endswith((".", " "))
        or name.split(".")[0].upper() in WINDOWS_RESERVED
    )


def _component(text: str, what: str) -> str:
    """One datastore path component, the way EEE's publisher makes it (stripped, ':' -> '_')."""
    name = text.strip().replace(":", "_")
    if not _portable(name):
        raise DatastoreError(f"{what} {text!r} is not a portable datastore path component")
    return name


def _flattened(text: str, what: str) -> str:
    """A slash-separated identity as one component: each part checked, joined with '_' (EEE's rule)."""
    parts = text.split("/")
    if any(not p.strip() for p in parts):
        raise DatastoreError(f"{what} {text!r} has an empty path part")
    return "_".join(_component(p, what) for p in parts)


def _id_parts(model_info: dict[str, Any]) -> tuple[str, str]:
    """``(developer, model)`` as EEE's datastore addresses a model: the id's prefix, else ``developer``."""
    parts = str(model_info.get("id") or "").strip().split("/")
    if len(parts) >= 2:
        return parts[0], "/".join(parts[1:])
    return str(model_info.get("developer") or ""), parts[0]


def addressable(record: dict[str, Any], resolved_developer: str | None) -> dict[str, Any]:
    """The record with a ``model_info.id`` that names a datastore directory.

    A source that states no developer ("unknown/…") or writes characters no portable path can hold
    ("*", "|") gets the developer evalhouse resolved for the model and those characters replaced by
    "_"; the source's own id is kept in ``model_info.additional_details["evalhouse.source_model_id"]``.
    A record that is already addressable is returned unchanged.
    """
    info = record["model_info"]
    developer, model = _id_parts(info)
    fixed_model = "/".join(INVALID_COMPONENT.sub("_", p).strip().rstrip(". ") or "_" for p in model.split("/"))
    fixed_developer = developer.strip() if _portable(developer.strip()) else (resolved_developer or "")
    if (fixed_developer, fixed_model) == (developer, model) and "/" in str(info.get("id") or ""):
        return record
    if not _portable(fixed_developer):
        return record  # nothing better is known: the export reports it
    details = {**(info.get("additional_details") or {}), SOURCE_MODEL_ID: str(info.get("id"))}
    return {**record, "model_info": {**info, "id": f"{fixed_developer}/{fixed_model}", "additional_details": details}}


def datastore_path(collection: str, record: dict[str, Any], fingerprint: str) -> str:
    """``data/<collection>/<developer>/<model>/<uuid4>.json`` with a fingerprint-derived UUID."""
    developer, model = _id_parts(record["model_info"])
    file_uuid = uuid.UUID(bytes=bytes.fromhex(fingerprint[:32]), version=4)
    return "/".join(
        [
            "data",
            _component(collection, "collection"),
            _component(developer, "developer"),
            _flattened(model, "model"),
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
        "SELECT e.evaluation_id, e.collection, e.datastore_path, e.fingerprint, e.record, e.samples_sha256,"
        " bm.developer_id FROM evaluation e LEFT JOIN model_config mc USING (config_id)"
        f" LEFT JOIN base_model bm USING (base_model_id) {where} ORDER BY e.collection, e.evaluation_id"
    )
    for eval_id, collection, stored_path, fingerprint, record_json, samples_sha, developer in wh.con.execute(
        sql, params or []
    ).fetchall():
        record = json.loads(record_json) if stored_path else addressable(json.loads(record_json), developer)
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
