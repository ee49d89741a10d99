"""Validation suites (great-expectations 1.x) run as a checkpoint after every load and on demand.

Paper 002 asks for integrity checks after every write; this module defines that check. Each check is
a frame built by one SQL query (``warehouse/sql/frame_*.sql``) and a few expectations on it, grouped in
named suites. Inside every load they run as set-based SQL (:mod:`.sql`, same
checks, same semantics, no pandas and no import of great-expectations); ``evalhouse validate``
runs them as a real great-expectations checkpoint on the frames:

``referential_integrity``
    every score's evaluation, model configuration, benchmark, metric and setup exist (a qualified
    metric id ``accuracy.easy`` resolves to its base metric ``accuracy``; read from the tables
    ``score`` is a view of, so a missing part is seen, not joined away); every evaluation's raw_sha256
    was recorded as a fetch in ``raw_snapshot``; every model configuration has its base model.
``orphans``
    no model/benchmark without results (paper 002). A model configuration no evaluation record
    names is an orphan (an error); one with records but zero *current* scores
    (``v_score_current``) — a leaderboard listing a model before scoring it — is a warning. A
    benchmark is an orphan when it has zero current scores and is either provisional (a load
    created it, so it exists only because of scores) or observed (some score row, current or
    superseded, names it). A registry benchmark that no
    score ever named is a registry entry waiting for data, not an orphan.
``bounds``
    every score's canonical value lies within its metric's bounds (NULL bound = unbounded), with
    the canonicaliser's tolerance.
``uniqueness``
    score and evaluation fingerprints are unique (the tables' keys enforce this today: a score's id
    is derived from its fingerprint and checked to be; the suite keeps the property checked if a
    constraint is ever dropped or bypassed).
``coverage`` (warning level)
    benchmarks with fewer than 5 current rows are flagged, never failing (paper 002).
``release_dates``
    release-date evidence is neither in the future (UTC today) nor before 2015. The loader refuses
    such a claim alone before it is written; a row that fails here anyway (written by an older
    version, or with the checkpoint skipped) is moved to ``quarantine`` by the checkpoint inside a
    load, which then passes: one bad claim never blocks a collection.

An error-level failure fails the run; warnings are reported and stored only. A level can be
changed without code: a ``curation_setting`` row ``expectation_level:<suite>.<name>`` with value
``warning`` or ``error`` overrides the default, so relaxing a check is itself a recorded row.

great-expectations takes seconds to import and its objects are costly to build, so the import
is deferred until the first validation, and one context with every suite, validation definition
and checkpoint (one per frame, since a checkpoint hands one dataframe to all its validation
definitions) is built once per process and reused for every load. The checkpoint inside a load
uses an in-memory context; ``evalhouse validate`` uses the warehouse's great-expectations project,
a real folder beside it (``<db stem>.gx/``, :func:`project_dir`), where the suites, checkpoints and
every validation result are stored, and from which ``evalhouse validate --docs`` builds GX Data
Docs (:func:`build_data_docs`; ``<db stem>.gx/gx/uncommitted/data_docs/local_site/index.html``).
"""

from __future__ import annotations

import json
import math
import os
import re
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, date, datetime
from functools import cache
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import duckdb

from evalhouse.common.resources import read_sql
from evalhouse.curation.canonicalise import EPSILON
from evalhouse.curation.plausibility import EARLIEST
from evalhouse.errors import RunFailed
from evalhouse.warehouse.insert import insert_rows

if TYPE_CHECKING:
    import pandas as pd
    from great_expectations.checkpoint import Checkpoint

Level = Literal["error", "warning"]
LEVEL_SETTING_PREFIX = "expectation_level:"
EARLIEST_RELEASE = datetime.combine(EARLIEST, datetime.min.time())  # the loader refuses earlier claims too
MIN_BENCHMARK_ROWS = 5
EXAMPLES = 20
PARAM_RE = re.compile(r"\$([a-z_][a-z0-9_]*)")


class ValidationFailed(RunFailed):
    """An error-level expectation failed; raised inside a load so the load rolls back."""

    def __init__(self, message: str, summary: ValidationSummary) -> None:
        super().__init__(message)
        self.summary = summary


@dataclass(frozen=True)
class Frame:
    """A check frame: the SQL that builds it and the column that identifies a bad row.

    ``unique_by`` says, per column, the table whose constraints make its values unique (the
    column of that table with a UNIQUE or PRIMARY KEY constraint, or a key derived from it and
    checked to be): a uniqueness check of the column holds by construction while they stand."""

    name: str
    sql_file: str
    index: str
    uses_current_scores: bool = False
    unique_by: dict[str, tuple[str, str]] = field(default_factory=dict)


@dataclass(frozen=True)
class Check:
    """One expectation: its suite, its name in messages, its frame and its GE class + kwargs."""

    suite: str
    name: str
    frame: str
    gx_type: str
    kwargs: dict[str, Any]
    description: str
    level: Level = "error"


FRAMES = {
    f.name: f
    for f in (
        # a score's id is its fingerprint's first 62 bits, checked (migration 0080), and its key
        Frame("scores", "frame_scores.sql", "score_id", unique_by={"fingerprint": ("score_value", "score_id")}),
        Frame(
            "evaluations",
            "frame_evaluations.sql",
            "evaluation_id",
            unique_by={"fingerprint": ("evaluation", "fingerprint")},
        ),
        Frame("model_configs", "frame_model_configs.sql", "config_id", uses_current_scores=True),
        Frame("benchmarks", "frame_benchmarks.sql", "benchmark_id", uses_current_scores=True),
        Frame("release_dates", "frame_release_dates.sql", "evidence_id"),
    )
}

_NOT_NULL = "ExpectColumnValuesToNotBeNull"
_BETWEEN = "ExpectColumnValuesToBeBetween"
_PAIR = "ExpectColumnPairValuesAToBeGreaterThanB"
_UNIQUE = "ExpectColumnValuesToBeUnique"

CHECKS: tuple[Check, ...] = (
    Check("referential_integrity", "score_evaluation_exists", "scores", _NOT_NULL,
          {"column": "evaluation_ref"}, "every score's evaluation exists"),
    Check("referential_integrity", "score_model_config_exists", "scores", _NOT_NULL,
          {"column": "config_ref"}, "every score's model configuration exists"),
    Check("referential_integrity", "score_benchmark_exists", "scores", _NOT_NULL,
          {"column": "benchmark_ref"}, "every score's benchmark exists"),
    Check("referential_integrity", "score_metric_exists", "scores", _NOT_NULL,
          {"column": "metric_ref"}, "every score's metric (or a qualified id's base metric) exists"),
    Check("referential_integrity", "score_setup_exists", "scores", _NOT_NULL,
          {"column": "setup_ref"}, "every score's setup (metric parameters, setup, generation config) exists"),
    Check("referential_integrity", "evaluation_raw_snapshot_exists", "evaluations", _NOT_NULL,
          {"column": "raw_snapshot_ref"}, "every evaluation's raw_sha256 is in raw_snapshot"),
    Check("referential_integrity", "model_config_base_model_exists", "model_configs", _NOT_NULL,
          {"column": "base_model_ref"}, "every model configuration has a base model"),
    Check("orphans", "model_config_has_evaluations", "model_configs", _BETWEEN,
          {"column": "n_evaluations", "min_value": 1},
          "every model configuration is named by an evaluation record"),
    Check("orphans", "model_config_has_current_scores", "model_configs", _BETWEEN,
          {"column": "n_current_scores", "min_value": 1},
          "model configurations without current scores (listed before being scored)", level="warning"),
    Check("orphans", "benchmark_has_current_scores", "benchmarks", _BETWEEN,
          {"column": "n_current_scores", "min_value": 1},
          "no provisional or observed benchmark without current scores"),
    Check("bounds", "score_value_not_below_metric_min", "scores", _PAIR,
          {"column_A": "value", "column_B": "lower_bound", "or_equal": True,
           "ignore_row_if": "either_value_is_missing"},
          "every canonical value is >= its metric's lower bound"),
    Check("bounds", "score_value_not_above_metric_max", "scores", _PAIR,
          {"column_A": "upper_bound", "column_B": "value", "or_equal": True,
           "ignore_row_if": "either_value_is_missing"},
          "every canonical value is <= its metric's upper bound"),
    Check("uniqueness", "score_fingerprint_unique", "scores", _UNIQUE,
          {"column": "fingerprint"}, "score fingerprints are unique"),
    Check("uniqueness", "evaluation_fingerprint_unique", "evaluations", _UNIQUE,
          {"column": "fingerprint"}, "evaluation fingerprints are unique"),
    Check("coverage", "benchmark_has_at_least_5_rows", "benchmarks", _BETWEEN,
          {"column": "n_current_scores", "min_value": MIN_BENCHMARK_ROWS},
          f"benchmarks have at least {MIN_BENCHMARK_ROWS} current rows", level="warning"),
    Check("release_dates", "release_date_not_before_2015", "release_dates", _BETWEEN,
          {"column": "date", "min_value": EARLIEST_RELEASE}, "release dates are not before 2015"),
    Check("release_dates", "release_date_not_in_future", "release_dates", _BETWEEN,
          {"column": "date", "max_value": {"$PARAMETER": "today"}},
          "release dates are not in the future"),
)  # fmt: skip


@dataclass
class ExpectationOutcome:
    """What one expectation found: ``observed`` is the JSON stored in ``validation_result``."""

    suite: str
    name: str
    level: Level
    success: bool
    description: str
    observed: dict[str, Any]

    @property
    def qualified_name(self) -> str:
        return f"{self.suite}.{self.name}"

    def explain(self) -> str:
        """One line: what was expected and what was found (counts and the first offenders)."""
        obs = self.observed
        if obs.get("exception"):
            return f"{self.description}: the check raised {obs['exception']}"
        if "unexpected_count" not in obs:
            return f"{self.description}: observed {obs.get('observed_value')!r}"
        ids = [str(e.get(obs.get("index", ""), e)) for e in obs.get("examples", [])[:5]]
        more = " …" if obs["unexpected_count"] > len(ids) else ""
        return (
            f"{self.description}: {obs['unexpected_count']} of {obs.get('element_count')} "
            f"{obs.get('frame')} rows do not ({obs.get('index')} {', '.join(ids)}{more})"
        )


@dataclass
class ValidationSummary:
    validation_id: str
    run_id: str | None
    outcomes: list[ExpectationOutcome] = field(default_factory=list)
    duration_s: float = 0.0
    setup_s: float = 0.0  # importing GE and building its objects: the first run of a process only
    frame_rows: dict[str, int] = field(default_factory=dict)

    @property
    def failures(self) -> list[ExpectationOutcome]:
        """Error-level expectations that failed: any one fails the run."""
        return [o for o in self.outcomes if not o.success and o.level == "error"]

    @property
    def warnings(self) -> list[ExpectationOutcome]:
        return [o for o in self.outcomes if not o.success and o.level == "warning"]

    @property
    def success(self) -> bool:
        return not self.failures

    def message(self) -> str:
        """The failure message: names the first failed expectation, then the others."""
        if self.success:
            return f"all {len(self.outcomes)} expectations passed ({len(self.warnings)} warnings)"
        first, *rest = self.failures
        text = f"expectation {first.qualified_name} failed: {first.explain()}"
        if rest:
            text += f"; also failed: {', '.join(o.qualified_name for o in rest)}"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {
            "validation_id": self.validation_id,
            "run_id": self.run_id,
            "success": self.success,
            "expectations": len(self.outcomes),
            "failed": [o.qualified_name for o in self.failures],
            "warnings": [o.qualified_name for o in self.warnings],
            "duration_s": round(self.duration_s, 3),
            "setup_s": round(self.setup_s, 3),
            "frame_rows": self.frame_rows,
            "results": [
                {
                    "suite": o.suite,
                    "expectation": o.name,
                    "level": o.level,
                    "success": o.success,
                    "description": o.description,
                    "observed": o.observed,
                }
                for o in self.outcomes
            ],
        }


# -- great-expectations objects (built once per process) --------------------------------------


@dataclass(frozen=True)
class _GxSet:
    context: Any
    checkpoints: dict[str, Checkpoint]


def project_dir(db_path: str | os.PathLike[str]) -> Path:
    """The warehouse's great-expectations project folder: ``<db stem>.gx/`` beside the file."""
    db = Path(db_path)
    return db.with_name(f"{db.stem}.gx")


def data_docs_index(db_path: str | os.PathLike[str]) -> Path | None:
    """The built Data Docs' ``index.html`` of the warehouse's project, if they were built."""
    index = project_dir(db_path) / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    return index if index.is_file() else None


def prepare(project: Path | None = None) -> None:
    """Import GE and build the suites now (seconds, once per process), e.g. before taking the
    warehouse's writer lock, so the lock is not held while great-expectations imports."""
    _gx(str(project) if project else None)


@cache
def _gx(project: str | None = None) -> _GxSet:
    """One GE context with a checkpoint per frame, built on first use and kept: in memory, or the
    file project at ``project`` (whose stored suites and checkpoints are brought up to date)."""
    context = _new_context(project)
    source = context.data_sources.add_or_update_pandas("evalhouse")
    checkpoints = {frame.name: _checkpoint(context, source, frame) for frame in FRAMES.values()}
    return _GxSet(context, checkpoints)


def _new_context(project: str | None = None) -> Any:
    """A context that draws no progress bars (they would litter every load's stderr)."""
    os.environ.setdefault("GX_ANALYTICS_ENABLED", "false")
    # great-expectations takes seconds to import: only the first validation of a process pays
    import great_expectations as gx  # noqa: PLC0415
    from great_expectations.data_context.types.base import (  # noqa: PLC0415
        DataContextConfig,
        InMemoryStoreBackendDefaults,
        ProgressBarsConfig,
    )

    if project is not None:
        context = gx.get_context(mode="file", project_root_dir=project)
        context.variables.progress_bars = ProgressBarsConfig(globally=False, metric_calculations=False)
        context.variables.save()
        return context
    config = DataContextConfig(
        store_backend_defaults=InMemoryStoreBackendDefaults(init_temp_docs_sites=False),
        progress_bars=ProgressBarsConfig(globally=False, metric_calculations=False),
        analytics_enabled=False,
    )
    return gx.get_context(mode="ephemeral", project_config=config)


def build_data_docs(project: Path) -> Path:
    """Build the project's GX Data Docs from its stored validation results; the index page."""
    context = _gx(str(project)).context
    context.build_data_docs()
    index = project / "gx" / "uncommitted" / "data_docs" / "local_site" / "index.html"
    if not index.is_file():
        raise RunFailed(f"great-expectations built no Data Docs at {index}")
    return index


def _checkpoint(context: Any, source: Any, frame: Frame) -> Checkpoint:
    """The frame's checkpoint: one validation definition per suite that reads this frame.

    A checkpoint hands the same dataframe to all its validation definitions, hence one per frame.
    """
    import great_expectations as gx  # noqa: PLC0415 - seconds to import, see _context

    batch = source.add_dataframe_asset(frame.name).add_batch_definition_whole_dataframe(frame.name)
    definitions = []
    for suite_name in dict.fromkeys(c.suite for c in CHECKS if c.frame == frame.name):
        # "." not "/": a file project stores each suite under its name
        suite = gx.ExpectationSuite(name=f"{suite_name}.{frame.name}")
        for check in CHECKS:
            if check.frame == frame.name and check.suite == suite_name:
                suite.add_expectation(_expectation(check))
        suite = context.suites.add_or_update(suite)
        definitions.append(
            context.validation_definitions.add_or_update(
                gx.ValidationDefinition(name=suite.name, data=batch, suite=suite)
            )
        )
    return context.checkpoints.add_or_update(
        gx.Checkpoint(
            name=frame.name,
            validation_definitions=definitions,
            result_format={
                "result_format": "SUMMARY",
                "unexpected_index_column_names": [frame.index],
                "partial_unexpected_count": EXAMPLES,
            },
        )
    )


def _expectation(check: Check) -> Any:
    """The GE expectation of a check; ``meta`` carries our names back through GE's results."""
    import great_expectations.expectations as gxe  # noqa: PLC0415 - seconds to import, see _context
    from great_expectations.expectations.metadata_types import FailureSeverity  # noqa: PLC0415

    severity = FailureSeverity.WARNING if check.level == "warning" else FailureSeverity.CRITICAL
    return getattr(gxe, check.gx_type)(
        **check.kwargs,
        meta={"suite": check.suite, "name": check.name},
        severity=severity,
        description=check.description,
    )


# -- frames ----------------------------------------------------------------------------------


@cache
def _sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def frame_sql(frame: Frame, *, ordered: bool = False, current_scores: str | None = None) -> str:
    """The frame's query; frames that count current scores get the ``current_scores`` CTE (over
    the relation ``current_scores`` names when the caller computed it once for several frames).

    ``ordered`` sorts the rows by the frame's index, as the pandas frames great-expectations reads
    are (its examples are the first offending rows); the set-based checks need no order and skip
    the sort of the whole warehouse."""
    sql = _sql(frame.sql_file)
    if frame.uses_current_scores:
        body = _sql("current_scores.sql") if current_scores is None else f"SELECT * FROM {current_scores}"
        sql = f"WITH current_scores AS (\n{body}\n)\n{sql}"
    if ordered:
        sql = f'SELECT * FROM (\n{sql}\n) AS frame ORDER BY "{frame.index}"'
    return sql


def build_frame(con: duckdb.DuckDBPyConnection, frame: Frame, run_id: str | None) -> pd.DataFrame:
    """Run the frame's SQL with the parameters it names (``$run_id``, ``$epsilon``)."""
    sql = frame_sql(frame, ordered=True)
    available = {"run_id": run_id, "epsilon": EPSILON}
    params = {name: available[name] for name in set(PARAM_RE.findall(sql))}
    return con.execute(sql, params).df()


def build_frames(con: duckdb.DuckDBPyConnection, run_id: str | None = None) -> dict[str, pd.DataFrame]:
    return {name: build_frame(con, frame, run_id) for name, frame in FRAMES.items()}


# -- running ---------------------------------------------------------------------------------


def levels(con: duckdb.DuckDBPyConnection) -> dict[str, Level]:
    """Each expectation's level: the default unless ``curation_setting`` overrides it."""
    chosen: dict[str, Level] = {f"{c.suite}.{c.name}": c.level for c in CHECKS}
    rows = con.execute(
        "SELECT key, value FROM curation_setting WHERE starts_with(key, ?)", [LEVEL_SETTING_PREFIX]
    ).fetchall()
    for key, value in rows:
        name = key.removeprefix(LEVEL_SETTING_PREFIX)
        if name in chosen and value in ("error", "warning"):
            chosen[name] = value
    return chosen


def validate_frames(
    frames: dict[str, pd.DataFrame],
    *,
    run_id: str | None = None,
    level_of: dict[str, Level] | None = None,
    today: date | None = None,
    project: Path | None = None,
) -> ValidationSummary:
    """Run every suite on prepared frames (tests feed frames the tables' constraints forbid).

    ``project``: a great-expectations project folder that keeps the results (else in memory,
    forgotten after the run)."""
    t0 = time.perf_counter()
    gxset = _gx(str(project) if project else None)
    stamp = datetime.now(UTC)
    summary = ValidationSummary(f"val-{stamp:%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}", run_id)
    summary.setup_s = time.perf_counter() - t0
    today_ts = datetime.combine(today or stamp.date(), datetime.min.time())
    level_of = level_of or {f"{c.suite}.{c.name}": c.level for c in CHECKS}
    for name, frame in FRAMES.items():
        df = frames[name]
        summary.frame_rows[name] = len(df)
        result = gxset.checkpoints[name].run(
            batch_parameters={"dataframe": df}, expectation_parameters={"today": today_ts}
        )
        for suite_result in result.run_results.values():
            for er in suite_result.results:
                summary.outcomes.append(_outcome(er, frame, level_of))
    if project is None:
        _forget_results(gxset.context)
    order = {(c.suite, c.name): i for i, c in enumerate(CHECKS)}
    summary.outcomes.sort(key=lambda o: order[(o.suite, o.name)])
    summary.duration_s = time.perf_counter() - t0 - summary.setup_s
    return summary


def evaluate(
    con: duckdb.DuckDBPyConnection, run_id: str | None = None, *, project: Path | None = None
) -> ValidationSummary:
    """Build the frames from the warehouse and validate them (results kept in ``project`` if given)."""
    t0 = time.perf_counter()
    summary = validate_frames(build_frames(con, run_id), run_id=run_id, level_of=levels(con), project=project)
    summary.duration_s = time.perf_counter() - t0 - summary.setup_s
    return summary


def run_checkpoint(
    con: duckdb.DuckDBPyConnection, run_id: str | None = None, *, project: Path | None = None
) -> ValidationSummary:
    """Validate the warehouse and store one ``validation_result`` row per expectation (and, with
    ``project``, GE's own results in that great-expectations project folder).

    Never raises on a failed expectation: the caller reads ``summary.success``. The rows are
    written in the caller's transaction, if any.
    """
    summary = evaluate(con, run_id, project=project)
    store_results(con, summary)
    return summary


def store_results(con: duckdb.DuckDBPyConnection, summary: ValidationSummary) -> None:
    insert_rows(
        con,
        "validation_result",
        [
            {
                "validation_id": summary.validation_id,
                "run_id": summary.run_id,
                "suite": o.suite,
                "expectation": o.name,
                "success": o.success,
                "observed": json.dumps(o.observed, default=str, allow_nan=False),
            }
            for o in summary.outcomes
        ],
    )


# -- result conversion -----------------------------------------------------------------------


def _outcome(er: Any, frame: Frame, level_of: dict[str, Level]) -> ExpectationOutcome:
    config = er.expectation_config
    suite, name = config.meta["suite"], config.meta["name"]
    level = level_of.get(f"{suite}.{name}", "error")
    raw = dict(er.result or {})
    observed: dict[str, Any] = {"level": level, "frame": frame.name, "index": frame.index}
    observed["expectation_type"] = config.type
    for key in ("element_count", "unexpected_count", "unexpected_percent", "missing_count", "observed_value"):
        if key in raw:
            observed[key] = raw[key]
    if "partial_unexpected_index_list" in raw:
        observed["examples"] = raw["partial_unexpected_index_list"]
    info = er.exception_info or {}
    if info.get("raised_exception"):
        observed["exception"] = info.get("exception_message")
    return ExpectationOutcome(suite, name, level, bool(er.success), config.description or name, _jsonable(observed))


def _jsonable(value: Any) -> Any:
    """numpy scalars, timestamps and NaN (GE reports missing values as NaN) made JSON-safe."""
    if isinstance(value, dict):
        return {str(k): _jsonable(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [_jsonable(v) for v in value]
    if hasattr(value, "item") and not isinstance(value, str | bytes):
        value = value.item()
    if isinstance(value, float) and not math.isfinite(value):
        return None
    if isinstance(value, datetime | date):
        return value.isoformat()
    if value is None or isinstance(value, bool | int | float | str):
        return value
    return str(value)


def _forget_results(context: Any) -> None:
    """Drop the results GE kept in its in-memory store: a long refresh should not accumulate them."""
    store = context.validation_results_store
    for key in store.list_keys():
        store.remove_key(key)
