"""EEE datastore trees in: ``data/<collection>/<developer>/<model>/<uuid>.json`` (+ samples).

Import keeps every file's bytes in the raw store before parsing it, loads each collection as one
run in one transaction, and quarantines what it cannot read (not JSON, empty, another schema
version, NaN, a bad samples line) with the path, the sha256 and the error; the other files still
load. The way back out is :mod:`evalhouse.warehouse.eee_export`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import partial
from itertools import chain
from pathlib import Path
from typing import Any, Literal

from pydantic import ValidationError

from evalhouse.common import progress
from evalhouse.common.collector import collector_paused
from evalhouse.curation.plausibility import judge_units
from evalhouse.curation.registry import Registry, load_registry
from evalhouse.errors import InputError
from evalhouse.ingest.budgets import BudgetExceeded, Budgets, LongLine, check_samples_size, lines
from evalhouse.pipeline.tree_files import Refused, TreeFile, TreeListing, file_uri, list_tree, read_file
from evalhouse.schema.eee_json import read_json, strict_json
from evalhouse.schema.fingerprint import sha256_bytes
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.eee_export import DatastoreError
from evalhouse.warehouse.load.ledger import (
    AfterLoad,
    LoadPlan,
    RunContext,
    RunResult,
    SourceRow,
    decide_views_after,
    last_loading_run,
    loaded_payloads,
    record_run,
    run_load,
)
from evalhouse.warehouse.load.records import DEFAULT_BATCH_SIZE, summarise_validation_error
from evalhouse.warehouse.memory_budget import load_budget
from evalhouse.warehouse.raw.store import RawEntry, RawStore

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


def _aggregate_files(listing: TreeListing) -> tuple[dict[str, list[TreeFile]], list[str]]:
    """Records at ``<collection>/<developer>/<model>/<file>.json``, and the JSON files elsewhere."""
    by_collection: dict[str, list[TreeFile]] = defaultdict(list)
    outside: list[str] = []
    for file in listing.json_files:
        parts = file.rel.split("/")
        if len(parts) != 4:
            outside.append(file.rel)
            continue
        by_collection[parts[0]].append(file)
    return dict(sorted(by_collection.items())), outside + listing.unlisted


class _TreeReader:
    """Reads one collection's files: each file's bytes are stored before it is parsed.

    A file whose bytes this source already loaded (``known``) is skipped before it is stored or
    parsed, so re-importing an unchanged tree adds no fetch, quarantine, evaluation or score row.
    How files are listed and read safely (links out of the root, FIFOs, files swapped while
    reading): :mod:`evalhouse.pipeline.tree_files`.
    """

    def __init__(
        self,
        listing: TreeListing,
        store: RawStore,
        source_key: str,
        known: frozenset[str],
        details: dict[str, Any],
    ) -> None:
        self.details = details  # the run's details: files_unchanged is kept current while reading
        self.listing = listing
        self.real_root = listing.root.resolve()
        self.root_uri = self.real_root.as_uri().rstrip("/")
        self.store = store
        self.source_key = source_key
        self.known = known
        self.entries: list[RawEntry] = []
        self.skipped = 0

    def _read(self, file: TreeFile) -> tuple[bytes | None, ParseFailure | None]:
        """The bytes of a file of the tree, or the quarantine row saying why it is not read."""
        try:
            return read_file(file, self.real_root), None
        except Refused as exc:
            return None, ParseFailure(f"data/{file.rel}", str(exc))

    def _keep(self, file: TreeFile, content_type: str, data: bytes, sha256: str | None = None) -> tuple[str, RawEntry]:
        repo_path = f"data/{file.rel}"
        entry = self.store.put(
            data,
            source_key=self.source_key,
            url=file_uri(file, self.real_root, self.root_uri),
            content_type=content_type,
            label=repo_path,
            sha256=sha256,
        )
        self.entries.append(entry)
        return repo_path, entry

    def items(self, files: list[TreeFile]) -> Iterator[ParseItem]:
        """Each file's record (or the reason it has none), read once, stored before it is parsed."""
        for file in files:
            data, refused = self._read(file)
            if data is None:
                yield refused
                continue
            digest = sha256_bytes(data)
            samples_file = self.listing.companion(file)
            if digest in self.known and not self._samples_changed(samples_file):
                self.skipped += 1
                self.details["files_unchanged"] = self.skipped
                continue
            repo_path, entry = self._keep(file, "application/json", data, digest)
            fail = partial(ParseFailure, repo_path, raw_sha256=entry.sha256)
            try:
                record, written = read_json(data)
            except (ValueError, UnicodeDecodeError) as exc:
                yield fail(f"not readable as JSON: {exc}", data[:2000].decode("utf-8", "replace"))
                continue
            failures: list[ParseItem] = []
            samples_sha = self._samples(samples_file, record, failures)
            yield from failures
            parsed = ParsedRecord(
                record=record,
                locator=repo_path,
                samples_sha256=samples_sha,
                datastore_path=repo_path if AGGREGATE_RE.match(file.path.name) else None,
                raw_sha256=entry.sha256,
                json_text=True,
                record_json=written,
            )
            yield from judge_units([parsed])  # a file is one payload: its units judged against its values

    def again(self, files: list[TreeFile]) -> Iterator[ParseItem]:
        """:meth:`items` from the start, forgetting what the last pass kept and skipped."""
        self.entries.clear()
        self.skipped = 0
        self.details["files_unchanged"] = 0
        return self.items(files)

    def settle(self) -> None:
        """Every payload read so far durable in the store (its pack synced and indexed); only the
        entries whose bytes were stored stay, and a write error is raised."""
        try:
            self.store.settle()
        finally:
            if self.store.failed:
                self.entries[:] = [e for e in self.entries if e.sha256 not in self.store.failed]

    def _samples_changed(self, samples: TreeFile | None) -> bool:
        if samples is None:
            return False
        try:
            data = read_file(samples, self.real_root, size_check=check_samples_size)
        except Refused:  # unreadable, or over its budget: read (and refused) with the record
            return True
        return sha256_bytes(data) not in self.known

    def _samples(self, samples_file: TreeFile | None, record: Any, items: list[ParseItem]) -> str | None:
        """Validate the companion ``_samples.jsonl`` line by line, within the samples budgets
        (:mod:`evalhouse.ingest.budgets`); bad lines, and a file over a budget, become failures
        in ``items``. The lines are checked, not kept: the aggregate record is what loads. Returns
        the samples file's sha256 when it was read."""
        if samples_file is None:
            return None
        budgets = Budgets.from_env()
        try:
            data = read_file(samples_file, self.real_root, size_check=partial(check_samples_size, budgets=budgets))
        except Refused as exc:  # the aggregate still loads; its samples file is refused with the reason
            items.append(ParseFailure(f"data/{samples_file.rel}", str(exc)))
            return None
        rel, entry = self._keep(samples_file, "application/x-ndjson", data)
        # the instance model is built (~14 ms) by the first import that has samples, not by every one
        from evalhouse.schema.eee import InstanceRecord  # noqa: PLC0415

        try:
            for n, line in lines(data, rel, budgets):
                fail = partial(ParseFailure, f"{rel}:line {n}", raw_sha256=entry.sha256)
                if isinstance(line, LongLine):
                    items.append(fail(line.reason, payload=line.head))
                    continue
                payload = line[:20000].decode("utf-8", "replace")
                try:
                    row = InstanceRecord.model_validate(strict_json(line))
                except ValidationError as exc:
                    items.append(fail(f"invalid instance record: {summarise_validation_error(exc)}", payload=payload))
                    continue
                except ValueError as exc:
                    items.append(fail(f"invalid instance record: {exc}", payload=payload))
                    continue
                if isinstance(record, dict) and row.evaluation_id != record.get("evaluation_id"):
                    items.append(fail("instance evaluation_id does not match its aggregate", payload=payload))
        except BudgetExceeded as exc:
            items.append(ParseFailure(rel, str(exc), raw_sha256=entry.sha256))
        return entry.sha256


@dataclass(frozen=True)
class _Import:
    """What every collection of one import shares."""

    wh: Warehouse
    root: Path
    listing: TreeListing
    store: RawStore
    registry: Registry
    after_load: AfterLoad | None
    batch_size: int
    memory_budget: int | None


def import_tree(  # noqa: PLR0913 - the keyword-only arguments are the import's options
    wh: Warehouse,
    root: Path,
    store: RawStore,
    *,
    after_load: AfterLoad | None = None,
    registry: Registry | None = None,
    batch_size: int = DEFAULT_BATCH_SIZE,
    memory_budget: int | Literal["env"] | None = "env",
) -> ImportSummary:
    """Import every collection under ``root``; one run (one transaction) per collection, loaded in
    batches of ``batch_size`` records, DuckDB spilling past ``memory_budget`` bytes beyond what its
    indexes hold (``None``: no budget; ``"env"``: ``$EVALHOUSE_LOAD_BUDGET`` or 256 MB; see
    :func:`~evalhouse.warehouse.load.ledger.run_load`)."""
    if batch_size < 1:
        raise InputError(f"the batch size must be a positive number of records, not {batch_size}")
    budget = load_budget() if memory_budget == "env" else memory_budget  # bad input before any work
    registry = registry or load_registry()
    root = Path(root)
    if not root.is_dir():
        raise DatastoreError(f"{root} is not a directory")
    store.recover()  # a writer killed mid-put left temporary files, a torn manifest line or an unsealed pack
    data_root = _data_root(root)
    listing = list_tree(data_root)
    by_collection, outside = _aggregate_files(listing)
    if not by_collection:
        raise DatastoreError(
            f"no records under {data_root} in the datastore layout <collection>/<developer>/<model>/<uuid>.json"
        )
    summary = ImportSummary(outside_layout=outside)
    files = sum(len(p) for p in by_collection.values())
    steps = progress.each(
        by_collection.items(), "import-eee: files", total=files, size=lambda c: len(c[1]), note=lambda c: c[0]
    )
    job = _Import(wh, root, listing, store, registry, after_load, batch_size, budget)
    # what the warehouse knows of each collection, read while it is open (a load changes only its own)
    known = {c: _known_of(wh, registry, c) for c in by_collection}
    # each collection's new payloads go to one pack, sealed when its run settles; records and rows
    # are trees, so the cycle collector waits for the end (evalhouse/common/collector.py)
    with store.packing(), collector_paused():
        while True:
            unchanged: list[tuple[RunContext, _TreeReader, datetime]] = []
            try:
                changed = _read_until_changed(job, steps, known, unchanged)
            finally:  # recorded together, the database open once for them (and after an interruption)
                for ctx, reader, judged in unchanged:
                    result = record_run(wh, ctx, "unchanged", [], finished_at=judged)
                    summary.runs.append(result)
                    summary.unchanged[result.run_id] = reader.skipped
            if changed is None:
                break
            result = _load_collection(job, changed)
            summary.runs.append(result)
            summary.unchanged[result.run_id] = changed.reader.skipped
    decide_views_after(wh, summary.runs)
    return summary


def _known_of(wh: Warehouse, registry: Registry, collection: str) -> tuple[bool, frozenset[str]]:
    """Whether the collection's last load used another registry (it loads again whole), and the
    raw sha256s its runs loaded (files skipped unread)."""
    last = last_loading_run(wh.con, collection_source_key(collection))
    stale = last is not None and last.registry_version != registry.version
    return stale, frozenset() if stale else loaded_payloads(wh.con, collection_source_key(collection))


@dataclass
class _Started:
    """A collection whose files are being read: its run, reader and the stream already begun."""

    ctx: RunContext
    reader: _TreeReader
    files: list[TreeFile]
    stream: Iterator[ParseItem]
    first: ParseItem | None
    stale: bool


def _read_until_changed(
    job: _Import,
    steps: Iterator[tuple[str, list[TreeFile]]],
    known: dict[str, tuple[bool, frozenset[str]]],
    unchanged: list[tuple[RunContext, _TreeReader, datetime]],
) -> _Started | None:
    """With the database closed (readers get in), read the next collections' files up to the first
    file not loaded yet. Collections found unchanged go to ``unchanged`` (with when that was known;
    the caller records them); returned is the collection that has something to load, its stream
    begun (None: the tree is read to its end)."""
    with job.wh.released("reading collections (database closed)"):
        for collection, files in steps:
            job.wh.doing(f"reading collection {collection} (database closed)")
            started = _start(job, collection, files, known.pop(collection))  # each set freed once used
            if started.first is None and started.reader.skipped:
                unchanged.append((started.ctx, started.reader, datetime.now(UTC)))
                continue
            return started
    return None


def _start(job: _Import, collection: str, files: list[TreeFile], known: tuple[bool, frozenset[str]]) -> _Started:
    """The collection's run context and reader, read up to its first changed file; files this
    collection already loaded are skipped unread."""
    stale, payloads = known
    source_key = collection_source_key(collection)
    details: dict[str, Any] = {"root": str(job.root), "collection": collection, "files_unchanged": 0}
    reader = _TreeReader(job.listing, job.store, source_key, payloads, details)
    stream = reader.items(files)
    first = next(stream, None)
    source = SourceRow(source_key, f"EEE datastore collection {collection}", "eee_datastore", None, None, None)
    ctx = RunContext(
        source=source,
        trigger="import-eee",
        registry=job.registry,
        collection=collection,
        allow_provisional=True,
        identity_from="id",
        after_load=job.after_load,
        details=details,
        view_decisions=False,  # recorded once, after the last collection
        batch_size=job.batch_size,
        memory_budget=job.memory_budget,
    )
    return _Started(ctx, reader, files, stream, first, stale)


def _load_collection(job: _Import, started: _Started) -> RunResult:
    """One collection as one run: its changed files stream into the load transaction."""
    reader, files, stream, first = started.reader, started.files, started.stream, started.first
    begun = iter([stream if first is None else chain([first], stream)])

    def items() -> Iterator[ParseItem]:
        # the stream already begun; a second call (the load ran again without its memory
        # budget) reads the collection's files once more
        return next(begun, None) or reader.again(files)

    plan = LoadPlan(
        entries=reader.entries,
        items=items,
        replayable=True,
        replace_source=started.stale,
        status="recanonicalised" if started.stale else None,
        settle=reader.settle,
    )
    return run_load(job.wh, started.ctx, plan)
