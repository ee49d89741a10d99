"""Harness logs from local files or directories, and generated item panels.

``evalhouse ingest KEY PATH...`` for a harness-log source reads each PATH itself (a file, or a
run directory): the source module's ``members(target, names)`` says which files of the folder
belong to the run (a HELM run directory, an lm-eval results file and its samples files, an EEE
aggregate and its ``_samples.jsonl``). Several files of one run are packed into one
deterministic bundle (:mod:`evalhouse.ingest.bundle`) so the raw store keeps exactly the bytes
that were parsed; paths naming the same run (a results file and its samples files) are read
once. Every run's bytes are stored and hashed before they are parsed, each record and item row
names its own payload, and all of them load through :func:`evalhouse.warehouse.load.ledger.run_load`
like every other load: one transaction, one ``ingest_run`` row. What cannot be read — a path
that is not there, a log that is neither scores nor samples — is a ``quarantine`` row with the
reason, and the other paths still load.

Harness logs are read without the HTTP client's 64 MiB cap: a panel of 10⁷ responses is a
600 MB CSV.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

from evalhouse.ingest import bundle
from evalhouse.ingest.budgets import check_samples_size
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule
from evalhouse.pipeline.source_run import parse_payload, parsed_fingerprint
from evalhouse.schema.items import ItemBatch
from evalhouse.schema.records import ParsedRecord, ParseFailure, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawEntry, RawStore

#: Source kinds whose ``ingest KEY PATH`` reads local run files through this module.
ITEM_KINDS = ("harness_log",)
MAX_FILE_BYTES = 8 * 1024**3


def is_item_source(module: SourceModule) -> bool:
    return module.SOURCE.kind in ITEM_KINDS


@dataclass(frozen=True)
class RunFiles:
    """The files of one harness run that a path names: its folder, the path's own file (None for
    a directory) and the files of the folder that belong with it."""

    location: Path
    folder: Path
    target: str | None
    chosen: tuple[str, ...]

    @property
    def key(self) -> tuple[Path, frozenset[str]]:
        """Two paths naming the same files (a results file and its samples file) are one run."""
        return self.folder, frozenset(self.chosen)


def run_files(module: SourceModule, location: Path) -> RunFiles:
    """The run ``location`` names: the source's ``members`` choose from its folder."""
    choose: Callable[[str | None, list[str]], list[str]] | None = getattr(module, "members", None)
    if location.is_dir():
        folder, target = location, None
    else:
        folder, target = location.parent, location.name
    names = sorted(p.name for p in folder.iterdir() if p.is_file()) if choose else []
    chosen = choose(target, names) if choose else [location.name]
    if not chosen:
        raise ParseError(f"{location}: no files of a {module.SOURCE.name} run here")
    return RunFiles(location, folder, target, tuple(chosen))


def read_payload(module: SourceModule, location: Path) -> tuple[bytes, str | None, dict[str, str]]:
    """The payload to store for ``location``: the file itself, or a bundle of the run's files.

    Returns ``(bytes, content_type, {member name: sha256})``.
    """
    return _payload(run_files(module, location))


def _payload(run: RunFiles) -> tuple[bytes, str | None, dict[str, str]]:
    if run.target is not None and run.chosen == (run.target,):
        body = _read(run.location)
        return body, None, {run.target: hashlib.sha256(body).hexdigest()}
    files = {name: _read(run.folder / name) for name in run.chosen}
    return (
        bundle.pack(files, target=run.target),
        bundle.CONTENT_TYPE,
        {n: hashlib.sha256(b).hexdigest() for n, b in files.items()},
    )


def _read(path: Path) -> bytes:
    size = path.stat().st_size
    if size > MAX_FILE_BYTES:
        raise ParseError(f"{path} is {size:,} bytes, more than the {MAX_FILE_BYTES:,} a harness log may be")
    if path.name.endswith(".jsonl"):  # a samples file: its budget is known before it is read
        check_samples_size(size, str(path))
    return path.read_bytes()


def ingest_item_path(
    wh: Warehouse, store: RawStore, module: SourceModule, location: str, ctx: ledger.RunContext
) -> ledger.RunResult:
    """Store the run's bytes, parse them with the source's pure parser, load in one transaction."""
    return ingest_item_paths(wh, store, module, [location], ctx)


def ingest_item_paths(
    wh: Warehouse, store: RawStore, module: SourceModule, locations: list[str], ctx: ledger.RunContext
) -> ledger.RunResult:
    """Every run the paths name, in one ingest run: each run's bytes stored and hashed first, then
    parsed; a path or payload that cannot be read is quarantined with its reason."""
    entries: list[RawEntry] = []
    items: list[ParseItem] = []
    members: list[str] = []
    seen: set[tuple[Path, frozenset[str]]] = set()
    for location in locations:
        path = Path(location).resolve()
        try:
            if not path.exists():
                raise FileNotFoundError(f"no such file or directory: {location}")
            run = run_files(module, path)
            if run.key in seen:
                continue  # named already, by another of its files
            seen.add(run.key)
            body, content_type, member_shas = _payload(run)
        except (OSError, ParseError) as exc:
            items.append(ParseFailure(location, f"cannot read {location}: {exc}"))
            continue
        now = datetime.now(UTC)
        entry = store.put(
            body,
            source_key=module.SOURCE.key,
            url=path.as_uri() + ("/" if path.is_dir() else ""),
            content_type=content_type,
            retrieved_at=now,
            request_params={"members": member_shas} if content_type == bundle.CONTENT_TYPE else {},
            label=path.name,
            run_id=ctx.run_id,
        )
        entries.append(entry)
        members += sorted(member_shas)
        meta = FetchMeta(module.SOURCE.key, entry.url, entry.sha256, now, content_type, path.name)
        try:
            items.extend(parse_payload(module, body, meta, entry.sha256))
        except ParseError as exc:
            reason = f"unreadable as a {module.SOURCE.name} log: {exc}"
            items.append(ParseFailure(path.name, reason, raw_sha256=entry.sha256))
    if not entries:
        reasons = "; ".join(i.reason for i in items if isinstance(i, ParseFailure))
        return ledger.record_run(wh, ctx, "failed", [], reasons or "nothing to ingest")
    return load_items(wh, ctx.with_details(members=members), items, entries)


def load_items(
    wh: Warehouse, ctx: ledger.RunContext, items: Iterable[ParseItem], entries: list[RawEntry] | None = None
) -> ledger.RunResult:
    """Load parsed or generated items (batches and refused lines) through the ledger."""
    items = list(items)
    plan = ledger.LoadPlan(
        entries=entries or [], items=lambda: items, records_fp=batches_fingerprint(items), replayable=True
    )
    return ledger.run_load(wh, ctx, plan)


def batches_fingerprint(items: list[ParseItem]) -> str:
    """A cheap content fingerprint of a parse: its records' fingerprints, and its item batches'
    harness runs and row counts."""
    parts = [f"records|{parsed_fingerprint(items)}"] if any(isinstance(i, ParsedRecord) for i in items) else []
    for item in items:
        if isinstance(item, ItemBatch):
            runs = sorted(str(v) for v in item.eval_runs.column("eval_run_id").to_pylist())
            parts.append(f"{item.locator}|{item.n_responses}|{','.join(runs)}")
        else:
            parts.append(f"failure|{getattr(item, 'locator', '')}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()
