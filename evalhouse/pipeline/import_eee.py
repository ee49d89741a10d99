"""EEE datastore trees in: ``data/<collection>/<developer>/<model>/<uuid>.json`` (+ samples).

Import keeps every file's bytes in the raw store before parsing it, loads each collection as one
run in one transaction, and quarantines what it cannot read (not JSON, empty, another schema
version, NaN, a bad samples line) with the path, the sha256 and the error; the other files still
load. The way back out is :mod:`evalhouse.warehouse.eee_export`.
"""

from __future__ import annotations

import os
import re
import stat
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any

from pydantic import ValidationError

from evalhouse.common import progress
from evalhouse.curation.registry import Registry, load_registry
from evalhouse.pipeline.ledger import (
    AfterLoad,
    LoadPlan,
    RunContext,
    RunResult,
    SourceRow,
    last_loading_run,
    loaded_payloads,
    record_run,
    record_view_decisions,
    run_load,
)
from evalhouse.schema.eee import InstanceRecord
from evalhouse.schema.eee_json import strict_json
from evalhouse.schema.fingerprint import sha256_bytes, sha256_file
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.eee_export import DatastoreError
from evalhouse.warehouse.load import summarise_validation_error
from evalhouse.warehouse.raw_store import RawEntry, RawStore

UUID_RE = r"[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-4[0-9a-fA-F]{3}-[89abAB][0-9a-fA-F]{3}-[0-9a-fA-F]{12}"
AGGREGATE_RE = re.compile(rf"^({UUID_RE})\.json$")


def collection_source_key(collection: str) -> str:
    slug = re.sub(r"[^a-z0-9]+", "-", collection.lower()).strip("-") or "unnamed"
    return f"eee-{slug}"


@dataclass
class ImportSummary:
    runs: list[RunResult] = field(default_factory=list)
    outside_layout: list[str] = field(default_factory=list)
    unchanged: dict[str, int] = field(default_factory=dict)  # run id -> files skipped as already loaded

    @property
    def quarantined(self) -> int:
        return sum(r.report.quarantined for r in self.runs)

    @property
    def failed(self) -> int:
        return sum(1 for r in self.runs if r.status == "failed")

    def as_dict(self) -> dict[str, Any]:
        return {
            "collections": len(self.runs),
            "records_loaded": sum(r.report.records_loaded for r in self.runs),
            "duplicates": sum(r.report.records_duplicate for r in self.runs),
            "quarantined": self.quarantined,
            "scores_loaded": sum(r.report.scores_loaded for r in self.runs),
            "files_unchanged": sum(self.unchanged.values()),
            "ignored_outside_layout": self.outside_layout,
            "runs": [{**r.as_dict(), "unchanged": self.unchanged.get(r.run_id, 0)} for r in self.runs],
        }


def _data_root(root: Path) -> Path:
    """Accept the datastore root, its ``data/`` folder, or a folder of collections."""
    if (root / "data").is_dir():
        return root / "data"
    return root


def _aggregate_files(data_root: Path) -> tuple[dict[str, list[Path]], list[str]]:
    """Records at ``<collection>/<developer>/<model>/<file>.json``, and the JSON files elsewhere."""
    by_collection: dict[str, list[Path]] = defaultdict(list)
    outside: list[str] = []
    for path in sorted(data_root.rglob("*.json")):
        rel = path.relative_to(data_root)
        if len(rel.parts) != 4:
            outside.append(rel.as_posix())
            continue
        by_collection[rel.parts[0]].append(path)
    return dict(sorted(by_collection.items())), outside


class _TreeReader:
    """Reads one collection's files: each file's bytes are stored before it is parsed.

    A file whose bytes this source already loaded (``known``) is skipped before it is stored or
    parsed, so re-importing an unchanged tree adds no fetch, quarantine, evaluation or score row.
    """

    def __init__(
        self, data_root: Path, store: RawStore, source_key: str, known: frozenset[str], details: dict[str, Any]
    ) -> None:
        self.details = details  # the run's details: files_unchanged is kept current while reading
        self.data_root = data_root
        self.real_root = data_root.resolve()
        self.store = store
        self.source_key = source_key
        self.known = known
        self.entries: list[RawEntry] = []
        self.skipped = 0

    def _repo_path(self, path: Path) -> str:
        return f"data/{path.relative_to(self.data_root).as_posix()}"

    def refusal(self, path: Path) -> str | None:
        """Why ``path`` is not read at all, or None for a regular file inside the import root.

        Checked before the file is opened: a link resolving outside the root is refused (its
        bytes never reach the raw store or a quarantine payload), and a FIFO, a directory named
        ``*.json``, a device or a dangling link is not a record file (opening a FIFO would block
        the import, and with it the writer lock, forever).
        """
        linked = path.is_symlink()
        try:
            real = path.resolve(strict=True)
        except (OSError, RuntimeError) as exc:  # missing target, or a link loop
            what = "a dangling symbolic link" if linked else "a file that cannot be resolved"
            return f"refused: {what} ({type(exc).__name__}); nothing read"
        if not real.is_relative_to(self.real_root):
            return f"refused: resolves to {real}, outside the import root {self.real_root}; its bytes are not read"
        try:
            mode = os.stat(real).st_mode
        except OSError as exc:
            return f"refused: cannot stat the file ({exc.strerror}); nothing read"
        if not stat.S_ISREG(mode):
            kind = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}.get(
                stat.S_IFMT(mode), "a device or special file"
            )
            return f"refused: {kind}, not a regular file; nothing read"
        return None

    def _read(self, path: Path) -> tuple[bytes | None, ParseFailure | None]:
        """The bytes of a file of the tree, or the quarantine row saying why it is not read."""
        refused = self.refusal(path)
        if refused is not None:
            return None, ParseFailure(self._repo_path(path), refused)
        try:
            return path.read_bytes(), None
        except OSError as exc:  # vanished or unreadable between the check and the read
            return None, ParseFailure(self._repo_path(path), f"cannot be read: {exc.strerror or exc}")

    def _keep(self, path: Path, content_type: str, data: bytes, sha256: str | None = None) -> tuple[str, RawEntry]:
        repo_path = self._repo_path(path)
        entry = self.store.put(
            data,
            source_key=self.source_key,
            url=path.resolve().as_uri(),
            content_type=content_type,
            label=repo_path,
            sha256=sha256,
        )
        self.entries.append(entry)
        return repo_path, entry

    def items(self, paths: list[Path]) -> Iterator[ParseItem]:
        """Each file's record (or the reason it has none), read once, stored before it is parsed."""
        for path in paths:
            data, refused = self._read(path)
            if data is None:
                yield refused
                continue
            digest = sha256_bytes(data)
            if digest in self.known and not self._samples_changed(path):
                self.skipped += 1
                self.details["files_unchanged"] = self.skipped
                continue
            repo_path, entry = self._keep(path, "application/json", data, digest)
            fail = partial(ParseFailure, repo_path, raw_sha256=entry.sha256)
            try:
                record = strict_json(data)
            except (ValueError, UnicodeDecodeError) as exc:
                yield fail(f"not readable as JSON: {exc}", data[:2000].decode("utf-8", "replace"))
                continue
            failures: list[ParseItem] = []
            samples, samples_sha = self._samples(path, record, failures)
            yield from failures
            yield ParsedRecord(
                record=record,
                locator=repo_path,
                samples=samples,
                samples_sha256=samples_sha,
                datastore_path=repo_path if AGGREGATE_RE.match(path.name) else None,
                raw_sha256=entry.sha256,
            )

    def _samples_changed(self, path: Path) -> bool:
        samples = path.with_name(path.stem + "_samples.jsonl")
        if not (samples.exists() or samples.is_symlink()):
            return False
        return self.refusal(samples) is not None or sha256_file(samples) not in self.known

    def _samples(self, path: Path, record: Any, items: list[ParseItem]) -> tuple[list[dict] | None, str | None]:
        """Validate the companion ``_samples.jsonl``; bad lines become failures in ``items``."""
        samples_path = path.with_name(path.stem + "_samples.jsonl")
        if not (samples_path.exists() or samples_path.is_symlink()):
            return None, None
        data, refused = self._read(samples_path)
        if data is None:  # the aggregate still loads; its samples file is refused with the reason
            items.append(refused)
            return None, None
        rel, entry = self._keep(samples_path, "application/x-ndjson", data)
        rows = []
        for n, line in enumerate(data.decode("utf-8", "replace").splitlines(), start=1):
            if not line.strip():
                continue
            fail = partial(ParseFailure, f"{rel}:line {n}", payload=line[:20000], raw_sha256=entry.sha256)
            try:
                row = InstanceRecord.model_validate(strict_json(line.encode()))
            except ValidationError as exc:
                items.append(fail(f"invalid instance record: {summarise_validation_error(exc)}"))
                continue
            except ValueError as exc:
                items.append(fail(f"invalid instance record: {exc}"))
                continue
            if isinstance(record, dict) and row.evaluation_id != record.get("evaluation_id"):
                items.append(fail("instance evaluation_id does not match its aggregate"))
                continue
            rows.append(row.to_json_dict())
        return rows, entry.sha256


def import_tree(
    wh: Warehouse,
    root: Path,
    store: RawStore,
    *,
    after_load: AfterLoad | None = None,
    registry: Registry | None = None,
) -> ImportSummary:
    """Import every collection under ``root``; one run (one transaction) per collection."""
    registry = registry or load_registry()
    root = Path(root)
    if not root.is_dir():
        raise DatastoreError(f"{root} is not a directory")
    store.recover()  # a writer killed mid-put left temporary files or a torn manifest line
    data_root = _data_root(root)
    by_collection, outside = _aggregate_files(data_root)
    if not by_collection:
        raise DatastoreError(
            f"no records under {data_root} in the datastore layout <collection>/<developer>/<model>/<uuid>.json"
        )
    summary = ImportSummary(outside_layout=outside)
    files = sum(len(p) for p in by_collection.values())
    steps = progress.each(
        by_collection.items(), "import-eee: files", total=files, size=lambda c: len(c[1]), note=lambda c: c[0]
    )
    for collection, paths in steps:
        source_key = collection_source_key(collection)
        last = last_loading_run(wh.con, source_key)
        stale = last is not None and last.registry_version != registry.version
        known = frozenset() if stale else loaded_payloads(wh.con, source_key)
        details: dict[str, Any] = {"root": str(root), "collection": collection, "files_unchanged": 0}
        reader = _TreeReader(data_root, store, source_key, known, details)
        stream = reader.items(paths)
        # Files this collection already loaded are skipped unread with the database closed (readers
        # get in between collections); the changed files stream into the load transaction.
        with wh.released(f"reading collection {collection} (database closed)"):
            first = next(stream, None)  # reads up to the first changed file
        source = SourceRow(source_key, f"EEE datastore collection {collection}", "eee_datastore", None, None, None)
        ctx = RunContext(
            source=source,
            trigger="import-eee",
            registry=registry,
            collection=collection,
            allow_provisional=True,
            identity_from="id",
            after_load=after_load,
            details=details,
            view_decisions=False,  # recorded once, after the last collection
        )
        if first is None and reader.skipped:
            result = record_run(wh, ctx, "unchanged", [])
        else:
            items = stream if first is None else chain([first], stream)
            plan = LoadPlan(
                entries=reader.entries,
                items=lambda items=items: items,
                replace_source=stale,
                status="recanonicalised" if stale else None,
            )
            result = run_load(wh, ctx, plan)
        summary.runs.append(result)
        summary.unchanged[result.run_id] = reader.skipped
    loaded = [r for r in summary.runs if r.status not in ("failed", "unchanged")]
    if loaded:
        decided = record_view_decisions(wh, loaded[-1].run_id)
        loaded[-1].decisions = {**loaded[-1].decisions, **decided}
    return summary
