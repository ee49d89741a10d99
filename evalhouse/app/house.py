"""A house: one warehouse file and everything around it — its raw store, the registries it
canonicalises with, the expectations checkpoint after every load, the HTTP settings of its
fetches, its snapshots, reports and great-expectations project — behind one object.

Every ``evalhouse`` command is one call of a :class:`House` method (or of a function of
:mod:`evalhouse.app` that needs no warehouse) plus printing, so a script can do anything the
command line does::

    from evalhouse import House

    house = House.open("warehouse.duckdb")
    night = house.refresh(mirror="build/mirror")      # RefreshResult: runs + the run report
    house.stats()["scores"]
    house.audit_score("3f9a1c")                       # a score's chain to its bytes
    snap = house.create_snapshot("snapshots/today")   # a frozen, content-hashed export

A house holds no connection: each call opens the warehouse for what it does (read-only for a
read, the writer lock for a load) and closes it, as the commands do, so a notebook holding a
house never blocks the nightly job. Errors are :mod:`evalhouse.errors` classes: an
:class:`~evalhouse.errors.InputError` for bad input (the commands' exit 2), a
:class:`~evalhouse.errors.RunFailed` when the work could not be done (exit 1). A load that ran
and failed is a result (``status == "failed"``), not an exception, as it is a row in the ledger.

The lower layers load when a method first needs them: ``import evalhouse`` and
``House.open(...)`` cost nothing, and ``evalhouse stats`` starts without pandas or scipy.
"""

from __future__ import annotations

import inspect
import os
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from evalhouse.app import catalog
from evalhouse.app.results import Frozen, Migrated, QueryRows, RefreshResult, Report, SiteResult, Validation
from evalhouse.config import raw_store_path, resolve_db_path, serial_blas
from evalhouse.errors import InputError

if TYPE_CHECKING:
    import datetime as dt

    from evalhouse.analytics.runs import Outcome
    from evalhouse.curation.packaged_registry import PackagedRegistry
    from evalhouse.curation.registry import Registry
    from evalhouse.ingest.http import HttpClient
    from evalhouse.pipeline.boards import Board
    from evalhouse.pipeline.import_eee import ImportSummary
    from evalhouse.pipeline.refresh import RefreshOptions
    from evalhouse.warehouse.audit import RawVerification
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.eee_export import ExportSummary
    from evalhouse.warehouse.load.ledger import AfterLoad, RunResult
    from evalhouse.warehouse.raw.store import RawStore
    from evalhouse.warehouse.rederive import Rederived
    from evalhouse.warehouse.snapshot.freeze import CreatedSnapshot
    from evalhouse.warehouse.snapshot.verify import VerifyReport
    from evalhouse.warehouse.sql_guard import GuardedResult

PathLike = str | os.PathLike[str]

#: Seconds one source may spend fetching (every request, retry and byte; a crawl too).
DEFAULT_DEADLINE_S = 300.0
#: Rows a query returns when no limit is given.
DEFAULT_ROW_LIMIT = 10_000

#: How many pins of the live warehouse stay in ``<db stem>.snapshots/`` (the most recently used).
KEEP_PINS = 5


@dataclass(frozen=True)
class HttpSettings:
    """How a house's fetches go: where from, and how patient they are.

    ``mirror``: a folder or base URL replaying pinned payloads instead of the live hosts (a call's
    own ``mirror`` wins). ``deadline``: seconds one source may spend fetching, every request,
    retry and byte included (a request alone gets at most 120 s of it). ``env``: the environment
    credentials are read from (default ``os.environ``). ``policy``: any other field of
    :class:`evalhouse.ingest.http.HttpPolicy` (``max_retries``, ``max_bytes``, ``user_agent`` ...).
    """

    mirror: str | None = None
    deadline: float = DEFAULT_DEADLINE_S
    env: Mapping[str, str] | None = None
    policy: Mapping[str, Any] = field(default_factory=dict)


class House:
    """A warehouse file and everything around it (see the module's documentation)."""

    def __init__(
        self,
        db: PathLike | None = None,
        *,
        raw_store: PathLike | None = None,
        registry: Registry | PackagedRegistry | None = None,
        http: HttpSettings | None = None,
    ) -> None:
        self.path: Path = resolve_db_path(db)
        self.raw_store_path: Path = Path(raw_store).expanduser().resolve() if raw_store else raw_store_path(self.path)
        self._registry = registry
        self.http = http or HttpSettings()

    @classmethod
    def open(
        cls,
        db: PathLike | None = None,
        *,
        raw_store: PathLike | None = None,
        registry: Registry | PackagedRegistry | None = None,
        http: HttpSettings | None = None,
    ) -> House:
        """The house of the warehouse at ``db`` (default ``$EVALHOUSE_DB``, else
        ``./warehouse.duckdb``); nothing is opened until a call needs it, and a missing file is
        created by the first call that writes. ``raw_store``: default ``$EVALHOUSE_RAW``, else
        ``<db stem>.raw/`` beside it. ``registry``: the registries to canonicalise with (default:
        the packaged YAML). ``http``: :class:`HttpSettings`."""
        return cls(db, raw_store=raw_store, registry=registry, http=http)

    def __repr__(self) -> str:
        return f"House({str(self.path)!r})"

    # -- what the house owns ----------------------------------------------------------------

    @property
    def exists(self) -> bool:
        """Whether the warehouse file exists (a new house has none until its first write)."""
        return self.path.exists()

    def connect(self, *, read_only: bool = True) -> Warehouse:
        """The warehouse, open (use as a context manager; the DuckDB connection is ``.con``).

        Read-only by default: readers never take the writer lock, and wait up to ``--wait``
        seconds while a writer loads. ``read_only=False`` takes the writer lock and migrates."""
        from evalhouse.warehouse.db import Warehouse

        return Warehouse.open(self.path, read_only=read_only)

    def raw_store(self) -> RawStore:
        """The content-addressed raw store of the warehouse's fetched bytes."""
        from evalhouse.warehouse.raw.store import RawStore

        return RawStore(self.raw_store_path)

    @property
    def registry(self) -> Registry | PackagedRegistry:
        """The registries loads canonicalise with (the packaged ones unless the house was given others)."""
        if self._registry is not None:
            return self._registry
        from evalhouse.curation.packaged_registry import PACKAGED

        return PACKAGED

    def _loaded_registry(self) -> Registry:
        from evalhouse.curation.packaged_registry import resolve

        return resolve(self.registry)

    @staticmethod
    def checkpoint(validate: bool = True) -> AfterLoad | None:
        """The expectations checkpoint each load runs inside its transaction (None: ``validate=False``)."""
        from evalhouse.warehouse.load.ledger import checkpoint

        return checkpoint(skip=not validate)

    def _client_factory(self, deadline: float) -> Callable[[str | None], HttpClient]:
        from evalhouse.ingest.http import DEFAULT_DEADLINE, HttpClient

        policy = {"source_deadline": deadline, "deadline": min(DEFAULT_DEADLINE, deadline), **self.http.policy}
        return lambda mirror: HttpClient(mirror=mirror, **policy)

    def _options(
        self,
        *,
        mirror: str | None,
        validate: bool,
        deadline: float | None = None,
        accept_drift: Collection[str] = (),
        bound_crawls: bool = True,
    ) -> RefreshOptions:
        """How a load fetches; ``bound_crawls``: a crawl stops at the deadline too (a refresh's
        crawls do; an ``ingest`` crawl runs to its end, as the command's always has)."""
        from evalhouse.pipeline.refresh import RefreshOptions

        deadline = self.http.deadline if deadline is None else deadline
        if deadline <= 0:
            raise InputError(f"a deadline is a positive number of seconds, not {deadline!r}")
        return RefreshOptions(
            mirror=mirror if mirror is not None else self.http.mirror,
            env=self.http.env,
            client_factory=self._client_factory(deadline),
            crawl_settings={"CLOSESPIDER_TIMEOUT": deadline} if bound_crawls else None,
            after_load=self.checkpoint(validate),
            registry=self.registry,
            accept_drift=frozenset(accept_drift),
        )

    def _reading(self) -> Warehouse:
        """The warehouse read-only, or a clear error when there is none."""
        return self.connect(read_only=True)

    # -- loading ----------------------------------------------------------------------------

    def migrate(self) -> Migrated:
        """Create the warehouse file, or bring it to the current schema (idempotent)."""
        with self.connect(read_only=False) as wh:
            applied = wh.migrate() or []
            return Migrated(self.path, wh.schema_version(), applied)

    def refresh(
        self,
        sources: Iterable[str] | None = None,
        *,
        mirror: str | None = None,
        deadline: float | None = None,
        accept_drift: Iterable[str] = (),
        validate: bool = True,
    ) -> RefreshResult:
        """The nightly refresh of ``sources`` (default: every scheduled source verified on a
        recorded real payload; the unverified ones end ``skipped``).

        Per source: plan, fetch, keep the bytes, parse, judge with the drift guards, load in one
        transaction, one ``ingest_run`` row. ``mirror`` replays pinned payloads (a folder or base
        URL); ``deadline`` bounds one source's fetching (default the house's, 300 s);
        ``accept_drift`` names sources whose row-drop guard a person waives for this run
        (recorded as a decision); ``validate=False`` skips the checkpoint. The run report (what
        changed) is written to ``<db stem>.reports/`` and returned with the runs. An unknown
        source key is an :class:`~evalhouse.errors.InputError` naming the closest ones.
        """
        serial_blas()  # a load: no linear algebra
        from evalhouse.common.redaction import redact_url
        from evalhouse.ingest.catalog import get_source
        from evalhouse.pipeline.boards import BoardReader
        from evalhouse.pipeline.changes import reports_dir, run_report, write_report
        from evalhouse.pipeline.refresh import refresh

        keys = [get_source(k).SOURCE.key for k in sources] if sources else None
        accepted = {get_source(k).SOURCE.key for k in accept_drift}
        boards: dict[str, Board] = {}  # what each run parsed, for the report (not parsed a second time)
        options = self._options(mirror=mirror, validate=validate, deadline=deadline, accept_drift=accepted)
        options = replace(options, boards=boards)
        store = self.raw_store()
        with self.connect(read_only=False) as wh:
            runs = refresh(wh, store, keys, options)
        # the baselines' boards are read again with the writer's lock released, as any reader reads them
        with self._reading() as wh:
            report = run_report(wh, BoardReader(store, boards), runs, db_path=self.path)
        written = write_report(reports_dir(self.path), report)
        return RefreshResult(self.path, options.mirror and redact_url(options.mirror), runs, report, written)

    def ingest(
        self,
        source: str,
        locations: Iterable[str] = (),
        *,
        targets: PathLike | Iterable[str] | None = None,
        named: bool = False,
        mirror: str | None = None,
        accept_drift: bool = False,
        validate: bool = True,
    ) -> RunResult:
        """Run ``source``'s parser over pinned payloads, or fetch what ids name: one run, recorded
        like any fetch.

        ``locations``: local files or folders, URLs, or ids the source fetches (a Hub repo id, an
        arXiv id). ``targets``: more ids, as a list or a file of one id per line (``#`` comments).
        ``named``: also the models the warehouse's other sources name (model cards). One
        location alone is one payload; several, ``targets`` or ``named`` make one run in which a
        failed target is quarantined and the others load. A payload is judged by the refresh's
        drift guards; ``accept_drift`` waives what they refuse for this run (a decision).
        """
        serial_blas()  # a load: no linear algebra
        from evalhouse.pipeline.ingest_file import ingest_file, ingest_paths
        from evalhouse.pipeline.refresh import resolve_key
        from evalhouse.pipeline.targets import named_models, read_targets

        key = resolve_key(source)
        given = [str(x) for x in locations]
        wanted = [*given, *read_targets(targets)]
        waived = {key} if accept_drift else ()
        options = self._options(mirror=mirror, validate=validate, accept_drift=waived, bound_crawls=False)
        store = self.raw_store()
        with self.connect(read_only=False) as wh:
            if named:
                wanted += named_models(wh, key)
            if not wanted:
                raise InputError("nothing to ingest: give a file, URL or id, --targets FILE or --named")
            if len(wanted) == 1 and targets is None and not named:
                return ingest_file(wh, store, key, wanted[0], options)
            return ingest_paths(wh, store, key, wanted, options)

    def reparse(self, source: str, *, validate: bool = True) -> RunResult:
        """Rebuild ``source``'s rows from the raw store with the current parser and registries
        (no fetching): one run that replaces them in one transaction."""
        serial_blas()  # a load: no linear algebra
        from evalhouse.pipeline.refresh import resolve_key
        from evalhouse.pipeline.reparse import reparse

        key = resolve_key(source)
        with self.connect(read_only=False) as wh:
            return reparse(wh, self.raw_store(), key, after_load=self.checkpoint(validate), registry=self._registry)

    def import_eee(self, directory: PathLike, *, batch_size: int | None = None, validate: bool = True) -> ImportSummary:
        """Load an Every Eval Ever datastore tree (``data/<collection>/<developer>/<model>/<uuid>.json``
        and samples): one run per collection in one transaction; legacy 0.2.x records migrated;
        files already loaded skipped unread; invalid files quarantined with the reason.
        ``batch_size``: records per load batch at most (default 4000)."""
        serial_blas()  # a load: no linear algebra
        from evalhouse.pipeline.import_eee import import_tree
        from evalhouse.warehouse.load.records import DEFAULT_BATCH_SIZE

        registry = self._loaded_registry() if self._registry is not None else None
        with self.connect(read_only=False) as wh:
            return import_tree(
                wh,
                Path(directory),
                self.raw_store(),
                after_load=self.checkpoint(validate),
                registry=registry,
                batch_size=batch_size or DEFAULT_BATCH_SIZE,
            )

    def export_eee(self, directory: PathLike) -> ExportSummary:
        """Write the warehouse's records as an EEE datastore tree under ``directory/data`` (built
        beside it and moved into place whole). Records the layout cannot hold are listed in
        ``skipped`` with the reason; they stay in the warehouse."""
        from evalhouse.warehouse.eee_export import export_folder

        with self._reading() as wh:
            return export_folder(wh, Path(directory), self.raw_store())

    def export_mirror(self, directory: PathLike) -> dict[str, Path]:
        """Write the latest stored payload of every fetched URL as a mirror tree that
        ``refresh(mirror=directory)`` replays: ``{url: file}``."""
        from evalhouse.ingest.mirror_export import export_mirror

        with self._reading() as wh:
            return export_mirror(wh, self.raw_store(), Path(directory))

    def validate(self, *, docs: bool = False) -> Validation:
        """Run the expectations suites (great-expectations) on the whole warehouse and store their
        results; ``docs`` also builds GX Data Docs in the project folder (``<db stem>.gx/``)."""
        from evalhouse.warehouse.checks.suites import build_data_docs, prepare, project_dir, run_checkpoint

        project = project_dir(self.path)
        prepare(project)  # import great-expectations before taking the writer lock
        with self.connect(read_only=False) as wh, wh.transaction() as con:
            summary = run_checkpoint(con, project=project)
        return Validation(summary, project, build_data_docs(project) if docs else None)

    # -- looking --------------------------------------------------------------------------------

    def stats(self) -> Report:
        """Counts of sources, evaluations, scores, models, benchmarks and quarantined rows, per
        source with its last run, and the cells where sources meet (per pair of sources)."""
        from evalhouse.warehouse.stats import stats

        with self._reading() as wh:
            return Report(stats(wh))

    def quarantine(self, *, source: str | None = None, stage: str | None = None, limit: int = 50) -> Report:
        """What was refused: ``{"rows": [...], "counts": [...]}`` with locators, raw sha256 and reasons."""
        from evalhouse.warehouse.load.quarantine import quarantine_report

        with self._reading() as wh:
            return Report(quarantine_report(wh.con, source=source, stage=stage, limit=limit))

    def audit_score(self, score_id: str | int) -> Report:
        """One score's chain to its bytes (by id, or 6+ hex digits of its fingerprint): evaluation,
        raw snapshot, source, canonicalisation steps, decisions, its cell's candidates and rule."""
        from evalhouse.warehouse.audit import score_chain

        with self._reading() as wh:
            return Report(score_chain(wh.con, score_id, self.raw_store()))

    def audit_model(self, name: str, *, benchmark: str | None = None) -> Report:
        """A model named any way a user would: its scores with their chains summarised, and its
        release-date evidence (``benchmark``: only that one)."""
        from evalhouse.warehouse.audit import model_report

        with self._reading() as wh:
            return Report(model_report(wh.con, name, benchmark))

    def verify_raw(self) -> RawVerification:
        """Re-hash every raw store object and check every payload the warehouse refers to is present
        (``.ok``; ``.corrupt`` and ``.missing`` name what is not)."""
        from evalhouse.warehouse.audit import verify_raw

        with self._reading() as wh:
            return verify_raw(wh.con, self.raw_store())

    def conflicts(
        self,
        *,
        benchmark: str | None = None,
        model: str | None = None,
        disagreeing: bool = False,
        limit: int = 50,
    ) -> Report:
        """Cells more than one source (or run) gives a value for: every candidate, which one the
        policy uses and why, the spread; with ``model``, the near misses too."""
        from evalhouse.warehouse.audit import conflicts

        with self._reading() as wh:
            return Report(conflicts(wh.con, benchmark=benchmark, model=model, disagreeing=disagreeing, limit=limit))

    def changes(
        self, *, since: str | None = None, tolerance: float = 0.001, sources: Iterable[str] | None = None
    ) -> Report:
        """What changed per source since a run id (or prefix) or a UTC date/time — default: since
        each source's previous refresh: new and vanished models and benchmarks, values that moved
        beyond ``tolerance`` (a share of the magnitude), runs that failed."""
        from evalhouse.pipeline.boards import BoardReader
        from evalhouse.pipeline.changes import changes, parse_since
        from evalhouse.pipeline.refresh import resolve_key

        keys = [resolve_key(k) for k in sources] if sources else None
        with self._reading() as wh:
            read = BoardReader(self.raw_store())
            return Report(changes(wh, read, parse_since(wh.con, since), tolerance=tolerance, sources=keys))

    def last_report(self) -> Report | None:
        """The run report the last refresh wrote (None when no refresh wrote one)."""
        from evalhouse.pipeline.changes import read_latest

        found = read_latest(self.path)
        return None if found is None else Report(found)

    @contextmanager
    def query(
        self,
        sql: str,
        *,
        snapshot: PathLike | None = None,
        expect_id: str | None = None,
        limit: int | None = DEFAULT_ROW_LIMIT,
        timeout: float | None = None,
        memory_limit: str | None = None,
        temp_limit: str | None = None,
    ) -> Iterator[GuardedResult]:
        """One read-only query, its rows streamed (``.rows()``, ``.records()``) while the block runs.

        On the live warehouse (waiting for a writer's load) or a verified ``snapshot``. Writes,
        ``COPY``, ``ATTACH``, settings and files outside the warehouse or snapshot are refused
        (:class:`~evalhouse.errors.InputError`); ``timeout`` seconds, ``memory_limit`` and
        ``temp_limit`` bound it (default ``$EVALHOUSE_SQL_*``, else 120 s, 2GB, 4GB); ``limit``
        rows at most (None: all)."""
        from evalhouse.warehouse.sql_guard import QueryBounds, guarded_query

        bounds = QueryBounds.resolve(timeout, memory_limit, temp_limit)
        target = {"db": self.path, "raw_store": self.raw_store_path} if snapshot is None else {"snapshot": snapshot}
        with guarded_query(sql, **target, expect_id=expect_id, limit=limit, bounds=bounds) as result:
            yield result

    def sql(
        self,
        sql: str,
        *,
        snapshot: PathLike | None = None,
        expect_id: str | None = None,
        limit: int | None = DEFAULT_ROW_LIMIT,
        timeout: float | None = None,
        memory_limit: str | None = None,
        temp_limit: str | None = None,
    ) -> QueryRows:
        """:meth:`query`, its rows fetched whole (``truncated``: more than ``limit`` exist)."""
        bounds = {"timeout": timeout, "memory_limit": memory_limit, "temp_limit": temp_limit}
        with self.query(sql, snapshot=snapshot, expect_id=expect_id, limit=limit, **bounds) as result:
            rows = list(result.rows())
            return QueryRows(result.columns, result.types, rows, result.truncated, result.limit)

    # -- curation -------------------------------------------------------------------------------

    def release_dates(self, model: str) -> list[dict[str, Any]]:
        """Release-date evidence of a model and the date chosen by precedence: the configuration
        ``model`` names first, then its base model."""
        from evalhouse.warehouse import release_dates

        with self._reading() as wh:
            return release_dates.dates_report(wh.con, model)

    def correct_release_date(
        self,
        model: str,
        correct: dt.date | str,
        *,
        reason: str,
        precision: str = "day",
        url: str | None = None,
    ) -> list[dict[str, Any]]:
        """Add a manual correction (a new evidence row, never an overwrite) of the configuration
        ``model`` names, else of its base model; returns :meth:`release_dates` after it."""
        import datetime as dt

        from evalhouse.warehouse import release_dates

        if precision not in ("day", "month", "year"):
            raise InputError(f"--precision must be day, month or year, not {precision!r}")
        if isinstance(correct, str):
            try:
                correct = dt.date.fromisoformat(correct)
            except ValueError:
                raise InputError(f"--correct {correct!r} is not a date YYYY-MM-DD") from None
        fix = release_dates.Correction(correct, reason=reason or "", precision=precision, url=url)  # type: ignore[arg-type]
        with self.connect(read_only=False) as wh:
            with wh.transaction() as con:
                release_dates.correct_model(con, model, fix)
            return release_dates.dates_report(wh.con, model)

    def release_date_conflicts(self) -> list[dict[str, Any]]:
        """Base models whose claims about one configuration (or itself) are more than a month apart."""
        from evalhouse.warehouse import release_dates

        with self._reading() as wh:
            return release_dates.conflicts(wh.con)

    def conflict_policy(self) -> Report:
        """The conflict policy the canonical view applies: ``{"policy", "updated_at", "reason"}``."""
        from evalhouse.warehouse.decisions import current_policy

        with self._reading() as wh:
            return Report(current_policy(wh.con))

    def set_conflict_policy(self, name: str, *, reason: str | None = None) -> Report:
        """Set the conflict policy (``prefer-independent``, ``prefer-first-party``, ``prefer-tier``,
        ``mean``, ``latest``), recorded with ``reason``; returns it as :meth:`conflict_policy` does."""
        from evalhouse.warehouse.decisions import current_policy, set_policy

        with self.connect(read_only=False) as wh:
            with wh.transaction() as con:
                set_policy(con, name, reason or "set from the command line")
            return Report(current_policy(wh.con))

    def rederive(self) -> Rederived:
        """Derive every stored score's configuration, benchmark and cell again under the current
        rules, in place and in one transaction; each change a curation decision."""
        from evalhouse.warehouse.rederive import rederive

        with self.connect(read_only=False) as wh, wh.transaction() as con:
            return rederive(con, self._loaded_registry(), cause="evalhouse curate rederive")

    # -- snapshots ------------------------------------------------------------------------------

    def create_snapshot(self, out_dir: PathLike, *, name: str | None = None, eee_tree: bool = False) -> CreatedSnapshot:
        """Freeze the warehouse into ``out_dir`` (new or empty): every table and the analysis views
        as Parquet, the records as EEE (``eee_tree``: the datastore layout), a content-hashed
        manifest whose hash is the id. The snapshot is recorded in the warehouse."""
        from evalhouse.warehouse.snapshot.freeze import create_snapshot

        if not self.exists:
            raise InputError(f"no warehouse at {self.path}: run 'evalhouse migrate' or 'evalhouse refresh' first")
        with self.connect(read_only=False) as wh:
            return create_snapshot(wh, Path(out_dir), self.raw_store(), name=name, eee_tree=eee_tree)

    def freeze(self, *, keep: int | None = KEEP_PINS) -> Frozen:
        """A snapshot of the warehouse as it stands, in ``<db stem>.snapshots/`` (an unchanged
        warehouse reuses the one it was frozen into before, without writing): what a report or a
        site is pinned to. The ``keep`` pins used most recently stay, older pin folders are
        removed (``None``: none is)."""
        from evalhouse.warehouse.snapshot.pin import pin_snapshot

        if not self.exists:
            raise InputError(f"no warehouse at {self.path}: give --db, --snapshot DIR, or load data first")
        with self.connect(read_only=False) as wh:
            pin = pin_snapshot(wh, self.raw_store(), keep=keep)
        return Frozen(pin.path, pin.created, pin.pruned)

    def verify_snapshot(self, directory: PathLike, *, expect_id: str | None = None) -> VerifyReport:
        """Re-hash every file of a snapshot against its manifest (``.ok``, ``.problems()``).

        ``expect_id``: the id an analysis recorded, or a prefix of 6+ hex digits that no other
        snapshot this warehouse recorded begins with (checked against them when the warehouse
        can be read; ``.notes`` says when it could not)."""
        from evalhouse.warehouse.snapshot.verify import verify_snapshot

        notes: list[str] = []
        known = self._recorded_snapshot_ids(notes) if expect_id else []
        report = verify_snapshot(directory, expect_id=expect_id, known_ids=known)
        report.notes.extend(notes)
        return report

    #: The snapshot functions that need no warehouse, here too (:mod:`evalhouse.app.catalog`).
    open_snapshot = staticmethod(catalog.open_snapshot)
    describe_snapshot = staticmethod(catalog.describe_snapshot)
    diff_snapshots = staticmethod(catalog.diff_snapshots)

    def _recorded_snapshot_ids(self, notes: list[str]) -> list[str]:
        from evalhouse.errors import WarehouseError
        from evalhouse.warehouse.snapshot.verify import recorded_snapshot_ids

        if not self.exists:
            return []
        try:
            with self._reading() as wh:
                return recorded_snapshot_ids(wh.con)
        except WarehouseError as exc:  # held by a writer, or not migrated: the manifest's own id decides
            notes.append(f"not checking --expect-id against {self.path}'s snapshots: {exc}")
            return []

    # -- the explorer and the analyses ----------------------------------------------------------

    def site(
        self,
        out_dir: PathLike,
        *,
        snapshot: PathLike | None = None,
        analyses: bool = True,
        record: bool = True,
        keep: int | None = KEEP_PINS,
    ) -> SiteResult:
        """Build the static explorer of ``snapshot`` (default: the warehouse frozen first, see
        :meth:`freeze`) into ``out_dir``; ``analyses`` shows the report's analyses: the sections
        recorded for that snapshot as they were drawn, the missing ones fitted now (and recorded
        into the warehouse unless ``record=False``). The Data Docs ``validate(docs=True)`` built
        and the last refresh's report ("What's new") go in when they exist."""
        from evalhouse.site import build_site
        from evalhouse.warehouse.checks.suites import data_docs_index

        frozen = None
        if snapshot is None:
            frozen = self.freeze(keep=keep)
            snapshot = frozen.path
        notes: list[str] = []
        docs = data_docs_index(self.path)
        try:
            changes = self.last_report()
        except InputError as exc:  # a damaged report costs the page, not the site
            notes.append(f"the What's new page is left empty: {exc}")
            changes = None
        summary = build_site(
            snapshot,
            out_dir,
            analyses=analyses,
            data_docs=docs.parent if docs else None,
            changes=changes,
            record_into=self.path if record and self.exists else None,
        )
        return SiteResult(summary, Path(snapshot), frozen, notes)

    def report(
        self,
        output: PathLike = "reports/evalhouse.html",
        *,
        snapshot: PathLike | None = None,
        live: bool = False,
        welfare: PathLike | None = None,
        record: bool = True,
        keep: int | None = KEEP_PINS,
    ) -> Outcome:
        """The HTML report of the analyses (figures embedded), pinned to ``snapshot``, else to the
        warehouse frozen first (``live``: its content hash, without freezing); every fit behind
        it recorded into the warehouse unless ``record=False``. When the warehouse was frozen for
        it, ``outcome.extra["frozen"]`` is that :class:`Frozen`."""
        from evalhouse.analytics import runs

        frozen = None
        if snapshot is None and not live:
            frozen = self.freeze(keep=keep)
            snapshot = frozen.path
        outcome = runs.report(
            Path(output),
            db=self.path,
            snapshot=Path(snapshot) if snapshot is not None else None,
            record_into=self.path if record else None,
            welfare=Path(welfare) if welfare is not None else None,
        )
        if frozen is not None:
            outcome.extra["frozen"] = frozen
        return outcome

    @property
    def analyses(self) -> Analyses:
        """The analyses (:mod:`evalhouse.analytics.runs`) bound to this house: they read its
        warehouse (or the ``snapshot=`` given) and record into it unless ``record=False``::

            house.analyses.factor_grid(snapshot="snapshots/today")
            house.analyses.eci(n_bootstrap=50, record=False)
        """
        return Analyses(self)


class Analyses:
    """:mod:`evalhouse.analytics.runs`, each function with its warehouse arguments given by a house.

    A run that reads (``db``) reads the house's warehouse unless ``snapshot`` is given; a run
    that records (``record_into``, or ``db`` for the CSV runs, which read only their file)
    records into it unless ``record=False``.
    """

    def __init__(self, house: House) -> None:
        self._house = house

    def __dir__(self) -> list[str]:
        from evalhouse.analytics import runs

        return [n for n in runs.__all__ if n != "Outcome"]

    def __getattr__(self, name: str) -> Callable[..., Outcome]:
        from evalhouse.analytics import runs

        if name.startswith("_") or name not in runs.__all__ or name == "Outcome":
            raise AttributeError(f"no analysis {name!r}; the analyses are {', '.join(self.__dir__())}")
        fn = getattr(runs, name)
        params = inspect.signature(fn).parameters
        path = self._house.path

        def bound(*args: Any, record: bool = True, **options: Any) -> Outcome:
            if "record_into" in params:
                options.setdefault("db", path)
                options.setdefault("record_into", path if record else None)
            elif "db" in params:
                options.setdefault("db", path if record else None)
            return fn(*args, **options)

        bound.__name__ = name
        bound.__doc__ = fn.__doc__
        return bound
