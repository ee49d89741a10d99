"""One run of one catalogued source: store what was fetched, parse it, and end recorded or loaded.

:mod:`evalhouse.pipeline.refresh` (the nightly job), :mod:`evalhouse.pipeline.ingest_file` (one
pinned payload) and :mod:`evalhouse.pipeline.reparse` (the raw store again) all run sources through
:class:`SourceRun`, so every path stores bytes before parsing, tags each item with the bytes it
came from and leaves one ``ingest_run`` row.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, replace
from datetime import datetime
from typing import TYPE_CHECKING, Any

from evalhouse.common.collector import collector_paused
from evalhouse.common.redaction import redact_stored, redact_url
from evalhouse.curation.packaged_registry import PackagedRegistry
from evalhouse.curation.plausibility import judge_units
from evalhouse.ingest.fetch import FetchRequest, FetchResult
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule
from evalhouse.schema.fingerprint import fingerprint_with_results, record_fingerprint
from evalhouse.schema.records import ParsedRecord, ParseItem
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load import ledger
from evalhouse.warehouse.raw.store import RawEntry, RawStore

if TYPE_CHECKING:
    from evalhouse.curation.registry import Registry


@dataclass(frozen=True)
class Fetched:
    """A payload in the raw store, its bytes and what the parser may know about the fetch."""

    entry: RawEntry
    body: bytes
    meta: FetchMeta


#: Source kinds whose records name their own tasks (a harness log's task ids, a paper table's
#: headers): a task the registry does not know becomes a provisional benchmark with a recorded
#: decision, never a quarantined score.
SELF_DESCRIBING_KINDS = ("harness_log", "paper")


def source_row(module: SourceModule) -> ledger.SourceRow:
    spec = module.SOURCE
    return ledger.SourceRow(spec.key, spec.name, spec.kind, spec.tier, spec.organisation, spec.homepage)


def store_fetch(store: RawStore, key: str, request: FetchRequest, result: FetchResult, run_id: str) -> Fetched:
    """Keep the bytes (content-addressed) and the fetch facts, before anything parses them."""
    assert result.body is not None
    entry = store.put(
        result.body,
        source_key=key,
        url=redact_url(result.mirrored_from or result.url, request.secret_params),
        content_type=result.content_type,
        retrieved_at=result.retrieved_at,
        http_status=result.status,
        etag=result.etag,
        last_modified=result.last_modified,
        request_params=redact_stored(
            {**result.request_params, **({"mirror": result.url} if result.mirrored_from else {})},
            request.secret_values(),
        ),
        label=redact_stored(request.label, request.secret_values()),
        run_id=run_id,
    )
    meta = FetchMeta(key, entry.url, entry.sha256, result.retrieved_at, result.content_type, request.label)
    return Fetched(entry, result.body, meta)


def parse_one(module: SourceModule, fetched: Fetched) -> list[ParseItem]:
    """The items of one payload, each tagged with its bytes; a ParseError propagates."""
    return parse_payload(module, fetched.body, fetched.meta, fetched.entry.sha256)


def parse_payload(module: SourceModule, body: bytes, meta: FetchMeta, sha256: str) -> list[ParseItem]:
    """The items ``module`` parses from ``body``, each tagged with ``sha256`` (the payload's)
    unless it names its own, and with the results whose declared unit the payload's values disagree
    with (:func:`~evalhouse.curation.plausibility.judge_units`); a ParseError propagates. Parsers
    build trees of dicts and lists, so the cycle collector pauses meanwhile
    (:mod:`evalhouse.common.collector`)."""
    with collector_paused():
        return judge_units(list(tag_items(module.parse(body, meta=meta), sha256)))


def parse_all(module: SourceModule, fetched: list[Fetched]) -> list[ParseItem]:
    """Every item of every payload; a ParseError (a whole payload unreadable) propagates."""
    items: list[ParseItem] = []
    for f in fetched:
        items.extend(parse_one(module, f))
    return items


def tag_items(items: Iterator[ParseItem], sha256: str) -> Iterator[ParseItem]:
    for item in items:
        yield item if item.raw_sha256 is not None else replace(item, raw_sha256=sha256)


def fingerprinted(items: list[ParseItem]) -> list[ParseItem]:
    """The items with each record's fingerprint (and its results' JSON) written on it, once for
    the refresh's unchanged check and the load after it."""
    out: list[ParseItem] = []
    for item in items:
        if isinstance(item, ParsedRecord) and item.fingerprint is None:
            fingerprint, results = fingerprint_with_results(item.record, json_exact=item.json_text)
            out.append(replace(item, fingerprint=fingerprint, results_json=results))
        else:
            out.append(item)
    return out


def parsed_fingerprint(items: list[ParseItem]) -> str:
    return ledger.records_fingerprint(
        i.fingerprint or record_fingerprint(i.record) for i in items if isinstance(i, ParsedRecord)
    )


class SourceRun:
    """One run of one source: its context and clock, and the two ways it ends (recorded, or loaded)."""

    def __init__(
        self,
        wh: Warehouse,
        module: SourceModule,
        trigger: str,
        registry: Registry | PackagedRegistry,
        *,
        after_load: ledger.AfterLoad | None = None,
        **details: Any,
    ) -> None:
        self.wh, self.module = wh, module
        self.spec = module.SOURCE
        self.ctx = ledger.RunContext(
            source=source_row(module),
            trigger=trigger,
            registry=registry,
            parser_version=self.spec.parser_version,
            collection=self.spec.collection,
            allow_provisional=self.spec.kind in SELF_DESCRIBING_KINDS,
            global_aliases=self.spec.kind in SELF_DESCRIBING_KINDS,
            declared_benchmarks=self.spec.declares_benchmarks,
            identity_from=self.spec.identity_from,
            after_load=after_load,
            details=details,
        )

    def views_decided_later(self) -> SourceRun:
        """This run, loading without the conflict and canonical-metric decisions: its caller records
        them once, after several runs (:func:`~evalhouse.warehouse.load.ledger.decide_views_after`)."""
        self.ctx = replace(self.ctx, view_decisions=False)
        return self

    @property
    def run_id(self) -> str:
        return self.ctx.run_id

    def record(
        self,
        status: ledger.RunStatus,
        entries: list[RawEntry],
        error: str | None = None,
        *,
        finished_at: datetime | None = None,
        **details: Any,
    ) -> ledger.RunResult:
        """End without loading (failed before the load, or unchanged), keeping the fetch rows;
        ``finished_at``: when that was known, if it is recorded later."""
        return ledger.record_run(
            self.wh, self.ctx.with_details(**details), status, entries, error, finished_at=finished_at
        )

    def parse(self, fetched: list[Fetched], entries: list[RawEntry]) -> list[ParseItem] | ledger.RunResult:
        """Every item of every payload, or the failed run when a payload is unreadable as a whole."""
        try:
            return parse_all(self.module, fetched)
        except ParseError as exc:
            return self.record("failed", entries, f"parse failed: {exc}")

    def parse_one(self, fetched: Fetched) -> list[ParseItem]:
        """One payload's items (a ParseError propagates: the caller decides what it costs)."""
        return parse_one(self.module, fetched)

    def load(
        self,
        entries: list[RawEntry],
        items: list[ParseItem],
        *,
        compare_as: ledger.LastRun | None = None,
        replace_source: bool = False,
        status: ledger.RunStatus | None = None,
        **details: Any,
    ) -> ledger.RunResult:
        """Load ``items`` in one transaction. ``compare_as`` keeps a previous run's payload digest and
        records fingerprint (a reparse changes how rows are read, not what the source said);
        ``details["records_fp"]``: the items' :func:`parsed_fingerprint`, when the caller has it.
        ``details["degraded"]`` (a drift guard's reason) makes a successful load ``partial``."""
        degraded = details.pop("degraded", None)
        records_fp = details.pop("records_fp", None)
        plan = ledger.LoadPlan(
            entries=entries,
            items=lambda: items,
            records_fp=compare_as.records_fingerprint if compare_as else records_fp or parsed_fingerprint(items),
            payload_sha256=compare_as.payload_sha256 if compare_as else None,
            replace_source=replace_source,
            status=status,
            degraded=degraded,
            replayable=True,
        )
        return ledger.run_load(self.wh, self.ctx.with_details(**details), plan)
