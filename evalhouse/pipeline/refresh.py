"""The nightly refresh: plan -> fetch -> raw store -> (unchanged?) -> parse -> (unchanged?) -> load.

Each source runs on its own: a failure (network, parser, validation) becomes that source's
``failed`` run and never touches another source's data. Two checks keep a quiet night cheap and
honest. If the payload bytes equal the last loading run's, nothing is parsed. If they differ but
the parsed records fingerprint the same (payloads that embed their own fetch time change bytes
daily without changing content), nothing is loaded. Both outcomes are recorded as ``unchanged``
runs, so "the source was checked and had nothing new" is distinguishable from "the source was
not checked" — unless the registries changed since the source's rows were canonicalised: then
the stored payloads are parsed and canonicalised again and the run is ``recanonicalised``.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field

from evalhouse.curation.registry import Registry, load_registry
from evalhouse.ingest.catalog import catalog, get_source
from evalhouse.ingest.fetch import FetchError
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.source import SourceModule, SourceState
from evalhouse.pipeline import ledger
from evalhouse.pipeline.reparse import reload_stored
from evalhouse.pipeline.source_run import Fetched, SourceRun, parsed_fingerprint, store_fetch
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore

OFFLINE_HINT = (
    "no network? replay pinned payloads instead: 'make mirror && make run MIRROR=build/mirror' "
    "(or 'evalhouse mirror from-shared DIR' then 'evalhouse refresh --mirror DIR')"
)

ClientFactory = Callable[[str | None], HttpClient]


def default_client(mirror: str | None) -> HttpClient:
    return HttpClient(mirror=mirror)


@dataclass(frozen=True)
class RefreshOptions:
    """How a refresh runs: where it fetches from, with which registry and checkpoint."""

    mirror: str | None = None
    env: Mapping[str, str] | None = None
    client_factory: ClientFactory = default_client
    after_load: ledger.AfterLoad | None = None
    registry: Registry = field(default_factory=load_registry)
    on_start: Callable[[str], None] | None = None  # a source's run begins (progress display)
    on_done: Callable[[ledger.RunResult], None] | None = None  # ... and ends


def source_state(wh: Warehouse, key: str, env: Mapping[str, str]) -> SourceState:
    """What the last successful fetches of ``key`` left behind (per URL), for conditional GETs."""
    rows = wh.con.execute(
        "SELECT url, sha256, etag, last_modified FROM raw_snapshot r"
        " WHERE source_key = ? AND run_id IN (SELECT run_id FROM ingest_run WHERE source_key = ?"
        "   AND status IN ('completed', 'partial', 'unchanged', 'recanonicalised'))"
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


def _fetch_all(
    run: SourceRun, store: RawStore, options: RefreshOptions, env: Mapping[str, str]
) -> tuple[list[Fetched], int] | ledger.RunResult:
    """Fetch every planned request into the raw store: ``(fetched, n_not_modified)`` or the failed run."""
    requests = run.module.plan(source_state(run.wh, run.spec.key, env))
    fetched: list[Fetched] = []
    not_modified = 0
    with options.client_factory(options.mirror) as client:
        for request in requests:
            try:
                result = client.fetch(request)
            except FetchError as exc:
                hint = "" if options.mirror else f"; {OFFLINE_HINT}"
                return run.record("failed", [f.entry for f in fetched], f"fetch failed ({exc.kind}): {exc}{hint}")
            if result.not_modified:
                not_modified += 1
                continue
            fetched.append(store_fetch(store, run.spec.key, request, result, run.run_id))
    return fetched, not_modified


def refresh_source(
    wh: Warehouse, store: RawStore, module: SourceModule, options: RefreshOptions | None = None
) -> ledger.RunResult:
    options = options or RefreshOptions()
    spec = module.SOURCE
    env = dict(os.environ if options.env is None else options.env)
    run = SourceRun(wh, module, "refresh", options.registry, after_load=options.after_load, mirror=options.mirror)
    missing = [var for var in spec.required_env if not env.get(var)]
    if missing:
        return run.record("failed", [], f"missing credential(s) {', '.join(missing)}: set them in the environment")
    got = _fetch_all(run, store, options, env)
    if isinstance(got, ledger.RunResult):
        return got
    fetched, not_modified = got
    entries = [f.entry for f in fetched]
    last = ledger.last_loading_run(wh.con, spec.key)
    stale = last is not None and last.registry_version != options.registry.version
    if not fetched and not_modified:
        if stale:
            return reload_stored(run, store, entries, status="recanonicalised")
        return run.record("unchanged", entries, reason="304 Not Modified")
    if last is not None and last.payload_sha256 == ledger.payload_digest(entries):
        if stale:
            return reload_stored(run, store, entries, status="recanonicalised")
        return run.record("unchanged", entries, reason="payload sha256 equals the last loading run's")
    items = run.parse(fetched, entries)
    if isinstance(items, ledger.RunResult):
        return items
    if last is not None and last.records_fingerprint == parsed_fingerprint(items):
        if stale:
            return reload_stored(run, store, entries, status="recanonicalised")
        return run.record("unchanged", entries, reason="parsed records fingerprint equals the last loading run's")
    return run.load(entries, items, requests=len(fetched) + not_modified)


def refresh(
    wh: Warehouse, store: RawStore, keys: list[str] | None = None, options: RefreshOptions | None = None
) -> list[ledger.RunResult]:
    """Refresh ``keys`` (default: every scheduled source) one after another.

    Sources with ``cadence="manual"`` (model cards, papers) have nothing to fetch on their own:
    they run over named targets (:mod:`evalhouse.pipeline.targets`) or one payload at a time.
    """
    options = options or RefreshOptions()
    modules = [get_source(k) for k in keys] if keys else scheduled_sources()
    results = []
    for module in modules:
        if options.on_start:
            options.on_start(module.SOURCE.key)
        result = refresh_source(wh, store, module, options)
        results.append(result)
        if options.on_done:
            options.on_done(result)
    return results


def scheduled_sources() -> list[SourceModule]:
    """The catalogued sources a plain refresh runs: every one not fetched on demand only."""
    return [m for m in catalog().values() if m.SOURCE.cadence != "manual"]


def resolve_key(key: str) -> str:
    """A source key, or another name a source accepts for itself (``model-card`` for ``model-cards``)."""
    for real, module in catalog().items():
        if key == real or key in getattr(module, "ALIASES", ()):
            return real
    return get_source(key).SOURCE.key  # unknown: the catalog's error, with suggestions
