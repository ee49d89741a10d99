"""Item-level ingest: harness logs from local files or directories, and generated panels.

``evalhouse ingest KEY PATH`` for a harness-log source reads PATH itself (a file, or a run
directory): the source module's ``members(target, names)`` says which files of the folder belong
to the run (a HELM run directory, an lm-eval results file and its samples files, an EEE
aggregate and its ``_samples.jsonl``). Several files are packed into one deterministic bundle
(:mod:`evalhouse.ingest.bundle`) so the raw store keeps exactly the bytes that were parsed, and
the run goes through :func:`evalhouse.pipeline.ledger.run_load` like every other load: one
transaction, one ``ingest_run`` row, bad lines in ``quarantine`` with file and line.

Harness logs are read without the HTTP client's 64 MiB cap: a panel of 10⁷ responses is a
600 MB CSV.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from datetime import UTC, datetime
from pathlib import Path

from evalhouse.ingest import bundle
from evalhouse.ingest.budgets import check_samples_size
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule
from evalhouse.pipeline import ledger
from evalhouse.pipeline.source_run import parse_payload
from evalhouse.schema.items import ItemBatch
from evalhouse.schema.records import ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawEntry, RawStore

#: Source kinds whose ``ingest KEY PATH`` reads local run files through this module.
ITEM_KINDS = ("harness_log",)
MAX_FILE_BYTES = 8 * 1024**3


def is_item_source(module: SourceModule) -> bool:
    return module.SOURCE.kind in ITEM_KINDS


def read_payload(module: SourceModule, location: Path) -> tuple[bytes, str | None, dict[str, str]]:
    """The payload to store for ``location``: the file itself, or a bundle of the run's files.

    Returns ``(bytes, content_type, {member name: sha256})``.
    """
    choose: Callable[[str | None, list[str]], list[str]] | None = getattr(module, "members", None)
    if location.is_dir():
        folder, target = location, None
    else:
        folder, target = location.parent, location.name
    names = sorted(p.name for p in folder.iterdir() if p.is_file()) if choose else []
    chosen = choose(target, names) if choose else [location.name]
    if not chosen:
        raise ParseError(f"{location}: no files of a {module.SOURCE.name} run here")
    if target is not None and chosen == [target]:
        body = _read(location)
        return body, None, {target: hashlib.sha256(body).hexdigest()}
    files = {name: _read(folder / name) for name in chosen}
    return (
        bundle.pack(files, target=target),
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
    spec = module.SOURCE
    path = Path(location).resolve()
    try:
        body, content_type, member_shas = read_payload(module, path)
    except (OSError, ParseError) as exc:
        return ledger.record_run(wh, ctx, "failed", [], f"cannot read {location}: {exc}")
    now = datetime.now(UTC)
    entry = store.put(
        body,
        source_key=spec.key,
        url=path.as_uri() + ("/" if path.is_dir() else ""),
        content_type=content_type,
        retrieved_at=now,
        request_params={"members": member_shas} if content_type == bundle.CONTENT_TYPE else {},
        label=path.name,
        run_id=ctx.run_id,
    )
    meta = FetchMeta(spec.key, entry.url, entry.sha256, now, content_type, path.name)
    try:
        items = parse_payload(module, body, meta, entry.sha256)
    except ParseError as exc:
        return ledger.record_run(wh, ctx, "failed", [entry], f"parse failed: {exc}")
    return load_items(wh, ctx.with_details(members=sorted(member_shas)), items, [entry])


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
    """A cheap content fingerprint of item batches: their harness runs and row counts."""
    parts = []
    for item in items:
        if isinstance(item, ItemBatch):
            runs = sorted(str(v) for v in item.eval_runs.column("eval_run_id").to_pylist())
            parts.append(f"{item.locator}|{item.n_responses}|{','.join(runs)}")
        else:
            parts.append(f"failure|{getattr(item, 'locator', '')}")
    return hashlib.sha256("\n".join(sorted(parts)).encode()).hexdigest()
