"""Loading parsed records into the warehouse: migrate, validate, fingerprint, dedup, canonicalise, insert.

The caller wraps :meth:`Loader.load` in one transaction together with its ``ingest_run`` row, so a
crash leaves the previous state. Every item ends up in exactly one place — an ``evaluation`` (its
results as ``score`` rows, or as ``quarantine`` rows when a result cannot be canonicalised), a
logged duplicate (``curation_decision`` kind ``exact_duplicate``), or ``quarantine`` — and the
:class:`LoadReport` counts say so. Legacy EEE 0.2.x records are migrated first
(:mod:`evalhouse.schema.eee_legacy`), and each migration step is recorded with every score.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb
import orjson
from pydantic import ValidationError

from evalhouse.common.collector import collector_paused
from evalhouse.common.one_behind import OneBehind
from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import CanonicalGroup, Canonicaliser, Rejection, group_key
from evalhouse.curation.cells import Cell, cell_of
from evalhouse.curation.identity import IdentityFrom, ResolvedModel, observed_day, resolve_model
from evalhouse.curation.plausibility import record_problem, release_problem, result_problem
from evalhouse.curation.registry import Registry
from evalhouse.curation.setup_policy import SetupPolicy
from evalhouse.curation.setup_policy import packaged_doc as packaged_setup_policy
from evalhouse.schema import records as R
from evalhouse.schema.eee_check import surely_valid
from evalhouse.schema.eee_legacy import migrate_legacy
from evalhouse.schema.fingerprint import fingerprint_with_results
from evalhouse.schema.records import SCHEMA_VERSION, ParsedRecord, ParseFailure, ParseItem
from evalhouse.warehouse.insert import SMALL, insert_rows
from evalhouse.warehouse.load import rows
from evalhouse.warehouse.load.report import LoadReport
from evalhouse.warehouse.load.score_batch import ScoreBatch

_SORTED = orjson.OPT_SORT_KEYS | orjson.OPT_NON_STR_KEYS
#: Records per load batch at most: one dedup query and one Arrow insert per table each (memory holds
#: one batch). A batch also ends at :data:`BATCH_RESULTS` results, so records of 25 results make
#: batches of 500 and a leaderboard's records of one or two results one batch of thousands (each
#: statement costs milliseconds whatever it holds: a refresh of 3,000 such records in batches of
#: 500 spent a third of its load on them).
DEFAULT_BATCH_SIZE = 4000
#: Results per load batch at most (what memory holds: about 500 records of 25 results).
BATCH_RESULTS = 12_500


@dataclass(frozen=True)
class LoadContext:
    """Who is loading what: the source, the run, the collection, the registry, how models are named."""

    source_key: str
    run_id: str
    registry: Registry
    collection: str | None = None
    allow_provisional: bool = False
    global_aliases: bool = False  # with allow_provisional: the registry's global aliases still apply
    declared_benchmarks: bool = False  # the source declares its benchmarks: an unknown one is registered
    identity_from: IdentityFrom = "name"
    batch_size: int = DEFAULT_BATCH_SIZE  # records per dedup query and per insert
    between_batches: Callable[[], object] | None = None  # after each batch's inserts (a memory budget's keep)


def summarise_validation_error(exc: ValidationError, limit: int = 5) -> str:
    """A one-line, location-first summary of a pydantic error (the full list can be hundreds)."""
    parts = []
    for err in exc.errors()[:limit]:
        loc = ".".join(str(p) for p in err["loc"]) or "<record>"
        parts.append(f"{loc}: {err['msg']}")
    more = exc.error_count() - limit
    return "; ".join(parts) + (f"; and {more} more" if more > 0 else "")


def validate_record(record: Any, *, json_text: bool = False) -> tuple[dict[str, Any] | None, str | None]:
    """The record when it is a valid EEE record, or a reason naming what is wrong (schema version
    first). The fast check (:mod:`evalhouse.schema.eee_check`) accepts most records; the pydantic
    models decide the rest and word every refusal. ``json_text``: parsed from JSON text (no NaN)."""
    if not isinstance(record, dict):
        return None, f"expected a JSON object, got {type(record).__name__}"
    if surely_valid(record, json_text=json_text):
        return record, None
    # the models load with the first record the fast check does not vouch for (a refresh of
    # parser-built records, which the check accepts, never needs them)
    from evalhouse.schema.eee import EvaluationLog, SchemaVersionError  # noqa: PLC0415

    try:
        EvaluationLog.model_validate(record)
        return record, None
    except SchemaVersionError as exc:
        return None, str(exc)
    except ValidationError as exc:
        version_errors = [e for e in exc.errors() if isinstance(e.get("ctx", {}).get("error"), SchemaVersionError)]
        if version_errors:
            return None, str(version_errors[0]["ctx"]["error"])
        return None, f"not a valid EEE {SCHEMA_VERSION} record: {summarise_validation_error(exc)}"


@dataclass
class _Prepared:
    item: ParsedRecord
    record: dict[str, Any]
    fingerprint: str
    n_results: int
    raw_sha256: str
    migration: tuple[str, ...]
    results_json: list[bytes] | None  # each result's sorted-keys JSON, written by the fingerprint
    record_json: str | None  # the record as the evaluation row stores it, when the reader wrote it so


class Loader:
    """Loads items for one run of one source into an open connection (inside a transaction)."""

    def __init__(self, con: duckdb.DuckDBPyConnection, ctx: LoadContext) -> None:
        self.con = con
        self.ctx = ctx
        self.collection = ctx.collection or ctx.source_key
        self.canonicaliser = Canonicaliser(
            ctx.registry,
            allow_provisional=ctx.allow_provisional,
            global_aliases=ctx.global_aliases,
            declared=ctx.declared_benchmarks,
        )
        self._policy = ctx.registry.setup_policy or SetupPolicy.from_doc(packaged_setup_policy())
        self.report = LoadReport()
        self._lower_bound_kinds = frozenset(k for k, v in ctx.registry.evidence_kinds.items() if v.lower_bound)
        self._rows: dict[str, list[dict[str, Any]]] = {
            t: [] for t in ("evaluation", "quarantine", "curation_decision", "model_attribute")
        }
        self._rows["release_date_evidence"] = []
        self._identity: dict[str, dict[Any, dict[str, Any]]] = {
            t: {} for t in ("developer", "model_family", "base_model", "model_config", "model_alias")
        }
        self._provisional: dict[str, dict[str, dict[str, Any]]] = {"benchmark": {}, "metric": {}}
        self._candidates: dict[str, str] = {}
        self._identity_links: dict[tuple[str, str, str], dict[str, Any]] = {}  # (kind, rule, subject) -> row
        self._links: dict[str, str] = {}  # namespaced benchmark -> the registry benchmark it was linked to
        self._written: dict[str, set[Any]] = {t: set() for t in self._identity}
        self._seen: set[str] = set()
        self._seen_ids: set[str] = set()
        self._identified: set[tuple[str, ...]] = set()  # identity keys whose rows this load has
        self._cells: dict[tuple[Any, ...], Cell] = {}
        self._groups: dict[tuple[Any, ...], CanonicalGroup] = {}  # this load's groups by group_key
        self._scores = ScoreBatch()
        self.batch_size = ctx.batch_size
        self._writes = OneBehind("evalhouse-load-writer")
        self._wrote = False  # a batch was written since the memory budget was last set
        self._now = datetime.now(UTC).replace(tzinfo=None)  # what "in the future" means for this load

    # -- public -----------------------------------------------------------------------------

    def load(self, items: Iterable[ParseItem], *, raw_sha256: str) -> LoadReport:
        """Load ``items`` (any iterable, read once) in batches of :attr:`batch_size` records (or of
        :data:`BATCH_RESULTS` results, whichever comes first): each batch is deduplicated against
        the warehouse with one query and written with one Arrow insert per table, on a writer
        thread while the next batch is read and prepared (:mod:`evalhouse.common.one_behind`), so
        memory holds two batches, not the corpus."""
        with collector_paused():
            try:
                self._load_all(items, raw_sha256)
            except BaseException as exc:
                self._writes.abandon(exc)  # the transaction must not end under a write in flight
                raise
            self._writes.close()
        return self.report

    def _load_all(self, items: Iterable[ParseItem], raw_sha256: str) -> None:
        batch: list[_Prepared] = []
        results = 0
        for item in items:
            if isinstance(item, ParseFailure):
                self.report.parse_failures += 1
                self._quarantine(item.raw_sha256 or raw_sha256, item.locator, "parse", item.reason, item.payload)
                continue
            prepared = self._prepare(item, item.raw_sha256 or raw_sha256)
            if prepared is not None:
                batch.append(prepared)
                results += prepared.n_results
            if len(batch) >= self.batch_size or results >= BATCH_RESULTS:
                self._load_batch(batch)
                self._flush_rows()
                batch, results = [], 0
        self._load_batch(batch)
        self._flush_rows()
        self._wait_for_writes()
        self._flush_identity_links()
        self._flush_provisional()

    # -- internals --------------------------------------------------------------------------

    def _prepare(self, item: ParsedRecord, raw_sha256: str) -> _Prepared | None:
        """Migrate and validate one record; quarantine it (with its scores counted) if it cannot be."""
        self.report.records_read += 1
        record = item.record
        results = record.get("evaluation_results") if isinstance(record, dict) else None
        n_results = len(results) if isinstance(results, list) else 0
        steps: list[str] = []
        if isinstance(record, dict) and record.get("schema_version") not in (None, SCHEMA_VERSION):
            try:
                record, steps = migrate_legacy(record, self.collection)
            except ValueError as exc:
                self._refuse(item, raw_sha256, str(exc), n_results)
                return None
        if item.valid and not steps:  # the parser checked it (ParsedRecord.valid)
            valid, reason = record, None
        else:
            valid, reason = validate_record(record, json_text=item.json_text and not steps)
        if valid is None:
            self._refuse(item, raw_sha256, reason or "invalid", n_results)
            return None
        implausible = record_problem(record, self._now)
        if implausible is not None:
            self._refuse(item, raw_sha256, implausible, n_results)
            return None
        if steps:
            self.report.records_migrated += 1
        record = dict(record)
        if item.fingerprint is not None and not steps:  # computed before the load, of this very record
            fingerprint, results_json = item.fingerprint, item.results_json
        else:  # read from JSON text and not migrated (a migration may write any float): no NaN
            fingerprint, results_json = fingerprint_with_results(record, json_exact=item.json_text and not steps)
        # the reader's bytes of the record are the stored JSON unless the load changes the record
        as_read = item.record_json.decode() if item.record_json is not None and not steps else None
        if not record.get("evaluation_id"):
            record["evaluation_id"] = f"{self.collection}/{record['model_info']['id']}/{fingerprint[:16]}"
            as_read = None
        n_results = len(record["evaluation_results"])
        return _Prepared(item, record, fingerprint, n_results, raw_sha256, tuple(steps), results_json, as_read)

    def _refuse(self, item: ParsedRecord, raw_sha256: str, reason: str, n_results: int) -> None:
        self.report.records_quarantined += 1
        self.report.scores_in_quarantined_records += n_results
        self._quarantine(raw_sha256, item.locator, "validate", reason, rows.dump(item.record))

    def _load_batch(self, batch: list[_Prepared]) -> None:
        if not batch:
            return
        self._wait_for_writes()
        known_fp = self._existing("evaluation", "fingerprint", [p.fingerprint for p in batch])
        known_ids = self._existing("evaluation", "evaluation_id", [p.record["evaluation_id"] for p in batch])
        for p in batch:
            self.report.scores_read += p.n_results
            if p.fingerprint in known_fp or p.fingerprint in self._seen:
                self._duplicate(p)
                continue
            eval_id = p.record["evaluation_id"]
            extra: dict[str, Any] = {}
            if eval_id in known_ids or eval_id in self._seen_ids:
                extra["source_evaluation_id"] = eval_id
                eval_id = f"{eval_id}#{p.fingerprint[:12]}"
                self._decision(
                    "evaluation_id_collision",
                    "two records with different content share one EEE evaluation_id: both kept, the later "
                    "one under the id plus its fingerprint",
                    {"evaluation_id": extra["source_evaluation_id"], "renamed_to": eval_id},
                    {"fingerprint": p.fingerprint, "locator": p.item.locator},
                )
            self._seen.add(p.fingerprint)
            self._seen_ids.add(eval_id)
            self.report.fingerprints.append(p.fingerprint)
            self._load_record(p, eval_id, extra)

    def _duplicate(self, p: _Prepared) -> None:
        self.report.records_duplicate += 1
        self.report.scores_in_duplicates += p.n_results
        self._decision(
            "exact_duplicate",
            "fingerprint: EEE normalised hash already in the warehouse",
            {"fingerprint": p.fingerprint, "evaluation_id": p.record["evaluation_id"]},
            {"locator": p.item.locator, "raw_sha256": p.raw_sha256, "source_key": self.ctx.source_key},
        )

    def _load_record(self, p: _Prepared, eval_id: str, extra: dict[str, Any]) -> None:
        record = p.record
        model = resolve_model(
            record["model_info"],
            self.ctx.source_key,
            self.ctx.registry,
            identity_from=self.ctx.identity_from,
            # when the source ran the model (the day its bytes were fetched says nothing of that)
            observed_on=observed_day(record.get("evaluation_timestamp")),
        )
        self._add_identity(model)
        meta = record["source_metadata"]
        details = meta.get("additional_details") or {}
        ctx = rows.RecordContext(
            source_key=self.ctx.source_key,
            run_id=self.ctx.run_id,
            eval_id=eval_id,
            fingerprint=p.fingerprint,
            model=model,
            evaluated_by=details.get(R.EVALUATED_BY) or rows.RELATIONSHIP_TO_EVALUATOR[meta["evaluator_relationship"]],
            details=details,
            harness=record["eval_library"]["name"],
            raw_sha256=p.raw_sha256,
            observed_at=rows.observed_at(record["retrieved_timestamp"]),
            migration_steps=p.migration,
            lower_bound_kinds=self._lower_bound_kinds,
        )
        extra = {
            **extra,
            "collection": self.collection,
            "datastore_path": p.item.datastore_path,
            "samples_sha256": p.item.samples_sha256,
            "migrated_from": p.migration[0].split()[3] if p.migration else None,
        }
        self._rows["evaluation"].append(rows.evaluation_row(ctx, record, p.item.locator, extra, p.record_json))
        self.report.records_loaded += 1
        self._scores_of(ctx, p)
        self._rows["model_attribute"].extend(rows.model_facts(ctx, record))
        self._rows["release_date_evidence"].extend(self._release_claims(ctx, p))

    def _add_identity(self, model: ResolvedModel) -> None:
        """The model's identity rows, unless a record of this load named the very same ones (first
        writer wins, as the rows are inserted OR IGNORE)."""
        key = (model.developer_id, model.family_id, model.base_model_id, model.config_id, model.source_model_id)
        if key in self._identified:
            return
        self._identified.add(key)
        for link in model.links:
            kind, subject, detail = rows.identity_link(model, link, self.ctx.source_key)
            self._identity_links.setdefault((kind, link.rule, subject), {"detail": detail})
        for table, row in rows.identity_rows(model, self.ctx.source_key, self.ctx.run_id).items():
            alias = table == "model_alias"
            key_of = (
                (row["source_key"], row["source_model_id"], row["config_id"]) if alias else next(iter(row.values()))
            )
            self._identity[table].setdefault(key_of, row)

    def _scores_of(self, ctx: rows.RecordContext, p: _Prepared) -> None:
        """Every result of a loaded record: canonical (a score of the batch) or quarantined.

        Per result this looks up its canonical group (resolved once per group), checks and scales
        the value, and hashes the result's JSON (written once, by the record's fingerprint, when
        it could be); a refused value asks :meth:`Canonicaliser.canonicalise` for the reason."""
        canonicaliser, source_key, collection = self.canonicaliser, self.ctx.source_key, self.collection
        groups, sha256 = self._groups, hashlib.sha256
        written = p.results_json
        prefix = ctx.fingerprint.encode() + b":"
        seen: set[str] = set()
        rec = self._scores.add_record(ctx)
        setup_key = (ctx.harness, tuple(sorted(ctx.model.setup.items())))
        refused, now = p.item.refused_results, self._now
        for index, result in enumerate(p.record["evaluation_results"]):
            implausible = refused.get(index) if refused else None
            if implausible is None:
                implausible = result_problem(result, now)
            if implausible is not None:  # a value no metric could mean: refused before it is read
                self._refuse_result(p, index, result, implausible, stage="validate")
                continue
            key = group_key(result)
            group = groups.get(key)
            if group is None:
                group = groups[key] = canonicaliser.group(result, source_key=source_key, collection=collection)
            raw_value = float(result["score_details"]["score"])
            value = group.value(raw_value)
            if value is None:
                outcome = canonicaliser.canonicalise(result, source_key=source_key, collection=collection)
                if isinstance(outcome, Rejection):
                    self._refuse_result(p, index, result, outcome.reason)
                    continue
                value = outcome.value
            if group.provisional_benchmark is not None or group.provisional_metric is not None:
                self._provisional_seen(group)
            if group.linked_from is not None:
                self._links[group.linked_from] = group.benchmark_id
            if written is not None:
                result_json = written[index]
            else:
                try:
                    result_json = orjson.dumps(result, option=_SORTED)
                except TypeError as exc:  # orjson writes no integer beyond 64 bits; no column holds one either
                    self._refuse_result(
                        p, index, result, f"not storable: {exc} (a number in the result does not fit 64 bits)"
                    )
                    continue
            fingerprint = sha256(prefix + result_json).hexdigest()
            if fingerprint in seen:  # the same result twice in one record
                self.report.scores_in_duplicates += 1
                continue
            seen.add(fingerprint)
            cell = self._cell(result, group, setup_key, ctx)
            self._scores.add(rec, index, result, group, raw_value, value, cell, fingerprint)
            self.report.scores_loaded += 1

    def _refuse_result(
        self, p: _Prepared, index: int, result: dict[str, Any], reason: str, stage: str = "canonicalise"
    ) -> None:
        self.report.scores_quarantined += 1
        locator = f"{p.item.locator} / evaluation_results[{index}]"
        self._quarantine(p.raw_sha256, locator, stage, reason, rows.dump(result))

    def _release_claims(self, ctx: rows.RecordContext, p: _Prepared) -> list[dict[str, Any]]:
        """The record's release-date evidence rows; a claim that is no date, or one before 2015
        or in the future, is quarantined alone (the record and its scores load)."""
        details = p.record["model_info"]["additional_details"]
        claim = details.get(R.RELEASE_DATE)
        stated = claim is not None
        if stated and (why := release_problem(claim, self._now.date())) is not None:
            self._refuse_fact(p, f"model_info.additional_details.{R.RELEASE_DATE}", why, claim)
            stated = False
        kept = []
        for row in rows.release_evidence(ctx, p.record, stated=stated):
            why = release_problem(row["date"].isoformat(), self._now.date())
            if why is None:
                kept.append(row)
            else:
                self._refuse_fact(p, f"release-date evidence ({row['kind']})", why, row["date"].isoformat())
        return kept

    def _refuse_fact(self, p: _Prepared, where: str, reason: str, value: Any) -> None:
        self.report.facts_quarantined += 1
        self._quarantine(p.raw_sha256, f"{p.item.locator} / {where}", "validate", reason, rows.dump({where: value}))

    def _provisional_seen(self, group: CanonicalGroup) -> None:
        for prov, table in ((group.provisional_benchmark, "benchmark"), (group.provisional_metric, "metric")):
            if prov is not None and prov.id not in self._provisional[table]:
                self._provisional[table][prov.id] = prov.model_dump()
        if group.provisional_benchmark is not None and group.candidate_benchmark:
            self._candidates[group.benchmark_id] = group.candidate_benchmark

    def _cell(
        self, result: dict[str, Any], group: CanonicalGroup, setup_key: tuple[Any, ...], ctx: rows.RecordContext
    ) -> Cell:
        """The result's cell, computed once per distinct generation config, metric parameters,
        subset, protocol, harness and name-stated setup (a load sees a handful of them)."""
        subset = group.subset
        generation = result.get("generation_config")
        params = (result.get("metric_config") or {}).get("metric_parameters")
        key = (  # the result's JSON was written whole already, so orjson writes any part of it
            None if generation is None else orjson.dumps(generation, option=_SORTED),
            None if params is None else orjson.dumps(params, option=_SORTED),
            subset,
            group.protocol,
            setup_key,
        )
        cell = self._cells.get(key)
        if cell is None:
            cell = self._cells[key] = cell_of(
                result, subset, ctx.harness, self._policy, ctx.model.setup, protocol=group.protocol
            )
        return cell

    def _decision(self, kind: str, rule: str, subject: dict[str, Any], detail: dict[str, Any]) -> None:
        self._rows["curation_decision"].append(
            {
                "kind": kind,
                "rule": rule,
                "subject": rows.dump(subject),
                "detail": rows.dump(detail),
                "run_id": self.ctx.run_id,
            }
        )

    def _quarantine(self, raw_sha256: str | None, locator: str, stage: str, reason: str, payload: str | None) -> None:
        self.report.reasons[reason.split(":", maxsplit=1)[0][:80]] += 1
        if self.report.first_reason is None:
            self.report.first_reason = reason
        self._rows["quarantine"].append(
            {
                "run_id": self.ctx.run_id,
                "source_key": self.ctx.source_key,
                "raw_sha256": raw_sha256,
                "locator": locator,
                "stage": stage,
                "reason": reason,
                "payload": payload,
            }
        )

    def _existing(self, table: str, column: str, values: list[str]) -> set[str]:
        if not values:
            return set()
        found = self.con.execute(
            f"SELECT {column} FROM {table} WHERE {column} IN (SELECT unnest(?::VARCHAR[]))", [values]
        ).fetchall()
        return {r[0] for r in found}

    def _flush_rows(self) -> None:
        """Write what the batch produced: identity rows not written yet, then every row table.

        The inserts run on the writer thread while the next batch is prepared here; whatever
        reads the connection first waits for them (:meth:`_wait_for_writes`)."""
        writes: list[tuple[str, list[dict[str, Any]], bool]] = []
        for table, identity in self._identity.items():
            writes.append((table, [row for key, row in identity.items() if key not in self._written[table]], True))
            self._written[table].update(identity)
            identity.clear()
        for table in self._rows:
            writes.append((table, self._rows[table], table in {"model_attribute", "release_date_evidence"}))
            self._rows[table] = []
        scores, self._scores = self._scores, ScoreBatch()
        if not any(table_rows for _, table_rows, _ in writes) and not scores.scores:
            return
        if scores.scores or any(len(table_rows) > SMALL for _, table_rows, _ in writes):
            # Arrow is imported here, not first by the writer thread: two threads importing one
            # package at once can deadlock on its module locks
            import pyarrow  # noqa: F401, PLC0415
        con = self.con

        def write() -> None:  # (the load's collector pause holds here too: it is the process's)
            for table, table_rows, or_ignore in writes:
                insert_rows(con, table, table_rows, or_ignore=or_ignore)
                if table == "evaluation":
                    scores.insert(con)  # scores after the evaluations they belong to

        self._writes.submit(write)
        self._wrote = True

    def _wait_for_writes(self) -> None:
        """The last batch's inserts done (their error raised here); before the next batch, the
        load's memory budget is set again from what DuckDB holds now (``between_batches``)."""
        self._writes.wait()
        if self._wrote and self.ctx.between_batches is not None:
            self.ctx.between_batches()
        self._wrote = False

    def _flush_identity_links(self) -> None:
        """One decision per identity link a load's models made (a date or alias resolved with its
        evidence, a candidate configuration not merged) that no earlier run recorded."""
        if not self._identity_links:
            return
        subjects = sorted({subject for _, _, subject in self._identity_links})
        known = {
            tuple(r)
            for r in self.con.execute(
                read_sql("evalhouse.warehouse", "identity_links_known.sql"), [subjects]
            ).fetchall()
        }
        for (kind, rule, subject), row in self._identity_links.items():
            if (kind, rule, subject) not in known:
                self._rows["curation_decision"].append(
                    {"kind": kind, "rule": rule, "subject": subject, "detail": row["detail"], "run_id": self.ctx.run_id}
                )
        self._identity_links.clear()

    def _flush_provisional(self) -> None:
        for table, provisional in self._provisional.items():
            insert_rows(
                self.con,
                table,
                [rows.provisional_row(table, r, self.ctx.source_key) for r in provisional.values()],
                or_ignore=True,
            )
            for rid, r in provisional.items():
                candidate = self._candidates.get(rid) if table == "benchmark" else None
                why = (
                    f"declared by source {self.ctx.source_key} in its own metadata; not in the registry: "
                    "registered as a new benchmark"
                    if self.ctx.declared_benchmarks and not self.ctx.allow_provisional
                    else "self-describing EEE record; not in the registry"
                )
                self._decision(
                    f"provisional_{table}",
                    why + (f"; candidate link to registry benchmark {candidate} (not merged)" if candidate else ""),
                    {"id": rid, **({"candidate": candidate} if candidate else {})},
                    r,
                )
        links = self.ctx.registry.benchmark_links
        for namespaced, target in sorted(self._links.items()):
            link = links.same(namespaced) if links is not None else None
            self._decision(
                "benchmark_link",
                f"benchmark_links.yaml: {namespaced} is {target}",
                {"id": namespaced, "linked_to": target},
                link.as_dict() if link is not None else {},
            )
        insert_rows(self.con, "curation_decision", self._rows["curation_decision"])
        self._rows["curation_decision"].clear()
