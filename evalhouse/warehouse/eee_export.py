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
AGGREGATE_NAME = re.compile(
    r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}\.json$"
)


def _portable(name: str) -> bool:
    return bool(name) and not (
        name.lower() in {".", "..", "unknown", "data"}
        or INVALID_COMPONENT.search(name)
        or name.endswith((".", " "))
        or name.split(".", maxsplit=1)[0].upper() in WINDOWS_RESERVED
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
    results_omitted: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)


def _loaded_results(record: dict[str, Any], loaded: list[int] | None) -> tuple[dict[str, Any], int]:
    """The record with only the results the warehouse loaded (a quarantined placeholder is not a
    result), and how many were left out."""
    results = record.get("evaluation_results") or []
    keep = set(loaded or [])
    if len(keep) == len(results):
        return record, 0
    kept = [r for i, r in enumerate(results) if i in keep]
    meta = record.get("source_metadata") or {}
    details = {**(meta.get("additional_details") or {}), OMITTED: str(len(results) - len(kept))}
    return {**record, "evaluation_results": kept, "source_metadata": {**meta, "additional_details": details}}, (
        len(results) - len(kept)
    )


OMITTED = "evalhouse.results_quarantined"


def export_tree(
    wh: Warehouse,
    out_dir: Path,
    store: RawStore,
    *,
    where: str = "",
    params: list[Any] | None = None,
) -> ExportSummary:
    """Write records (and their samples files) under ``out_dir/data/...``.

    Each record goes where its identity addresses it (``data/<collection>/<developer>/<model>/``, as
    EEE's publisher files it), keeping the file name an imported record came with; results the
    warehouse quarantined are left out (their count is noted in the record). ``where`` is an
    optional SQL filter on ``evaluation e`` (with ``params``). A record that cannot be written
    validly is reported in ``skipped`` with the reason, never silently left out.
    """
    summary = ExportSummary()
    out_dir = Path(out_dir)
    sql = (
        "SELECT e.evaluation_id, e.collection, e.datastore_path, e.fingerprint, e.record, e.samples_sha256,"
        " bm.developer_id, (SELECT list(s.result_index ORDER BY s.result_index) FROM score s"
        " WHERE s.evaluation_id = e.evaluation_id) AS loaded"
        " FROM evaluation e LEFT JOIN model_config mc USING (config_id)"
        f" LEFT JOIN base_model bm USING (base_model_id) {where} ORDER BY e.collection, e.evaluation_id"
    )
    for eval_id, collection, stored_path, fingerprint, record_json, samples_sha, developer, loaded in wh.con.execute(
        sql, params or []
    ).fetchall():
        record, omitted = _loaded_results(addressable(json.loads(record_json), developer), loaded)
        if not record["evaluation_results"]:
            summary.skipped.append((eval_id, f"every result was quarantined ({omitted}); nothing valid to export"))
            continue
        try:
            rel = datastore_path(collection, record, fingerprint)
        except DatastoreError as exc:
            summary.skipped.append((eval_id, str(exc)))
            continue
        if stored_path and AGGREGATE_NAME.match(stored_path.rsplit("/", 1)[-1]):
            rel = rel.rsplit("/", 1)[0] + "/" + stored_path.rsplit("/", 1)[-1]  # the file name it came with
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(
            json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n",
            encoding="utf-8",
        )
        summary.written += 1
        summary.results_omitted += omitted
        if samples_sha:
            samples_rel = rel.removesuffix(".json") + "_samples.jsonl"
            (out_dir / samples_rel).write_bytes(store.get(samples_sha))
            summary.samples += 1
    return summary
