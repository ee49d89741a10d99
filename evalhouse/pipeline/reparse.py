"""Rebuilding a source's rows from the raw store: a parser fix or a registry edit, applied without fetching.

Every payload the source ever delivered to a run that loaded data is parsed again, oldest first,
inside one transaction that first removes the rows the old parser (or the old registry) produced;
the raw bytes and the run history stay. A refresh uses the same path when the payload is unchanged
but the registries moved on (status ``recanonicalised``).
"""

from __future__ import annotations

from datetime import UTC
from typing import TYPE_CHECKING

from evalhouse.curation.packaged_registry import PACKAGED, PackagedRegistry
from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.source import FetchMeta
from evalhouse.pipeline.source_run import Fetched, SourceRun
from evalhouse.warehouse import history
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawEntry, RawStore

if TYPE_CHECKING:
    from evalhouse.curation.registry import Registry


def stored_payloads(wh: Warehouse, store: RawStore, key: str) -> list[Fetched]:
    """Every distinct payload of ``key`` that a loading run read, oldest first, with its bytes."""
    rows = history.loaded_payloads(wh.con, key)
    fetched = []
    for sha, url, retrieved_at, content_type, label in rows:
        stored = store.find(sha)
        body = store.get(sha)
        meta = FetchMeta(key, url, sha, retrieved_at.replace(tzinfo=UTC), content_type, label)
        entry = RawEntry(
            fetch_id=f"reparse-{sha[:12]}",
            sha256=sha,
            source_key=key,
            url=url,
            retrieved_at=retrieved_at.isoformat(),
            size_bytes=len(body),
            storage_path=stored.storage_path if stored is not None else "",
            content_type=content_type,
            label=label,
        )
        fetched.append(Fetched(entry, body, meta))
    return fetched


def reload_stored(
    run: SourceRun, store: RawStore, entries: list[RawEntry], *, status: ledger.RunStatus | None = None
) -> ledger.RunResult:
    """Parse every stored payload of the run's source again and replace its rows in one load.

    ``entries`` are fetch rows to record with the run (a refresh's fetches of this night). The run
    keeps the last loading run's payload digest and records fingerprint, so the next night compares
    against what the source said, which a reparse does not change.
    """
    fetched = stored_payloads(run.wh, store, run.spec.key)
    if not fetched:
        return run.record("failed", entries, f"no stored payloads of {run.spec.key} to parse again")
    items = run.parse(fetched, entries)
    if isinstance(items, ledger.RunResult):
        return items
    return run.load(
        entries,
        items,
        compare_as=ledger.last_loading_run(run.wh.con, run.spec.key),
        replace_source=True,
        status=status,
        payloads=[f.entry.sha256 for f in fetched],
    )


def reparse(
    wh: Warehouse,
    store: RawStore,
    key: str,
    *,
    after_load: ledger.AfterLoad | None = None,
    registry: Registry | PackagedRegistry | None = None,
) -> ledger.RunResult:
    """Rebuild ``key``'s rows from the raw store with the current parser and registry."""
    run = SourceRun(wh, get_source(key), "reparse", registry or PACKAGED, after_load=after_load)
    return reload_stored(run, store, [])
