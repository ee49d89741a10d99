"""EEE datastore trees out: the warehouse's records as ``data/<collection>/<developer>/<model>/<uuid>.json``.

An imported record goes back to the path it came from (so its
``detailed_evaluation_results.file_path`` stays true); a record parsed by evalhouse gets a path whose
UUID is derived from its fingerprint, so exporting the same warehouse twice writes the same files.

What the datastore layout cannot hold is reported, never dropped silently: a record whose identity
names no datastore folder by EEE's own rules (a developer ``unknown``, a name no portable path
can hold) or whose every result was quarantined is listed in ``not_exported`` with the reason (a
warning: the record stays in the warehouse); a path part longer than a file system allows (255
bytes) is shortened with a hash of the whole name and listed in ``shortened``. :func:`export_folder`
writes the tree beside the target folder and renames it into place: a failure, a full disk
included, leaves the target as it was.
"""

from __future__ import annotations

import json
import re
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from evalhouse.common.naming import bounded_name
from evalhouse.common.staging import staged_folder
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

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
        reason = "an unknown developer names no datastore folder (EEE's rule)" if name.lower() == "unknown" else ""
        raise DatastoreError(
            f"{what} {text!r} is not a portable datastore path component" + (f": {reason}" if reason else "")
        )
    return name


def _flattened(text: str, what: str) -> str:
    """A slash-separated identity as one component: each part checked, joined with '_' (EEE's rule)."""
    parts = text.split("/")
    if any(not p.strip() for p in parts):
        raise DatastoreError(f"{what} {text!r} has an empty path part")
    return "_".join(_component(p, what) for p in parts)


@dataclass(frozen=True)
class DatastorePath:
    """Where a record goes: ``rel`` under the export root, and each path part that was too long
    for a file system and was shortened (``(name, part written)``)."""

    rel: str
    shortened: tuple[tuple[str, str], ...] = ()


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


def datastore_path(collection: str, record: dict[str, Any], fingerprint: str) -> DatastorePath:
    """``data/<collection>/<developer>/<model>/<uuid4>.json`` with a fingerprint-derived UUID; a part
    over :data:`~evalhouse.common.naming.NAME_MAX_BYTES` is shortened (:func:`bounded_name`)."""
    developer, model = _id_parts(record["model_info"])
    file_uuid = uuid.UUID(bytes=bytes.fromhex(fingerprint[:32]), version=4)
    parts = [_component(collection, "collection"), _component(developer, "developer"), _flattened(model, "model")]
    written = [bounded_name(part) for part in parts]
    shortened = tuple((a, b) for a, b in zip(parts, written, strict=True) if a != b)
    return DatastorePath("/".join(["data", *written, f"{file_uuid}.json"]), shortened)


@dataclass
class ExportSummary:
    """What an export wrote. ``skipped``: records the datastore layout cannot hold, with the reason
    (a warning: they stay in the warehouse); ``shortened``: ``(evaluation id, name, part written)``
    for each path part shortened to fit a file system."""

    written: int = 0
    samples: int = 0
    results_omitted: int = 0
    skipped: list[tuple[str, str]] = field(default_factory=list)
    shortened: list[tuple[str, str, str]] = field(default_factory=list)
    failed: list[tuple[str, str]] = field(default_factory=list)  # records that could not be written

    def as_dict(self) -> dict[str, Any]:
        return {
            "written": self.written,
            "samples": self.samples,
            "results_omitted": self.results_omitted,
            "not_exported": [{"evaluation_id": e, "reason": r} for e, r in self.skipped],
            "shortened": [{"evaluation_id": e, "name": n, "written_as": w} for e, n, w in self.shortened],
            "failed": [{"evaluation_id": e, "reason": r} for e, r in self.failed],
        }


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
    warehouse quarantined are left out (their count is noted in the record); a record the source
    gave with no results goes out as it is (EEE's schema allows it). ``where`` is an optional SQL
    filter on ``evaluation e`` (with ``params``). A record that cannot be written validly is
    reported in ``skipped`` with the reason, never silently left out.
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
        if not record["evaluation_results"] and omitted:
            summary.skipped.append((eval_id, f"all {omitted} of its results were quarantined; nothing valid to export"))
            continue
        try:
            where = datastore_path(collection, record, fingerprint)
        except DatastoreError as exc:
            summary.skipped.append((eval_id, str(exc)))
            continue
        rel = where.rel
        summary.shortened.extend((eval_id, name, part) for name, part in where.shortened)
        if stored_path and AGGREGATE_NAME.match(stored_path.rsplit("/", 1)[-1]):
            rel = rel.rsplit("/", 1)[0] + "/" + stored_path.rsplit("/", 1)[-1]  # the file name it came with
        try:
            text = json.dumps(record, indent=2, ensure_ascii=False, allow_nan=False) + "\n"
        except ValueError as exc:  # NaN or infinity somewhere in the record: not JSON
            summary.failed.append((eval_id, f"the record is not valid JSON ({exc})"))
            continue
        target = out_dir / rel
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(text, encoding="utf-8")
        summary.written += 1
        summary.results_omitted += omitted
        if samples_sha:
            samples_rel = rel.removesuffix(".json") + "_samples.jsonl"
            (out_dir / samples_rel).write_bytes(store.get(samples_sha))
            summary.samples += 1
    return summary


#: The file that marks a folder as an earlier export (outside ``data/``; not a ``.json``, so no
#: validator glob over the tree takes it for a record).
EXPORT_MARKER = ".evalhouse-export"


def export_folder(wh: Warehouse, out_dir: Path, store: RawStore) -> ExportSummary:
    """:func:`export_tree` into ``out_dir`` as a whole: written beside it and renamed into place.

    ``out_dir`` must be new, an empty folder or an earlier export (it holds :data:`EXPORT_MARKER`,
    and is replaced); anything else is refused before a file is written. A failure, a full disk
    included, leaves ``out_dir`` as it was; what a killed export left is swept by the next one.
    """
    out_dir = Path(out_dir).resolve()
    if out_dir.exists() and not out_dir.is_dir():
        raise DatastoreError(f"{out_dir} exists and is not a folder")
    if out_dir.is_dir() and any(out_dir.iterdir()) and not (out_dir / EXPORT_MARKER).is_file():
        raise DatastoreError(
            f"{out_dir} is not empty and is not an earlier export; choose a new or empty folder "
            "(an export replaces its folder whole, so it never writes into other files)"
        )
    with staged_folder(out_dir, replace=True) as staging:
        summary = export_tree(wh, staging, store)
        marker = {"written": summary.written, "samples": summary.samples, "by": "evalhouse export-eee"}
        (staging / EXPORT_MARKER).write_text(json.dumps(marker) + "\n", encoding="utf-8")
    return summary
