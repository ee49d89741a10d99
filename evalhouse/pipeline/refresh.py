"""The nightly refresh: plan -> fetch -> raw store -> (unchanged?) -> parse -> (unchanged?) -> load.

Each source runs on its own: a failure (network, parser, validation) becomes that source's
``failed`` run and never touches another source's data. Two checks keep a quiet night cheap and
honest. If the payload bytes equal the last completed run's, nothing is parsed. If they differ
but the parsed records fingerprint the same (payloads that embed their own fetch time change
bytes daily without changing content), nothing is loaded. Both outcomes are recorded as
``unchanged`` runs, so "the source was checked and had nothing new" is distinguishable from
"the source was not checked".
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, replace
from datetime import UTC
from pathlib import Path
from typing import Any

from evalhouse.common.resources import read_sql
from evalhouse.ingest.catalog import catalog, get_source, scheduled
from evalhouse.ingest.fetch import FetchError, FetchRequest, FetchResult
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule, SourceState
from evalhouse.pipeline import items_ingest, ledger
from evalhouse.schema.fingerprint import record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawEntry, RawStore

OFFLINE_HINT = (
    "no network? replay pinned payloads instead: 'make mirror && make run MIRROR=build/mirror' "
    "(or 'evalhouse mirror from-shared DIR' then 'evalhouse refresh --mirror DIR')"
)

ClientFactory = Callable[[str | None], HttpClient]
AfterLoad = ledger.AfterLoad


def default_client(mirror: str | None) -> HttpClient:
    return HttpClient(mirror=mirror)


@dataclass(frozen=True)
class Fetched:
    entry: RawEntry
    body: bytes
    meta: FetchMeta


def source_row(module: SourceModule) -> ledger.SourceRow:
    spec = module.SOURCE
    return ledger.SourceRow(spec.key, spec.name, spec.kind, spec.tier, spec.organisation, spec.homepage)


def source_state(wh: Warehouse, key: str, env: Mapping[str, str]) -> SourceState:
    """What the last successful fetches of ``key`` left behind (per URL), for conditional GETs."""
    rows = wh.con.execute(
        "SELECT url, sha256, etag, last_modified FROM raw_snapshot r"
        " WHERE source_key = ? AND run_id IN (SELECT run_id FROM ingest_run WHERE source_key = ?"
        "   AND status IN ('completed', 'partial', 'unchanged'))"
        " ORDER BY retrieved_at",
        [key, key],
    ).fetchall()
    shas, etags, modified = {}, {}, {}
    for url, sha, etag, last_mod in rows:  # later rows overwrite earlier ones
        shas[url] = sha
        if etag:
            etags[url] = etag
        if last_mod:
            modified[url] = last_mod
    return SourceState(last_payload_sha256=shas, etags=etags, last_modified=modified, env=dict(env))


def _store(store: RawStore, key: str, request: FetchRequest, result: FetchResult, run_id: str) -> Fetched:
    assert result.body is not None
    entry = store.put(
        result.body,
        source_key=key,
        url=result.mirrored_from or result.url,
        content_type=result.content_type,
        retrieved_at=result.retrieved_at,
        http_status=result.status,
        etag=result.etag,
        last_modified=result.last_modified,
        request_params={**result.request_params, **({"mirror": result.url} if result.mirrored_from else {})},
        label=request.label,
        run_id=run_id,
    )
    meta = FetchMeta(key, entry.url, entry.sha256, result.retrieved_at, result.content_type, request.label)
    return Fetched(entry, result.body, meta)


def parse_all(module: SourceModule, fetched: list[Fetched]) -> list[ParseItem]:
    """Every item of every payload; a ParseError (a whole payload unreadable) propagates."""
    items: list[ParseItem] = []
    for f in fetched:
        items.extend(_tag(module.parse(f.body, meta=f.meta), f.entry.sha256))
    return items


def _tag(items: Iterator[ParseItem], sha256: str) -> Iterator[ParseItem]:
    for item in items:
        yield item if item.raw_sha256 is not None else replace(item, raw_sha256=sha256)


def parsed_fingerprint(items: list[ParseItem]) -> str:
    return ledger.records_fingerprint(record_fingerprint(i.record) for i in items if isinstance(i, ParsedRecord))


class _Run:
    """One run of one source: its id, clock and the two ways it ends (recorded, or loaded)."""

    def __init__(self, wh: Warehouse, module: SourceModule, trigger: str, **details: Any) -> None:
        self.wh, self.module, self.trigger, self.details = wh, module, trigger, details
        self.spec = module.SOURCE
        self.run_id = ledger.new_run_id(self.spec.key)
        self.t0 = time.perf_counter()

    def record(self, status: ledger.RunStatus, entries: list[RawEntry], error: str | None = None, **details: Any):
        """End without loading (failed before the load, or unchanged), keeping the fetch rows."""
        return ledger.record_run(
            self.wh,
            source=source_row(self.module),
            trigger=self.trigger,
            run_id=self.run_id,
            status=status,
            entries=entries,
            error=error,
            duration_s=time.perf_counter() - self.t0,
            parser_version=self.spec.parser_version,
            details={**self.details, **details},
        )

    def parse(self, fetched: list[Fetched], entries: list[RawEntry]) -> list[ParseItem] | ledger.RunResult:
        """Every item of every payload, or the failed run when a payload is unreadable as a whole."""
        try:
            return parse_all(self.module, fetched)
        except ParseError as exc:
            return self.record("failed", entries, f"parse failed: {exc}")

    def load(
        self,
        entries: list[RawEntry],
        items: list[ParseItem],
        *,
        after_load: AfterLoad | None,
        replace_source: bool = False,
        **details: Any,
    ) -> ledger.RunResult:
        return ledger.run_load(
            self.wh,
            source=source_row(self.module),
            trigger=self.trigger,
            entries=entries,
            items=lambda: items,
            run_id=self.run_id,
            parser_version=self.spec.parser_version,
            collection=self.spec.collection,
            records_fp=parsed_fingerprint(items),
            details={**self.details, **details},
            after_load=after_load,
            replace_source=replace_source,
        )


def refresh_source(
    wh: Warehouse,
    store: RawStore,
    module: SourceModule,
    *,
    mirror: str | None = None,
    env: Mapping[str, str] | None = None,
    client_factory: ClientFactory = default_client,
    after_load: AfterLoad | None = None,
) -> ledger.RunResult:
    spec = module.SOURCE
    env = dict(os.environ if env is None else env)
    run = _Run(wh, module, "refresh", mirror=mirror)
    missing = [var for var in spec.required_env if not env.get(var)]
    if missing:
        return run.record("failed", [], f"missing credential(s) {', '.join(missing)}: set them in the environment")
    if not spec.default_urls and spec.cadence == "manual":
        return run.record("failed", [], f"{spec.key} is read from files: use 'evalhouse ingest {spec.key} PATH'")
    requests = module.plan(source_state(wh, spec.key, env))
    fetched: list[Fetched] = []
    not_modified = 0
    with client_factory(mirror) as client:
        for request in requests:
            try:
                result = client.fetch(request)
            except FetchError as exc:
                hint = "" if mirror else f"; {OFFLINE_HINT}"
                return run.record("failed", [f.entry for f in fetched], f"fetch failed ({exc.kind}): {exc}{hint}")
            if result.not_modified:
                not_modified += 1
                continue
            fetched.append(_store(store, spec.key, request, result, run.run_id))
    entries = [f.entry for f in fetched]
    if not fetched and not_modified:
        return run.record("unchanged", entries, reason="304 Not Modified")
    last = ledger.last_completed_run(wh.con, spec.key)
    if last is not None and last["payload_sha256"] == ledger.payload_digest(entries):
        return run.record("unchanged", entries, reason="payload sha256 equals the last completed run's")
    items = run.parse(fetched, entries)
    if isinstance(items, ledger.RunResult):
        return items
    if last is not None and last["records_fingerprint"] == parsed_fingerprint(items):
        return run.record("unchanged", entries, reason="parsed records fingerprint equals the last completed run's")
    return run.load(entries, items, after_load=after_load, requests=len(requests))


def refresh(
    wh: Warehouse,
    store: RawStore,
    keys: list[str] | None = None,
    *,
    mirror: str | None = None,
    env: Mapping[str, str] | None = None,
    client_factory: ClientFactory = default_client,
    after_load: AfterLoad | None = None,
    on_start: Callable[[str], None] | None = None,
    on_done: Callable[[ledger.RunResult], None] | None = None,
) -> list[ledger.RunResult]:
    """Refresh ``keys`` (default: every catalogued source) one after another."""
    modules = [get_source(k) for k in keys] if keys else [catalog()[k] for k in scheduled()]
    results = []
    for module in modules:
        if on_start:
            on_start(module.SOURCE.key)
        result = refresh_source(
            wh, store, module, mirror=mirror, env=env, client_factory=client_factory, after_load=after_load
        )
        results.append(result)
        if on_done:
            on_done(result)
    return results


def ingest_file(
    wh: Warehouse,
    store: RawStore,
    key: str,
    location: str,
    *,
    client_factory: ClientFactory = default_client,
    after_load: AfterLoad | None = None,
) -> ledger.RunResult:
    """Run one source's parser over one local file or URL, recorded like any fetch.

    A harness-log source given a local file or run directory reads it through
    :func:`evalhouse.pipeline.items_ingest.ingest_item_path` (bundles, no size cap).
    """
    module = get_source(key)
    if items_ingest.is_item_source(module) and Path(location).exists():
        return items_ingest.ingest_item_path(wh, store, module, location, after_load)
    run = _Run(wh, module, "ingest", location=location)
    path = Path(location)
    request = FetchRequest(path.resolve().as_uri() if path.exists() else location, label=path.name)
    with client_factory(None) as client:
        try:
            result = client.fetch(request)
        except FetchError as exc:
            return run.record("failed", [], f"cannot read {location}: {exc}")
    fetched = [_store(store, module.SOURCE.key, request, result, run.run_id)]
    entries = [fetched[0].entry]
    items = run.parse(fetched, entries)
    if isinstance(items, ledger.RunResult):
        return items
    return run.load(entries, items, after_load=after_load)


def reparse(wh: Warehouse, store: RawStore, key: str, *, after_load: AfterLoad | None = None) -> ledger.RunResult:
    """Rebuild a source's rows from the raw store with the current parser, without fetching.

    Every payload the source ever delivered to a run that loaded data is re-parsed, oldest
    first, inside one transaction that first removes the rows the old parser produced; the
    raw bytes and the run history stay.
    """
    module = get_source(key)
    run = _Run(wh, module, "reparse")
    rows = wh.con.execute(_sql("reparse_payloads.sql"), [key]).fetchall()
    fetched = []
    for sha, url, retrieved_at, content_type, label in rows:
        body = store.get(sha)
        meta = FetchMeta(key, url, sha, retrieved_at.replace(tzinfo=UTC), content_type, label)
        entry = RawEntry(
            fetch_id=f"reparse-{sha[:12]}",
            sha256=sha,
            source_key=key,
            url=url,
            retrieved_at=retrieved_at.isoformat(),
            size_bytes=len(body),
            storage_path=str(store.find(sha)),
            content_type=content_type,
            label=label,
        )
        fetched.append(Fetched(entry, body, meta))
    if not fetched:
        return run.record("failed", [], f"no stored payloads of {key} to reparse")
    items = run.parse(fetched, [])
    if isinstance(items, ledger.RunResult):
        return items
    return run.load([], items, after_load=after_load, replace_source=True, payloads=[f.entry.sha256 for f in fetched])


def _sql(name: str) -> str:
    return read_sql("evalhouse.pipeline", name)
