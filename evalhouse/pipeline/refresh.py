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

import json
import os
import time
from collections.abc import Callable, Collection, Iterator, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC
from pathlib import Path
from typing import Any

import httpx

from evalhouse.common.resources import read_sql
from evalhouse.ingest.catalog import catalog, get_source
from evalhouse.ingest.fetch import FetchError, FetchRequest, FetchResult
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule, SourceState
from evalhouse.pipeline import guards, ledger
from evalhouse.schema.fingerprint import record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import insert_rows
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
        degraded: str | None = None,
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
            degraded=degraded,
        )


#: Upper bound on pages one httpx run fetches through ``follow()`` (crawls are bounded by scrapy).
MAX_FOLLOWED_PAGES = 500


@dataclass
class Gathered:
    """What one run's fetches produced: stored payloads, failed pages, 304 answers."""

    fetched: list[Fetched] = field(default_factory=list)
    failures: list[guards.Failure] = field(default_factory=list)
    not_modified: int = 0


def _gather_http(
    client: HttpClient, module: SourceModule, requests: list[FetchRequest], store: RawStore, run_id: str
) -> Gathered:
    """Fetch the plan, then whatever the source's pure ``follow()`` finds in each payload."""
    key = module.SOURCE.key
    follow = getattr(module, "follow", None)
    got = Gathered()
    queue = [(r, True) for r in requests]
    seen = {str(httpx.URL(r.url).copy_merge_params(dict(r.params))) for r in requests}
    while queue and len(got.fetched) + len(got.failures) < MAX_FOLLOWED_PAGES:
        request, planned = queue.pop(0)
        try:
            result = client.fetch(request)
        except FetchError as exc:
            got.failures.append(guards.Failure(request.url, exc.kind, str(exc), exc.status, planned))
            continue
        if result.not_modified:
            got.not_modified += 1
            continue
        fetched = _store(store, key, request, result, run_id)
        got.fetched.append(fetched)
        for nxt in _follow(follow, fetched):
            key_url = str(httpx.URL(nxt.url).copy_merge_params(dict(nxt.params)))
            if key_url not in seen:
                seen.add(key_url)
                queue.append((_inherit(request, nxt), False))
    return got


def _follow(follow: Callable[..., list[FetchRequest]] | None, fetched: Fetched) -> list[FetchRequest]:
    """What a payload links to; an unreadable payload links nowhere (its parse reports why)."""
    if follow is None:
        return []
    try:
        return follow(fetched.body, meta=fetched.meta)
    except ParseError:
        return []


def _inherit(parent: FetchRequest, child: FetchRequest) -> FetchRequest:
    """A followed request keeps its parent's headers (and declared secrets) on the same origin."""
    same = httpx.URL(parent.url).netloc == httpx.URL(child.url).netloc
    if not same or not parent.headers:
        return child
    return replace(
        child,
        headers={**parent.headers, **child.headers},
        secret_headers=parent.secret_headers | child.secret_headers,
    )


def _gather_crawl(
    run: _Run,
    requests: list[FetchRequest],
    store: RawStore,
    *,
    mirror: str | None,
    settings: Mapping[str, Any] | None,
) -> Gathered:
    """Crawl with the source's scrapy spider; every page goes to the same raw store."""
    module, run_id = run.module, run.run_id
    from evalhouse.ingest.spiders.crawl import crawl  # noqa: PLC0415 - scrapy + twisted load only when a crawl runs

    outcome = crawl(module, requests, mirror=mirror, overrides=dict(settings or {}))
    got = Gathered()
    for page in sorted(outcome.pages, key=lambda p: p.url):
        result = FetchResult(
            url=page.fetched_url,
            status=page.status,
            body=page.body,
            content_type=page.content_type,
            etag=page.etag,
            last_modified=page.last_modified,
            retrieved_at=page.retrieved_at,
            elapsed_s=page.elapsed_s,
            attempts=1,
            request_params={"params": {}, "headers": {}, "crawl": {"spider": module.SPIDER, "depth": page.depth}},  # type: ignore[attr-defined]
            not_modified=False,
            headers=page.headers,
            label=page.label,
            mirrored_from=page.url if mirror else None,
        )
        got.fetched.append(_store(store, module.SOURCE.key, FetchRequest(page.url, label=page.label), result, run_id))
    got.failures = [guards.Failure(f.url, f.kind, f.message, f.status, f.planned) for f in outcome.failures]
    got.failures += [guards.Failure("(spider)", "malformed_item", m) for m in outcome.malformed]
    return got


def _parse_page(module: SourceModule, f: Fetched) -> guards.Page:
    try:
        items = list(_tag(module.parse(f.body, meta=f.meta), f.entry.sha256))
    except ParseError as exc:
        return guards.Page(f.entry.url, f.body, f.meta.content_type, [], exc)
    return guards.Page(f.entry.url, f.body, f.meta.content_type, items)


def previous_figures(wh: Warehouse, key: str) -> guards.Previous | None:
    """Rows per payload of the last completed or partial run (what a shrink is measured against)."""
    last = ledger.last_completed_run(wh.con, key)
    if last is None:
        return None
    n_read, details = wh.con.execute(
        "SELECT n_read, details FROM ingest_run WHERE run_id = ?", [last["run_id"]]
    ).fetchone()
    figures = (json.loads(details) if details else {}).get("figures") or {}
    return guards.Previous(
        last["run_id"],
        int(figures.get("records", n_read)),
        figures.get("by_url") or {},
        frozenset(figures.get("missing") or ()),
    )


def _with_decisions(after_load: AfterLoad | None, key: str, accepted: list[guards.Verdict]) -> AfterLoad | None:
    """Record waived guards as curation decisions inside the load's transaction."""
    if not accepted:
        return after_load

    def run(con: Any, run_id: str) -> None:
        insert_rows(
            con,
            "curation_decision",
            [
                {
                    "kind": "accepted_drift",
                    "rule": f"drift guard {v.guard} waived by a person (refresh --accept-drift {key})",
                    "subject": json.dumps({"source_key": key}),
                    "detail": json.dumps({"reason": v.reason, **dict(v.detail)}, default=str),
                    "run_id": run_id,
                }
                for v in accepted
            ],
        )
        if after_load is not None:
            after_load(con, run_id)

    return run


def refresh_source(
    wh: Warehouse,
    store: RawStore,
    module: SourceModule,
    *,
    mirror: str | None = None,
    env: Mapping[str, str] | None = None,
    client_factory: ClientFactory = default_client,
    after_load: AfterLoad | None = None,
    accept_drift: bool = False,
    crawl_settings: Mapping[str, Any] | None = None,
) -> ledger.RunResult:
    spec = module.SOURCE
    env = dict(os.environ if env is None else env)
    run = _Run(wh, module, "refresh", mirror=mirror)
    missing = [var for var in spec.required_env if not env.get(var)]
    if missing:
        return run.record("failed", [], f"missing credential(s) {', '.join(missing)}: set them in the environment")
    requests = module.plan(source_state(wh, spec.key, env))
    with client_factory(mirror) as client:
        if getattr(module, "SPIDER", None):  # a crawl goes where the client would: the same mirror
            got = _gather_crawl(run, requests, store, mirror=client.mirror, settings=crawl_settings)
        else:
            got = _gather_http(client, module, requests, store, run.run_id)
    entries = [f.entry for f in got.fetched]
    if not got.fetched and got.not_modified and not got.failures:
        return run.record("unchanged", entries, reason="304 Not Modified")
    last = ledger.last_completed_run(wh.con, spec.key)
    previous = previous_figures(wh, spec.key)
    # Pages the last completed run was already missing (Swallow's unpublished model pages) are
    # not news; a newly missing page is, even when the records it held are elsewhere too.
    same_gaps = guards.nothing_new_missing(got.failures, previous)
    if same_gaps and last is not None and last["payload_sha256"] == ledger.payload_digest(entries):
        return run.record("unchanged", entries, reason="payload sha256 equals the last completed run's")
    pages = [_parse_page(module, f) for f in got.fetched]

    # ---- DRIFT GUARDS: the one place a run's fetches and parse are judged (pipeline/guards.py) ----
    evidence = guards.Evidence(
        spec.key,
        pages,
        got.failures,
        previous,
        guards.policy_for(module),
        accept_drift=accept_drift,
        hint="" if mirror else f"; {OFFLINE_HINT}",
    )
    verdicts = guards.evaluate(evidence)
    decisive = guards.outcome(verdicts)
    report = {"figures": evidence.figures(), "guards": [_verdict_json(v) for v in verdicts]}
    if decisive is not None and decisive.outcome == "failed":
        return run.record("failed", entries, decisive.reason, guard=decisive.guard, **report)
    # ------------------------------------------------------------------------------------------------

    items = [item for page in pages for item in page.items]
    if same_gaps and last is not None and last["records_fingerprint"] == parsed_fingerprint(items):
        return run.record("unchanged", entries, reason="parsed records fingerprint equals the last completed run's")
    return run.load(
        entries,
        items,
        after_load=_with_decisions(after_load, spec.key, [v for v in verdicts if v.outcome == "accepted"]),
        degraded=decisive.reason if decisive is not None else None,
        requests=len(requests),
        **report,
    )


def _verdict_json(v: guards.Verdict) -> dict[str, Any]:
    return {"guard": v.guard, "outcome": v.outcome, "reason": v.reason, "urls": list(v.urls), **dict(v.detail)}


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
    accept_drift: Collection[str] = (),
    crawl_settings: Mapping[str, Any] | None = None,
) -> list[ledger.RunResult]:
    """Refresh ``keys`` (default: every catalogued source) one after another.

    ``accept_drift`` names sources whose row-drop guard a person waives for this run (recorded
    as a curation decision); ``crawl_settings`` overrides scrapy settings of crawled sources.
    """
    modules = [get_source(k) for k in keys] if keys else list(catalog().values())
    results = []
    for module in modules:
        if on_start:
            on_start(module.SOURCE.key)
        result = refresh_source(
            wh,
            store,
            module,
            mirror=mirror,
            env=env,
            client_factory=client_factory,
            after_load=after_load,
            accept_drift=module.SOURCE.key in accept_drift,
            crawl_settings=crawl_settings,
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
    """Run one source's parser over one local file or URL, recorded like any fetch."""
    module = get_source(key)
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
