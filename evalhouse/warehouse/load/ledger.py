"""The ingest ledger: sources, runs and fetches as warehouse rows.

Every way data enters (refresh, a hand-run ingest, a reparse, an EEE import) goes through
:func:`run_load`, so each leaves the same trail: the ``raw_snapshot`` rows of the bytes it read,
one ``ingest_run`` row with counts and status, and — inside the same transaction — the records.
A failure rolls the records back but still writes the run (status ``failed``, with the error)
and the fetch rows, because "we fetched these bytes and could not load them" is provenance too.

What a run needs to know — its source, trigger, the registry it canonicalises with, the parser
version — travels in one :class:`RunContext`; nothing is read from a global, so the registry
version written to ``ingest_run`` is the one the rows were canonicalised with.
"""

from __future__ import annotations

import hashlib
import json
import sys
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager, nullcontext
from dataclasses import dataclass, field, replace
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any, Literal

import duckdb

from evalhouse.common.redaction import redact_stored, url_secrets
from evalhouse.config import ENV_MEMORY
from evalhouse.curation.packaged_registry import PackagedRegistry, resolve
from evalhouse.errors import CommitFailed, RunFailed
from evalhouse.schema.items import ItemBatch
from evalhouse.version import __version__
from evalhouse.warehouse.db import Warehouse, first_row
from evalhouse.warehouse.decisions import record_decisions
from evalhouse.warehouse.insert import insert_rows
from evalhouse.warehouse.load.items import ITEM_PARSED_TABLES, ItemLoader, ItemLoadReport
from evalhouse.warehouse.load.report import LoadReport
from evalhouse.warehouse.memory_budget import (
    STEP_BUDGET_BYTES,
    Budget,
    load_budget,
    loading_within,
    spilling_beyond,
)
from evalhouse.warehouse.raw.store import RawEntry, RawStoreError

if TYPE_CHECKING:  # the loader, the name resolver and the registries' models load with a load
    from evalhouse.curation.identity import IdentityFrom
    from evalhouse.curation.registry import Registry
    from evalhouse.schema.records import ParseItem

RunStatus = Literal["completed", "partial", "failed", "unchanged", "recanonicalised", "skipped"]
#: Statuses of runs that loaded rows: what "the source's current data" was built by.
LOADING = ("completed", "partial", "recanonicalised")
#: Runs inside a load's transaction after the rows are in (the expectations checkpoint), given the
#: run id; raising rolls the load back.
AfterLoad = Callable[[duckdb.DuckDBPyConnection, str], None]


@dataclass(frozen=True)
class SourceRow:
    source_key: str
    name: str
    kind: str
    tier: int | None
    organisation: str | None
    homepage: str | None


def new_run_id(source_key: str) -> str:
    stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
    return f"{source_key}@{stamp}-{uuid.uuid4().hex[:6]}"


@dataclass(frozen=True)
class RunContext:
    """One run of one source: what it is, how its records are read, what is recorded with it."""

    source: SourceRow
    trigger: str  # refresh, ingest, reparse, import-eee
    registry: Registry | PackagedRegistry  # the packaged registries are loaded when a load needs them
    parser_version: str | None = None
    collection: str | None = None
    allow_provisional: bool = False
    global_aliases: bool = False  # with allow_provisional: the registry's global aliases still apply
    declared_benchmarks: bool = False  # the source publishes its own benchmark list (curation.canonicalise)
    identity_from: IdentityFrom = "name"  # which model_info field names the artefact (curation.identity)
    after_load: AfterLoad | None = None
    details: dict[str, Any] = field(default_factory=dict)
    view_decisions: bool = True  # False: the caller records conflict and metric decisions once, later
    # records per dedup query and per insert (memory holds one batch); None: the loader's default
    batch_size: int | None = None
    # DuckDB's bytes beyond what its indexes hold (None: no budget); $EVALHOUSE_LOAD_BUDGET, else 256 MB
    memory_budget: int | None = field(default_factory=load_budget)
    run_id: str = ""
    started_at: datetime = field(default_factory=lambda: datetime.now(UTC))

    def __post_init__(self) -> None:
        if not self.run_id:
            object.__setattr__(self, "run_id", new_run_id(self.source.source_key))

    def with_details(self, **details: Any) -> RunContext:
        return replace(self, details={**self.details, **details})


@dataclass
class RunResult:
    run_id: str
    source_key: str
    status: RunStatus
    report: LoadReport = field(default_factory=LoadReport)
    error: str | None = None
    duration_s: float = 0.0
    payload_sha256: str | None = None
    decisions: dict[str, int] = field(default_factory=dict)
    items: ItemLoadReport | None = None  # set when the source yielded item-level batches
    # when the load began (time.perf_counter): the recorded duration includes a replay
    started: float = field(default_factory=time.perf_counter, repr=False, compare=False)
    # when a run that loaded nothing knew its outcome, if recorded later (None: when recorded)
    finished_at: datetime | None = field(default=None, repr=False, compare=False)

    @property
    def counts(self) -> dict[str, int]:
        """read / loaded / quarantined / duplicate, item-level responses included (one per source line)."""
        r, i = self.report, self.items or ItemLoadReport()
        return {
            "read": r.records_read + r.parse_failures + i.responses_read,
            "loaded": r.records_loaded + i.responses_loaded,
            "quarantined": r.quarantined + i.responses_quarantined,
            "duplicate": r.records_duplicate + i.responses_duplicate,
        }

    def as_dict(self) -> dict[str, Any]:
        r = self.report
        return {
            "run_id": self.run_id,
            "source": self.source_key,
            "status": self.status,
            **self.counts,
            "scores": {
                "read": r.scores_read,
                "loaded": r.scores_loaded,
                "quarantined": r.scores_quarantined,
                "in_duplicate_records": r.scores_in_duplicates,
            },
            "quarantine_reasons": dict((r.reasons + (self.items.reasons if self.items else Counter())).most_common(10)),
            "items": self.items.as_dict() if self.items else None,
            "decisions": self.decisions,
            "error": self.error,
            "duration_s": round(self.duration_s, 3),
        }


@dataclass(frozen=True)
class LoadPlan:
    """What one load reads and how it is compared with the next night's."""

    entries: list[RawEntry]
    items: Callable[[], Iterable[ParseItem]]
    records_fp: str | None = None  # fingerprint of everything parsed (duplicates included)
    payload_sha256: str | None = None  # default: the digest of ``entries``
    replace_source: bool = False  # first remove the source's parsed rows (reparse)
    status: RunStatus | None = None  # the status to record when the load succeeds (default: by counts)
    degraded: str | None = None  # a drift guard's reason (pages missing): the load is ``partial`` with it
    # makes every payload of ``entries`` durable before a fetch row naming it commits (a raw store
    # writing a pack, see RawStore.packing); on a write error it drops the entries whose bytes were lost
    settle: Callable[[], None] | None = None
    # ``items()`` gives the whole stream again on every call: a load that ran out of its memory
    # budget may then run once more without it
    replayable: bool = False


def register_source(con: duckdb.DuckDBPyConnection, row: SourceRow) -> None:
    """The source's row, written when it is new or its description changed (an unchanged row is
    not rewritten: every run registers its source, and a rewrite is work for the next checkpoint)."""
    stored = con.execute(
        "SELECT name, kind, tier, organisation, homepage FROM source WHERE source_key = ?", [row.source_key]
    ).fetchall()
    if stored == [(row.name, row.kind, row.tier, row.organisation, row.homepage)]:
        return
    con.execute(
        "INSERT INTO source (source_key, name, kind, tier, organisation, homepage) VALUES (?, ?, ?, ?, ?, ?)"
        " ON CONFLICT (source_key) DO UPDATE SET name = excluded.name, kind = excluded.kind,"
        " tier = excluded.tier, organisation = excluded.organisation, homepage = excluded.homepage",
        [row.source_key, row.name, row.kind, row.tier, row.organisation, row.homepage],
    )


def decide_views_after(wh: Warehouse, results: list[RunResult]) -> None:
    """After a command of several runs (a refresh, an import of several collections): the view
    decisions, once, attributed to the last run that loaded and counted in its result."""
    loaded = [r for r in results if r.status not in ("failed", "unchanged", "skipped")]
    if loaded:
        loaded[-1].decisions = {**loaded[-1].decisions, **record_view_decisions(wh, loaded[-1].run_id)}


def record_view_decisions(wh: Warehouse, run_id: str, *, budget: int = STEP_BUDGET_BYTES) -> dict[str, int]:
    """The conflict and canonical-metric decisions of the warehouse as it now stands, in their own
    transaction, attributed to ``run_id`` (the last run of a refresh or of an import of several
    collections).

    They read every current score, so DuckDB gets ``budget`` bytes beyond what it holds and spills
    past that (:mod:`evalhouse.warehouse.memory_budget`). Should a step need more than it can
    spill, the transaction rolls back and runs again without the budget, and stderr says so; should
    that fail too (a low ``$EVALHOUSE_MEMORY_LIMIT``), :class:`RunFailed` says what to raise."""
    try:
        with spilling_beyond(wh.con, budget) as held, wh.transaction() as con:
            decided = record_decisions(con, run_id, views=True)
            held.lift()  # commit with the configured limit (see Budget)
            return decided
    except duckdb.OutOfMemoryException as exc:
        sys.stderr.write(
            f"the conflict decisions needed more than {budget / 2**20:,.0f} MB beyond what DuckDB held "
            f"({str(exc).splitlines()[0]}); recorded again without that budget\n"
        )
    try:
        with wh.transaction() as con:
            return record_decisions(con, run_id, views=True)
    except duckdb.OutOfMemoryException as exc:
        limit = wh.scalar("SELECT current_setting('memory_limit')")
        raise RunFailed(
            f"the runs are loaded, but their conflict and canonical-metric decisions need more memory than "
            f"DuckDB may use here ({limit}: {str(exc).splitlines()[0]}); raise ${ENV_MEMORY}: the next run "
            "that loads anything records them"
        ) from exc


def record_skipped(con: duckdb.DuckDBPyConnection, run_id: str, skipped: int) -> None:
    """One summary decision for the files a run did not read again (their bytes were loaded before;
    the run's details count them as ``files_unchanged``)."""
    if skipped:
        insert_rows(
            con,
            "curation_decision",
            [
                {
                    "kind": "unchanged_files_skipped",
                    "rule": "raw sha256 already loaded by this source: skipped before parsing",
                    "subject": json.dumps({"run_id": run_id}),
                    "detail": json.dumps({"files": skipped}),
                    "run_id": run_id,
                }
            ],
        )


def record_fetches(con: duckdb.DuckDBPyConnection, entries: Iterable[RawEntry], run_id: str) -> None:
    rows = [{**entry.as_row(), "run_id": run_id} for entry in entries]
    for row in rows:  # the store's callers redact already; a row is never the place a secret survives
        row.update({k: redact_stored(row[k]) for k in ("url", "label", "request_params") if row.get(k)})
    insert_rows(con, "raw_snapshot", rows)


def records_fingerprint(fingerprints: Iterable[str]) -> str:
    """One hash for a run's parsed content: equal across two nights iff the records are equal."""
    return hashlib.sha256("\n".join(sorted(fingerprints)).encode()).hexdigest()


def payload_digest(entries: list[RawEntry]) -> str:
    shas = sorted(e.sha256 for e in entries)
    return shas[0] if len(shas) == 1 else hashlib.sha256("\n".join(shas).encode()).hexdigest()


def _insert_run(
    con: duckdb.DuckDBPyConnection, ctx: RunContext, result: RunResult, records_fp: str | None, details: dict[str, Any]
) -> None:
    r = result.report
    counts = result.counts
    # An error quotes URLs (and a library may quote a password without its URL): what is stored and
    # printed is redacted, scrubbing every secret the run's URLs carry wherever it reappears.
    secrets = url_secrets([details, result.error])
    result.error = redact_stored(result.error, secrets)
    row = {
        "run_id": result.run_id,
        "source_key": result.source_key,
        "trigger": ctx.trigger,
        "started_at": ctx.started_at,
        "finished_at": result.finished_at or datetime.now(UTC),
        "status": result.status,
        "n_read": counts["read"],
        "n_loaded": counts["loaded"],
        "n_quarantined": counts["quarantined"],
        "n_duplicate": counts["duplicate"],
        "n_scores": r.scores_loaded,
        "error": result.error,
        "duration_s": result.duration_s,
        "payload_sha256": result.payload_sha256,
        "records_fingerprint": records_fp,
        "parser_version": ctx.parser_version,
        "registry_version": ctx.registry.version,
        "evalhouse_version": __version__,
        "details": json.dumps(redact_stored(details, secrets), default=str),
    }
    insert_rows(con, "ingest_run", [row])


def _records_only(items: Iterable[ParseItem | ItemBatch], batches: list[ItemBatch]) -> Iterator[ParseItem]:
    """The records and failures of ``items``; item-level batches are set aside in ``batches``."""
    for item in items:
        if isinstance(item, ItemBatch):
            batches.append(item)
        else:
            yield item


def run_load(wh: Warehouse, ctx: RunContext, plan: LoadPlan) -> RunResult:
    """Load ``plan.items()`` for one source in one transaction and write the run row either way.

    ``items`` is a thunk so a parser exception (a whole payload unreadable) is caught here and
    turned into a ``failed`` run that keeps the fetch rows. ``ctx.after_load`` runs inside the
    same transaction (the expectations checkpoint): raising there rolls the load back.

    DuckDB loads within ``ctx.memory_budget`` bytes beyond what its indexes hold
    (:func:`~evalhouse.warehouse.memory_budget.loading_within`): a collection's uncommitted rows
    spill to ``<db>.tmp`` instead of growing with the collection. Should the load need more than
    it can spill, it rolls back and, when ``plan.replayable``, runs once more without the budget
    (stderr says so); otherwise the run fails with DuckDB's reason.
    """
    result = RunResult(ctx.run_id, ctx.source.source_key, "failed")
    try:
        try:
            with _within(wh, ctx.memory_budget) as budget:
                _load_once(wh, ctx, plan, result, budget)
        except (duckdb.Error, CommitFailed) as exc:
            short = _out_of_memory(exc)
            if short is None or not plan.replayable or ctx.memory_budget is None:
                raise
            sys.stderr.write(
                f"{ctx.source.source_key}: the load needed more than {ctx.memory_budget / 2**20:,.0f} MB beyond "
                f"what DuckDB's indexes held ({str(short).splitlines()[0]}); loading it again without that budget\n"
            )
            result = RunResult(ctx.run_id, ctx.source.source_key, "failed", started=result.started)
            _load_once(wh, ctx, plan, result, None)
        return result
    except Exception as exc:  # noqa: BLE001 - any failure of one source becomes its failed run
        rolled_back = result.report.as_dict()
        if plan.settle is not None:  # the failed run keeps only fetches whose bytes are stored
            try:
                plan.settle()
            except RawStoreError as write_error:  # the run failed anyway; say both
                exc = RawStoreError(f"{exc}; and {write_error}")
        return record_run(
            wh, ctx.with_details(rolled_back=rolled_back), "failed", plan.entries, f"{type(exc).__name__}: {exc}"
        )


def _within(wh: Warehouse, budget: int | None) -> AbstractContextManager[Budget | None]:
    return nullcontext() if budget is None else loading_within(wh.con, budget)


def _out_of_memory(exc: BaseException) -> BaseException | None:
    """The out-of-memory error behind ``exc``: a statement after it fails with "transaction is
    aborted", and that is the error that propagates; a commit out of memory is a
    :class:`CommitFailed` (the warehouse reopened the invalidated database)."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, duckdb.OutOfMemoryException) or (isinstance(seen, CommitFailed) and seen.out_of_memory):
            return seen
        seen = seen.__cause__ or seen.__context__
    return None


def _load_once(wh: Warehouse, ctx: RunContext, plan: LoadPlan, result: RunResult, budget: Budget | None) -> None:
    """One attempt of :func:`run_load`'s transaction, within ``budget`` until its commit; fills ``result``."""
    # the loader (pydantic, the EEE models, name resolution) and the registries load with the first load
    from evalhouse.warehouse.load.records import DEFAULT_BATCH_SIZE, LoadContext, Loader  # noqa: PLC0415
    from evalhouse.warehouse.registry_sync import sync_registry  # noqa: PLC0415

    registry = resolve(ctx.registry)
    with wh.transaction() as con:
        register_source(con, ctx.source)
        sync_registry(con, registry)
        if plan.replace_source:
            remove_parsed_rows(con, ctx.source.source_key)
        loader = Loader(
            con,
            LoadContext(
                source_key=ctx.source.source_key,
                run_id=ctx.run_id,
                registry=registry,
                collection=ctx.collection,
                allow_provisional=ctx.allow_provisional,
                global_aliases=ctx.global_aliases,
                declared_benchmarks=ctx.declared_benchmarks,
                identity_from=ctx.identity_from,
                batch_size=ctx.batch_size or DEFAULT_BATCH_SIZE,
                between_batches=budget.keep if budget else None,
            ),
        )
        batches: list[ItemBatch] = []
        # items stream through the loader; fetch rows are known once they are all read
        result.report = loader.load(_records_only(plan.items(), batches), raw_sha256=plan.payload_sha256 or "none")
        if plan.settle is not None:
            plan.settle()
        record_fetches(con, plan.entries, ctx.run_id)
        record_skipped(con, ctx.run_id, int(ctx.details.get("files_unchanged") or 0))
        digest = plan.payload_sha256 or (payload_digest(plan.entries) if plan.entries else None)
        result.payload_sha256 = digest
        if batches:
            item_loader = ItemLoader(con, source_key=ctx.source.source_key, run_id=ctx.run_id)
            result.items = item_loader.load(batches, raw_sha256=digest or "none")
        result.status = _status(result.report, result.items)
        if result.status == "failed":
            result.error = _why_nothing_loaded(result.report, result.items)
        else:
            result.decisions = record_decisions(con, ctx.run_id, views=ctx.view_decisions)
            result.status = plan.status or result.status
            if plan.degraded is not None:
                result.status, result.error = "partial", plan.degraded
        result.duration_s = time.perf_counter() - result.started
        if ctx.after_load is not None:
            ctx.after_load(con, ctx.run_id)
        fp = plan.records_fp or (
            records_fingerprint(result.report.fingerprints) if result.report.fingerprints else None
        )
        items_details = {"items": result.items.as_dict()} if result.items else {}
        _insert_run(con, ctx, result, fp, {**ctx.details, "load": result.report.as_dict(), **items_details})
        if budget is not None:
            budget.for_commit()  # bounded too; one out of memory is a CommitFailed, replayed without it


#: Tables holding what a parser produced for a source (raw bytes and run history are not here).
PARSED_TABLES = (
    "score_value",
    "evaluation",
    "model_attribute",
    "release_date_evidence",
    "quarantine",
    *ITEM_PARSED_TABLES,
)


def remove_parsed_rows(con: duckdb.DuckDBPyConnection, source_key: str) -> None:
    """Remove what ``source_key``'s parsers produced, and the canonical groups and setups no score
    names any more (they are content-addressed: a load that needs one again adds it again)."""
    for table in PARSED_TABLES:
        con.execute(f"DELETE FROM {table} WHERE source_key = ?", [source_key])
    con.execute("DELETE FROM score_group WHERE group_id NOT IN (SELECT group_id FROM score_value)")
    con.execute("DELETE FROM score_setup WHERE setup_id NOT IN (SELECT setup_id FROM score_value)")


def record_run(  # noqa: PLR0913 - finished_at is keyword-only, for runs recorded after the fact
    wh: Warehouse,
    ctx: RunContext,
    status: RunStatus,
    entries: list[RawEntry],
    error: str | None = None,
    *,
    finished_at: datetime | None = None,
) -> RunResult:
    """Record a run that loaded nothing (failed before loading, or unchanged) with its fetches.

    ``finished_at``: when the run's outcome was known, if it is recorded later (a refresh records
    the quiet sources of a night together, after fetching the next ones); default now."""
    finished_at = finished_at or datetime.now(UTC)
    result = RunResult(
        ctx.run_id,
        ctx.source.source_key,
        status,
        error=error,
        duration_s=(finished_at - ctx.started_at).total_seconds(),
        finished_at=finished_at,
        payload_sha256=payload_digest(entries) if entries else None,
    )
    with wh.transaction() as con:
        register_source(con, ctx.source)
        record_fetches(con, entries, ctx.run_id)
        record_skipped(con, ctx.run_id, int(ctx.details.get("files_unchanged") or 0))
        _insert_run(con, ctx, result, None, ctx.details)
    return result


def _why_nothing_loaded(report: LoadReport, items: ItemLoadReport | None = None) -> str:
    if items is not None and items.responses_read:
        reasons = ", ".join(f"{n} × {r}" for r, n in items.reasons.most_common(3))
        return f"nothing loaded: all {items.responses_read} responses were quarantined ({reasons})"
    if report.records_read == 0 and report.parse_failures == 0:
        return "parse yielded zero records: a broken parser or payload, not an empty leaderboard"
    if report.records_read + report.parse_failures == 1 and report.first_reason:
        return f"nothing loaded: its one item was quarantined: {report.first_reason}"
    reasons = ", ".join(f"{n} × {r}" for r, n in report.reasons.most_common(3))
    return f"nothing loaded: all {report.records_read + report.parse_failures} items were quarantined ({reasons})"


def _status(report: LoadReport, items: ItemLoadReport | None = None) -> RunStatus:
    i = items or ItemLoadReport()
    if report.records_read == 0 and report.parse_failures == 0 and i.responses_read == 0:
        return "failed"
    nothing = report.records_loaded == 0 and report.records_duplicate == 0
    if nothing and i.responses_loaded == 0 and i.responses_duplicate == 0:
        return "failed"
    if report.quarantined or i.responses_quarantined:
        return "partial"
    return "completed"


@dataclass(frozen=True)
class LastRun:
    """The newest run of a source that loaded rows: what tonight's payload is compared against."""

    run_id: str
    payload_sha256: str | None
    records_fingerprint: str | None
    registry_version: str | None
    finished_at: datetime | None


def last_loading_run(con: duckdb.DuckDBPyConnection, source_key: str, label: str | None = None) -> LastRun | None:
    """The newest run of ``source_key`` that loaded data (completed, partial or recanonicalised);
    with ``label``, the newest such run that read a payload of that name (one file of a source
    published as several, such as one CSV of Epoch's hub, is compared with the same file)."""
    same_payload = " AND run_id IN (SELECT run_id FROM raw_snapshot WHERE source_key = ? AND label = ?)"
    row = first_row(
        con,
        "SELECT run_id, payload_sha256, records_fingerprint, registry_version, finished_at FROM ingest_run"
        " WHERE source_key = ? AND status IN ('completed', 'partial', 'recanonicalised')"
        + (same_payload if label is not None else "")
        + " ORDER BY finished_at DESC LIMIT 1",
        [source_key] + ([source_key, label] if label is not None else []),
    )
    return None if row is None else LastRun(*row)


def loaded_payloads(con: duckdb.DuckDBPyConnection, source_key: str) -> frozenset[str]:
    """Hashes of every payload of ``source_key`` already accounted for: read by a run that loaded
    rows, or quarantined (a run that refused everything still committed its quarantine rows; a
    rolled-back run's payloads are not here, so they are read again)."""
    found = con.execute(
        "SELECT DISTINCT r.sha256 FROM raw_snapshot r JOIN ingest_run i USING (run_id)"
        " WHERE r.source_key = $1 AND i.status IN ('completed', 'partial', 'recanonicalised')"
        " UNION SELECT DISTINCT raw_sha256 FROM quarantine WHERE source_key = $1 AND raw_sha256 IS NOT NULL",
        [source_key],
    ).fetchall()
    return frozenset(sha for (sha,) in found)


def checkpoint(skip: bool = False) -> AfterLoad | None:
    """The expectations checkpoint to run inside each load (None when ``skip``): the suites as
    set-based SQL (:mod:`evalhouse.warehouse.checks.sql`), rolling the load back on failure."""
    return None if skip else _checkpoint_after_load


def _checkpoint_after_load(con: duckdb.DuckDBPyConnection, run_id: str) -> None:
    """:func:`~evalhouse.warehouse.checks.sql.checkpoint_after_load`, imported when a load
    first runs it (its suites and the canonicaliser's constants; a quiet night loads nothing)."""
    from evalhouse.warehouse.checks.sql import checkpoint_after_load  # noqa: PLC0415 - loads only

    checkpoint_after_load(con, run_id)
