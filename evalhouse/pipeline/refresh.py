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

import json
import os
from collections.abc import Callable, Collection, Mapping
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any
from urllib.parse import urlsplit

from evalhouse.common import progress
from evalhouse.common.collector import collector_paused
from evalhouse.curation.packaged_registry import PACKAGED, PackagedRegistry
from evalhouse.ingest._httpx import httpx
from evalhouse.ingest.catalog import catalog, get_source
from evalhouse.ingest.fetch import FetchError, FetchRequest, FetchResult
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import holds_nothing_of
from evalhouse.ingest.source import ParseError, SourceModule, SourceState
from evalhouse.pipeline import guards
from evalhouse.pipeline.boards import Board, parsed_board
from evalhouse.pipeline.reparse import reload_stored
from evalhouse.pipeline.source_run import (
    Fetched,
    SourceRun,
    fingerprinted,
    parse_one,
    parsed_fingerprint,
    store_fetch,
)
from evalhouse.warehouse import history
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.insert import insert_rows
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawStore

if TYPE_CHECKING:
    from evalhouse.curation.registry import Registry

OFFLINE_HINT = (
    "no network? replay pinned payloads instead: 'make mirror && make run MIRROR=build/mirror' "
    "(or 'evalhouse mirror from-shared DIR' then 'evalhouse refresh --mirror DIR')"
)

UNVERIFIED = (
    "unverified: its parser was never tested on a recorded real payload, so a plain refresh leaves it out"
    " ('evalhouse refresh --source KEY' fetches it anyway)"
)
#: What a source's required credential is set to when a mirror is replayed (a mirror is never sent one).
MIRROR_CREDENTIAL = "mirror-replay"

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
    # the registries to canonicalise with; the packaged ones are loaded only when a run canonicalises
    registry: Registry | PackagedRegistry = PACKAGED
    on_start: Callable[[str], None] | None = None  # a source's run begins (progress display)
    on_done: Callable[[ledger.RunResult], None] | None = None  # ... and ends
    accept_drift: Collection[str] = ()  # sources whose row-drop guard a person waives for this run
    crawl_settings: Mapping[str, Any] | None = None  # scrapy setting overrides for crawled sources
    # a saved copy of a source's site: its files stand for the pages (read, never fetched; an 'ingest' run)
    saved_site: Path | None = None
    # where a run that parsed its payloads and then loaded them, or was refused by a drift guard,
    # leaves their board by run id: the run report reads it here instead of parsing them again
    boards: dict[str, Board] | None = None


def source_state(wh: Warehouse, key: str, env: Mapping[str, str]) -> SourceState:
    """What the last successful fetches of ``key`` left behind (per URL), for conditional GETs."""
    shas, etags, modified = {}, {}, {}
    for url, sha, etag, last_mod in history.last_fetches(wh.con, key):  # later rows overwrite earlier ones
        shas[url] = sha
        if etag:
            etags[url] = etag
        if last_mod:
            modified[url] = last_mod
    return SourceState(last_payload_sha256=shas, etags=etags, last_modified=modified, env=dict(env))


#: Upper bound on pages one httpx run fetches through ``follow()`` (crawls are bounded by scrapy).
MAX_FOLLOWED_PAGES = 500


@dataclass
class Gathered:
    """What one run's fetches produced: stored payloads, failed pages, 304 answers."""

    fetched: list[Fetched] = field(default_factory=list)
    failures: list[guards.Failure] = field(default_factory=list)
    not_modified: int = 0
    absent: list[str] = field(default_factory=list)  # optional requests answered 404/410: not there


def _url_key(request: FetchRequest) -> str:
    """What one request asks for: its URL with its params, and a POST's body."""
    url = str(httpx.URL(request.url).copy_merge_params(dict(request.params)))
    return url if request.body is None else f"POST {url} {request.body.decode('utf-8', 'replace')}"


def _gather_http(client: HttpClient, run: SourceRun, requests: list[FetchRequest], store: RawStore) -> Gathered:
    """Fetch the plan, then whatever the source's pure ``follow()`` finds in each payload."""
    follow = getattr(run.module, "follow", None)
    got = Gathered()
    queue = [(r, True) for r in requests]
    seen = {_url_key(r) for r in requests}
    while queue and len(got.fetched) + len(got.failures) < MAX_FOLLOWED_PAGES:
        request, planned = queue.pop(0)
        try:
            result = client.fetch(request)
        except FetchError as exc:
            if request.optional and exc.status in (404, 410):
                got.absent.append(_url_key(request))
                continue
            got.failures.append(guards.Failure(request.url, exc.kind, str(exc), exc.status, planned))
            continue
        if result.not_modified:
            got.not_modified += 1
            continue
        fetched = store_fetch(store, run.spec.key, request, result, run.run_id)
        got.fetched.append(fetched)
        for nxt in _follow(follow, fetched):
            if _url_key(nxt) not in seen:
                seen.add(_url_key(nxt))
                queue.append((_inherit(request, nxt), False))
    for request, planned in queue:  # left over at the page limit: named, never dropped
        reason = f"not fetched: the run reached its limit of {MAX_FOLLOWED_PAGES} pages"
        got.failures.append(guards.Failure(request.url, "page_limit", reason, None, planned))
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
    if httpx.URL(parent.url).netloc != httpx.URL(child.url).netloc or not parent.headers:
        return child
    return replace(
        child, headers={**parent.headers, **child.headers}, secret_headers=parent.secret_headers | child.secret_headers
    )


def _gather_crawl(
    run: SourceRun,
    requests: list[FetchRequest],
    store: RawStore,
    *,
    mirror: str | None,
    settings: Mapping[str, Any] | None,
) -> Gathered:
    """Crawl with the source's scrapy spider; every page goes to the same raw store."""
    from evalhouse.ingest.spiders.crawl import crawl  # noqa: PLC0415 - scrapy + twisted load only when a crawl runs

    module = run.module
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
        got.fetched.append(
            store_fetch(store, run.spec.key, FetchRequest(page.url, label=page.label), result, run.run_id)
        )
    got.failures = [guards.Failure(f.url, f.kind, f.message, f.status, f.planned) for f in outcome.failures]
    got.failures += [guards.Failure("(spider)", "malformed_item", m) for m in outcome.malformed]
    return got


def _parse_page(module: SourceModule, f: Fetched) -> guards.Page:
    try:
        items = parse_one(module, f)
    except ParseError as exc:
        return guards.Page(f.entry.url, f.body, f.meta.content_type, [], exc)
    return guards.Page(f.entry.url, f.body, f.meta.content_type, items)


def previous_figures(wh: Warehouse, last: ledger.LastRun | None) -> guards.Previous | None:
    """Rows per payload of the last loading run (what a shrink is measured against)."""
    if last is None:
        return None
    n_read, details = history.run_figures(wh.con, last.run_id)
    figures = (json.loads(details) if details else {}).get("figures") or {}
    return guards.Previous(
        last.run_id,
        int(figures.get("records", n_read)),
        figures.get("by_url") or {},
        frozenset(figures.get("missing") or ()),
        figures.get("medians") or {},
    )


def record_waivers(run: SourceRun, accepted: list[guards.Verdict]) -> None:
    """Record waived guards as curation decisions inside the load's transaction."""
    if not accepted:
        return
    after_load, key = run.ctx.after_load, run.spec.key

    def record(con: Any, run_id: str) -> None:
        rows = [
            {
                "kind": "accepted_drift",
                "rule": f"drift guard {v.guard} waived by a person (refresh --accept-drift {key})",
                "subject": json.dumps({"source_key": key}),
                "detail": json.dumps({"reason": v.reason, **dict(v.detail)}, default=str),
                "run_id": run_id,
            }
            for v in accepted
        ]
        insert_rows(con, "curation_decision", rows)
        if after_load is not None:
            after_load(con, run_id)

    run.ctx = replace(run.ctx, after_load=record)


def _gather(run: SourceRun, store: RawStore, options: RefreshOptions, state: SourceState) -> Gathered:
    requests = run.module.plan(state)
    if options.saved_site is not None:  # the saved files, read as the pages they stand for; links followed there
        with options.client_factory(None) as client:
            return _gather_http(client, run, saved_requests(requests, options.saved_site), store)
    with options.client_factory(options.mirror) as client:
        if getattr(run.module, "SPIDER", None):  # a crawl goes where the client would: the same mirror
            return _gather_crawl(run, requests, store, mirror=client.mirror, settings=options.crawl_settings)
        return _gather_http(client, run, requests, store)


def _new_run(wh: Warehouse, module: SourceModule, options: RefreshOptions) -> SourceRun:
    if options.saved_site is not None:
        return SourceRun(
            wh, module, "ingest", options.registry, after_load=options.after_load, location=str(options.saved_site)
        )
    return SourceRun(wh, module, "refresh", options.registry, after_load=options.after_load, mirror=options.mirror)


def site_root(requests: list[FetchRequest]) -> str:
    """The folder URL the planned pages share (``https://host/leaderboard/``): a saved copy of the
    site keeps them at their paths below it."""
    common: list[str] = []
    for segments in zip(*(r.url.split("?", 1)[0].rsplit("/", 1)[0].split("/") for r in requests), strict=False):
        if len(set(segments)) > 1:
            break
        common.append(segments[0])
    return "/".join(common) + "/"


def saved_path(url: str, root: str, saved: Path) -> Path:
    """Where a saved copy of the site at ``saved`` keeps the page at ``url`` (its query dropped)."""
    return saved.joinpath(*[p for p in urlsplit(url[len(root) :]).path.split("/") if p not in ("", ".", "..")])


def saved_requests(requests: list[FetchRequest], saved: Path) -> list[FetchRequest]:
    """The planned requests as reads of the saved copy's files (a link a page holds is followed
    relative to the file, so it stays in the copy)."""
    root = site_root(requests)
    return [replace(r, url=saved_path(r.url, root, saved).resolve().as_uri(), params={}) for r in requests]


@dataclass(frozen=True)
class Known:
    """What the warehouse says of a source before its fetch (read with the database open)."""

    state: SourceState
    last: ledger.LastRun | None
    previous: guards.Previous | None


def known_of(wh: Warehouse, module: SourceModule, options: RefreshOptions) -> Known | ledger.RunResult:
    """What the warehouse knows of ``module`` before fetching it, or the failed run of a source
    that cannot be fetched at all (read from files only, or missing a credential)."""
    spec = module.SOURCE
    env = dict(os.environ if options.env is None else options.env)
    if not spec.default_urls and spec.cadence == "manual":
        return _new_run(wh, module, options).record(
            "failed", [], f"{spec.key} is read from files: use 'evalhouse ingest {spec.key} PATH'"
        )
    missing = [var for var in spec.required_env if not env.get(var)]
    if missing and (options.mirror or options.saved_site):  # never sent credentials: replay without them
        env.update(dict.fromkeys(missing, MIRROR_CREDENTIAL))
    elif missing:
        return _new_run(wh, module, options).record(
            "failed", [], f"missing credential(s) {', '.join(missing)}: set them in the environment"
        )
    last = ledger.last_loading_run(wh.con, spec.key)
    return Known(source_state(wh, spec.key, env), last, previous_figures(wh, last))


@dataclass(frozen=True)
class Ending:
    """How a judged run ends, called with the database open again: recorded, or loaded (``loads``:
    it holds the parsed items, so it ends before anything else is fetched)."""

    finish: Callable[[], ledger.RunResult]
    loads: bool
    board: Board | None = None  # what the run parsed, when the run report will read it (RefreshOptions.boards)

    def end(self, options: RefreshOptions) -> ledger.RunResult:
        result = self.finish()
        if self.board is not None and options.boards is not None:
            options.boards[result.run_id] = self.board
        return result


def refresh_source(
    wh: Warehouse, store: RawStore, module: SourceModule, options: RefreshOptions | None = None
) -> ledger.RunResult:
    """One source's run. Fetching and parsing happen with the database released (readers may
    open it meanwhile); the run is recorded or loaded with it reopened, in one transaction."""
    options = options or RefreshOptions()
    known = known_of(wh, module, options)
    if isinstance(known, ledger.RunResult):
        return known
    run = _new_run(wh, module, options)
    with collector_paused():  # parsed records and load rows are trees: see common/collector.py
        with wh.released(f"fetching and parsing {module.SOURCE.key} (database closed)"):
            ending = _fetch_and_judge(run, store, options, known)
        return ending.end(options)


def _fetch_and_judge(run: SourceRun, store: RawStore, options: RefreshOptions, known: Known) -> Ending:
    """Fetch, parse and judge without the database (``known``: what the warehouse said before);
    returns how the run ends, to be called with the database open again."""
    module, spec = run.module, run.spec
    state, last, previous = known.state, known.last, known.previous
    got = _gather(run, store, options, state)
    _gone_probes(got, previous)
    entries = [f.entry for f in got.fetched]
    stale = last is not None and last.registry_version != options.registry.version
    # Pages the last loading run was already missing (Swallow's unpublished model pages) are not
    # news; a newly missing page is, even when the records it held are elsewhere too.
    same_gaps = guards.nothing_new_missing(got.failures, previous)

    def recorded(
        status: ledger.RunStatus, error: str | None = None, board: Board | None = None, **details: Any
    ) -> Ending:
        judged = datetime.now(UTC)  # the run ends now, whenever it is written
        finish = lambda: run.record(status, entries, error, finished_at=judged, **details)  # noqa: E731
        return Ending(finish, loads=False, board=board)

    def reloaded() -> Ending:
        return Ending(lambda: reload_stored(run, store, entries, status="recanonicalised"), loads=True)

    if (
        options.mirror
        and not got.fetched
        and not got.not_modified
        and guards.every_planned_missing(got.failures)
        and holds_nothing_of(options.mirror, [f.url for f in got.failures if f.planned])
    ):
        return recorded("skipped", f"the mirror holds no payload of {spec.key} (no recorded payload replayed)")
    if not got.fetched and got.not_modified and not got.failures:
        return reloaded() if stale else recorded("unchanged", reason="304 Not Modified")
    if same_gaps and last is not None and last.payload_sha256 == ledger.payload_digest(entries) and got.fetched:
        return reloaded() if stale else recorded("unchanged", reason="payload sha256 equals the last loading run's")
    pages = [_parse_page(module, f) for f in got.fetched]

    # ---- DRIFT GUARDS: the one place a run's fetches and parse are judged (pipeline/guards.py) ----
    evidence = guards.Evidence(
        spec.key,
        pages,
        got.failures,
        previous,
        guards.policy_for(module),
        accept_drift=spec.key in options.accept_drift,
        hint="" if options.mirror or options.saved_site else f"; {OFFLINE_HINT}",
        registry=options.registry,
        declared_benchmarks=spec.declares_benchmarks,
    )
    verdicts = guards.evaluate(evidence)
    decisive = guards.outcome(verdicts)
    report: dict[str, Any] = {"figures": evidence.figures(), "guards": [verdict_json(v) for v in verdicts]}
    if got.absent:  # optional requests nothing answered: listed, not a failure
        report["absent"] = sorted(got.absent)

    def board() -> Board | None:
        """What was parsed, as the run report compares it (of a run that loads, or that a guard refused)."""
        return parsed_board((p.url, p.items, p.error) for p in pages) if options.boards is not None else None

    if decisive is not None and decisive.outcome == "failed":
        return recorded("failed", decisive.reason, board(), guard=decisive.guard, **report)
    # ------------------------------------------------------------------------------------------------

    items = fingerprinted([item for page in pages for item in page.items])
    records_fp = parsed_fingerprint(items)
    if same_gaps and last is not None and last.records_fingerprint == records_fp:
        if stale:
            return reloaded()
        return recorded("unchanged", reason="parsed records fingerprint equals the last loading run's")
    record_waivers(run, [v for v in verdicts if v.outcome == "accepted"])
    load = lambda: run.load(  # noqa: E731 - the run's ending, called with the database open
        entries,
        items,
        degraded=decisive.reason if decisive is not None else None,
        requests=len(got.fetched) + len(got.failures) + got.not_modified,
        records_fp=records_fp,
        **report,
    )
    return Ending(load, loads=True, board=board())


def _gone_probes(got: Gathered, previous: guards.Previous | None) -> None:
    """An optional request that answered in the last loading run and 404s now is a page gone
    missing (a release the site took down), not something that was never there."""
    if previous is None or not got.absent:
        return
    gone = [url for url in got.absent if url in previous.by_url]
    got.absent = [url for url in got.absent if url not in gone]
    got.failures += [
        guards.Failure(url, "http_status", f"{url}: HTTP 404 (it answered in run {previous.run_id})", 404, False)
        for url in gone
    ]


def verdict_json(v: guards.Verdict) -> dict[str, Any]:
    return {"guard": v.guard, "outcome": v.outcome, "reason": v.reason, "urls": list(v.urls), **dict(v.detail)}


def refresh(
    wh: Warehouse, store: RawStore, keys: list[str] | None = None, options: RefreshOptions | None = None
) -> list[ledger.RunResult]:
    """Refresh ``keys`` (default: every scheduled source) one after another.

    Sources with ``cadence="manual"`` (model cards, papers) have nothing to fetch on their own:
    they run over named targets (:mod:`evalhouse.pipeline.targets`) or one payload at a time.

    Each source is fetched and judged with the database closed and ends with it open, as
    :func:`refresh_source`; sources that end without loading (unchanged, or failed before a load)
    share one closing: what the warehouse knows of the next sources is read before the database
    closes, they are fetched one after another, and their runs are recorded together when it opens
    again — at the first source that loads (which loads before anything else is fetched) or after
    the last one. A quiet night of n sources therefore opens the warehouse twice, not n + 1 times.
    Each run still has its own transaction, and records when its outcome was known.

    The conflict and canonical-metric decisions read the whole warehouse, so they are recorded
    once, after the last source, in a transaction of their own attributed to the last run that
    loaded (as ``import-eee`` does for its collections): each decision describes the warehouse
    the refresh leaves, not a state between two of its sources. A refresh interrupted before then
    leaves them to the next load, which records whatever is new or changed.
    """
    options = options or RefreshOptions()
    store.recover()  # a writer killed mid-put left temporary files or a torn manifest line
    modules = [get_source(k) for k in keys] if keys else scheduled_sources()
    results: list[ledger.RunResult] = []
    if not keys:  # a source never verified on real bytes is not fetched by a plain refresh
        for module in unverified_sources():
            results.append(_new_run(wh, module, options).record("skipped", [], UNVERIFIED))
            if options.on_done:
                options.on_done(results[-1])
    with progress.task("refresh", total=len(modules)) as step:

        def starting(module: SourceModule) -> None:
            step.note(module.SOURCE.key)
            if options.on_start:
                options.on_start(module.SOURCE.key)

        def done(result: ledger.RunResult) -> None:
            results.append(result)
            step.advance(note=f"{result.source_key} {result.status}")
            if options.on_done:
                options.on_done(result)

        queue = list(modules)
        while queue:
            batch = _next_batch(wh, queue, options, starting, done)
            if not batch:  # every source taken ended without a fetch (read from files only, no credential)
                continue
            endings: list[Ending] = []
            with collector_paused():  # parsed records and load rows are trees: see common/collector.py
                try:
                    keys = ", ".join(m.SOURCE.key for m, _ in batch)
                    with wh.released(f"fetching and parsing {keys} (database closed)"):
                        for n, (module, known) in enumerate(batch):
                            starting(module)
                            run = _new_run(wh, module, options).views_decided_later()
                            endings.append(_fetch_and_judge(run, store, options, known))
                            if endings[-1].loads:  # the rest are fetched after this load, from what it leaves
                                queue[:0] = [m for m, _ in batch[n + 1 :]]
                                break
                finally:  # runs judged before an interruption are still recorded
                    for ending in endings:
                        done(ending.end(options))
                    endings.clear()  # a loaded run's parsed items go before the collector runs again
    ledger.decide_views_after(wh, results)
    return results


def _next_batch(
    wh: Warehouse,
    queue: list[SourceModule],
    options: RefreshOptions,
    starting: Callable[[SourceModule], None],
    done: Callable[[ledger.RunResult], None],
) -> list[tuple[SourceModule, Known]]:
    """The next sources to fetch in one closing of the database, taken from ``queue`` with what the
    warehouse knows of them (a source that cannot be fetched ends here); a source listed twice
    waits for its first run, whose record is what its second reads."""
    batch: list[tuple[SourceModule, Known]] = []
    while queue and all(queue[0].SOURCE.key != m.SOURCE.key for m, _ in batch):
        module = queue.pop(0)
        known = known_of(wh, module, options)
        if isinstance(known, ledger.RunResult):
            starting(module)
            done(known)
        else:
            batch.append((module, known))
    return batch


def scheduled_sources() -> list[SourceModule]:
    """The catalogued sources a plain refresh runs: every one not fetched on demand only whose
    parser was verified on a recorded real payload (``SourceSpec.verified_on``)."""
    return [m for m in catalog().values() if m.SOURCE.cadence != "manual" and m.SOURCE.verified_on is not None]


def unverified_sources() -> list[SourceModule]:
    """Scheduled sources left out of a plain refresh: no real payload of theirs is recorded."""
    return [m for m in catalog().values() if m.SOURCE.cadence != "manual" and m.SOURCE.verified_on is None]


def resolve_key(key: str) -> str:
    """A source key, or another name a source accepts for itself (``model-card`` for ``model-cards``)."""
    for real, module in catalog().items():
        if key == real or key in getattr(module, "ALIASES", ()):
            return real
    return get_source(key).SOURCE.key  # unknown: the catalog's error, with suggestions
