"""The validation suites on real DuckDB files: each expectation passes on a clean warehouse built
through the EEE import, fails when its property is broken, and fails a load from inside it."""

from __future__ import annotations

import json
import shutil
import uuid
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import duckdb
import pandas as pd
import pytest
from eee_records import eee_record, write_tree
from score_rows import first_score, insert_score

from evalhouse.common.resources import read_sql
from evalhouse.curation.registry import load_registry
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.checks.sql import checkpoint_after_load, evaluate_sql
from evalhouse.warehouse.checks.suites import (
    CHECKS,
    FRAMES,
    build_frames,
    run_checkpoint,
    validate_frames,
)
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load.ledger import LoadPlan, RunContext, SourceRow, run_load
from evalhouse.warehouse.raw.store import RawStore

N_MODELS = 6


def record_for(
    model_id: str,
    score: float = 0.5,
    bench: str = "demo_bench",
    *,
    name: str | None = None,
    release_date: str | None = "2024-05-01",
    results: int = 1,
) -> dict[str, Any]:
    """A valid EEE 0.3.0 record; ``results`` > 1 adds one result per benchmark ``<bench>_<i>``."""
    benches = [bench] if results == 1 else [f"{bench}_{i}" for i in range(results)]
    return eee_record(
        model_id,
        dict.fromkeys(benches, score),
        name=name,
        release_date=release_date,
        evaluation_id=f"c/{model_id}/{uuid.uuid4().hex[:8]}",
    )


def clean_records() -> list[dict[str, Any]]:
    return [record_for(f"org/m{i}", 0.1 + 0.1 * i) for i in range(N_MODELS)]


@pytest.fixture(scope="module")
def clean_db(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse built by the EEE import: 6 models on one (provisional) benchmark, with dates."""
    root = tmp_path_factory.mktemp("clean")
    tree = write_tree(root / "tree", clean_records())
    with Warehouse.open(root / "w.duckdb") as wh:
        summary = import_tree(wh, tree, RawStore(root / "w.raw"))
        assert summary.quarantined == 0 and not summary.failed
    return root / "w.duckdb"


@pytest.fixture
def wh(clean_db: Path, tmp_path: Path) -> Iterator[Warehouse]:
    """A private copy of the clean warehouse, so each test may break it."""
    copy = tmp_path / "w.duckdb"
    shutil.copy(clean_db, copy)
    with Warehouse.open(copy) as w:
        yield w


def outcome(summary, qualified: str):
    return next(o for o in summary.outcomes if o.qualified_name == qualified)


def copy_score(con: duckdb.DuckDBPyConnection, **overrides: Any) -> None:
    """Insert a copy of the first score with ``overrides`` (a fresh fingerprint and source row)."""
    row = first_score(con)
    row.pop("score_id")
    row |= {"fingerprint": uuid.uuid4().hex, "source_row_key": uuid.uuid4().hex} | overrides
    insert_score(con, row)


# -- a clean warehouse -----------------------------------------------------------------------


def test_a_clean_imported_warehouse_passes_every_expectation(wh: Warehouse) -> None:
    summary = run_checkpoint(wh.con)
    assert summary.success, summary.message()
    assert not summary.warnings
    assert {o.qualified_name for o in summary.outcomes} == {f"{c.suite}.{c.name}" for c in CHECKS}
    stored = wh.con.execute(
        "SELECT count(*), count(DISTINCT validation_id), bool_and(success), any_value(run_id) FROM validation_result"
    ).fetchone()
    assert stored == (len(CHECKS), 1, True, None)
    # The registry sync filled many registry benchmarks nobody observed: they are not orphans.
    unobserved = wh.scalar(
        "SELECT count(*) FROM benchmark b WHERE registry_version NOT LIKE 'provisional:%'"
        " AND NOT EXISTS (SELECT 1 FROM score s WHERE s.benchmark_id = b.benchmark_id)"
    )
    assert unobserved > 0 and summary.frame_rows["benchmarks"] == 1
    print(
        f"\ncheckpoint on {summary.frame_rows['scores']} scores: {summary.duration_s:.3f} s "
        f"(+ {summary.setup_s:.2f} s first-use GE import/build)"
    )


# -- each error-level expectation fails when its property is broken ---------------------------

BREAKERS: dict[str, Callable[[duckdb.DuckDBPyConnection], None]] = {
    "referential_integrity.score_evaluation_exists": lambda con: copy_score(con, evaluation_id="ghost"),
    "referential_integrity.score_model_config_exists": lambda con: copy_score(con, config_id="ghost"),
    "referential_integrity.score_benchmark_exists": lambda con: copy_score(con, benchmark_id="ghost"),
    "referential_integrity.score_metric_exists": lambda con: copy_score(con, metric_id="ghost"),
    "referential_integrity.evaluation_raw_snapshot_exists": lambda con: con.execute(
        "UPDATE evaluation SET raw_sha256 = repeat('0', 64)"
        " WHERE evaluation_id = (SELECT min(evaluation_id) FROM evaluation)"
    ),
    "referential_integrity.model_config_base_model_exists": lambda con: con.execute(
        "UPDATE model_config SET base_model_id = 'ghost' WHERE config_id = (SELECT min(config_id) FROM model_config)"
    ),
    "orphans.model_config_has_evaluations": lambda con: con.execute(
        "INSERT INTO model_config (config_id, base_model_id, name)"
        " SELECT 'lonely', base_model_id, 'lonely' FROM model_config LIMIT 1"
    ),
    "orphans.benchmark_has_current_scores": lambda con: con.execute(
        "INSERT INTO benchmark (benchmark_id, display_name, registry_version)"
        " VALUES ('c.never_scored', 'never scored', 'provisional:eee-c')"
    ),
    "bounds.score_value_not_above_metric_max": lambda con: con.execute(
        "UPDATE score_value SET value = 1.5 WHERE score_id = (SELECT min(score_id) FROM score_value)"
    ),
    "bounds.score_value_not_below_metric_min": lambda con: con.execute(
        "UPDATE score_value SET value = -0.2 WHERE score_id = (SELECT min(score_id) FROM score_value)"
    ),
    "release_dates.release_date_not_in_future": lambda con: con.execute(
        "UPDATE release_date_evidence SET date = current_date + 40"
        " WHERE evidence_id = (SELECT min(evidence_id) FROM release_date_evidence)"
    ),
    "release_dates.release_date_not_before_2015": lambda con: con.execute(
        "UPDATE release_date_evidence SET date = DATE '2014-06-01'"
        " WHERE evidence_id = (SELECT min(evidence_id) FROM release_date_evidence)"
    ),
}


@pytest.mark.parametrize("expectation", sorted(BREAKERS))
def test_each_expectation_fails_when_its_property_is_broken(wh: Warehouse, expectation: str) -> None:
    BREAKERS[expectation](wh.con)
    summary = run_checkpoint(wh.con)
    failed = [o.qualified_name for o in summary.failures]
    assert expectation in failed, summary.message()
    assert not summary.success
    assert f"expectation {failed[0]} failed" in summary.message()
    broken = outcome(summary, expectation)
    assert broken.observed["unexpected_count"] == 1 and broken.observed["examples"]
    row = wh.con.execute(
        "SELECT success, observed FROM validation_result WHERE suite || '.' || expectation = ?", [expectation]
    ).fetchone()
    assert row[0] is False and json.loads(row[1])["level"] == "error"


def test_a_qualified_metric_id_takes_its_base_metrics_bounds(wh: Warehouse) -> None:
    copy_score(wh.con, metric_id="accuracy.easy", value=0.7)
    assert run_checkpoint(wh.con).success  # exists through its base metric, within [0, 1]
    copy_score(wh.con, metric_id="accuracy.hard", value=1.2)
    summary = run_checkpoint(wh.con)
    assert [o.qualified_name for o in summary.failures] == ["bounds.score_value_not_above_metric_max"]


def test_duplicate_fingerprints_fail_the_uniqueness_suite(wh: Warehouse) -> None:
    # The tables' UNIQUE constraints refuse a duplicate outright...
    with pytest.raises(duckdb.ConstraintException):
        copy_score(wh.con, fingerprint=wh.scalar("SELECT min(fingerprint) FROM score"))
    # ...so the suite's own check is exercised on the frames, as if a constraint were bypassed.
    frames = build_frames(wh.con)
    for name in ("scores", "evaluations"):
        frames[name] = pd.concat([frames[name], frames[name].iloc[[0]]], ignore_index=True)
    summary = validate_frames(frames)
    assert {o.qualified_name for o in summary.failures} == {
        "uniqueness.score_fingerprint_unique",
        "uniqueness.evaluation_fingerprint_unique",
    }


def test_repeated_fingerprints_are_counted_alike_by_sql_and_great_expectations(wh: Warehouse) -> None:
    # Temporary copies without the UNIQUE constraints shadow the keyed tables (DuckDB looks in
    # temp first), so both engines read the same warehouse with repeats in it.
    con = wh.con
    for table in ("score_value", "evaluation"):
        con.execute(f"CREATE TEMP TABLE {table} AS SELECT * FROM main.{table}")
    first = con.execute("SELECT min(score_id), max(score_id) FROM score_value").fetchone()
    # two repeats of one fingerprint (three rows), one of another (two rows): five unexpected rows
    con.execute(
        "INSERT INTO score_value SELECT * REPLACE (score_id + 1000 AS score_id) FROM score_value WHERE score_id = ?",
        [first[0]],
    )
    con.execute(
        "INSERT INTO score_value SELECT * REPLACE (score_id + 2000 AS score_id) FROM score_value WHERE score_id = ?",
        [first[0]],
    )
    con.execute(
        "INSERT INTO score_value SELECT * REPLACE (score_id + 3000 AS score_id) FROM score_value WHERE score_id = ?",
        [first[1]],
    )
    con.execute(
        "INSERT INTO evaluation SELECT * REPLACE (evaluation_id || '#copy' AS evaluation_id) FROM evaluation"
        " WHERE evaluation_id = (SELECT min(evaluation_id) FROM evaluation)"
    )
    sql = evaluate_sql(con)
    gx = validate_frames(build_frames(con))
    for name, repeats in (("uniqueness.score_fingerprint_unique", 5), ("uniqueness.evaluation_fingerprint_unique", 2)):
        a, b = outcome(sql, name), outcome(gx, name)
        assert not a.success and not b.success
        assert a.observed["unexpected_count"] == b.observed["unexpected_count"] == repeats, name
        assert a.observed["examples"] == b.observed["examples"], name
        assert a.observed["unexpected_percent"] == pytest.approx(b.observed["unexpected_percent"]), name
    assert sql.message() == gx.message()


def test_a_benchmark_with_fewer_than_5_rows_warns_without_failing(wh: Warehouse) -> None:
    copy_score(wh.con, benchmark_id="mmlu")  # a registry benchmark, now observed once
    summary = run_checkpoint(wh.con)
    assert summary.success, summary.message()
    assert [o.qualified_name for o in summary.warnings] == ["coverage.benchmark_has_at_least_5_rows"]
    assert outcome(summary, "coverage.benchmark_has_at_least_5_rows").observed["examples"] == [
        {"n_current_scores": 1, "benchmark_id": "mmlu"}
    ]
    level = wh.scalar(
        "SELECT observed->>'level' FROM validation_result WHERE expectation = 'benchmark_has_at_least_5_rows'"
    )
    assert level == "warning"


def test_a_curation_setting_can_downgrade_an_expectation(wh: Warehouse) -> None:
    BREAKERS["orphans.model_config_has_evaluations"](wh.con)
    wh.con.execute(
        "INSERT INTO curation_setting (key, value, reason) VALUES"
        " ('expectation_level:orphans.model_config_has_evaluations', 'warning', 'test')"
    )
    summary = run_checkpoint(wh.con)
    assert summary.success
    assert "orphans.model_config_has_evaluations" in [o.qualified_name for o in summary.warnings]


def test_a_model_listed_without_scores_is_a_warning_not_an_error(wh: Warehouse) -> None:
    evaluation = wh.scalar("SELECT min(evaluation_id) FROM evaluation")
    config = wh.scalar("SELECT config_id FROM evaluation WHERE evaluation_id = ?", [evaluation])
    wh.con.execute(
        "DELETE FROM score_value WHERE evaluation_id IN (SELECT evaluation_id FROM score WHERE config_id = ?)", [config]
    )
    summary = run_checkpoint(wh.con)
    assert summary.success, summary.message()
    assert "orphans.model_config_has_current_scores" in [o.qualified_name for o in summary.warnings]


# -- the checkpoint inside a load -------------------------------------------------------------


def load(wh: Warehouse, store: RawStore, records: list[dict[str, Any]], source_key: str = "eee-c"):
    """One run_load of ``records`` with the checkpoint as its after_load hook."""
    entries, items = [], []
    for i, rec in enumerate(records):
        entry = store.put(json.dumps(rec).encode(), source_key=source_key, url=f"file:///load/{i}.json")
        entries.append(entry)
        items.append(ParsedRecord(record=rec, locator=f"load/{i}.json", raw_sha256=entry.sha256))
    source = SourceRow(source_key, "EEE datastore collection c", "eee_datastore", None, None, None)
    ctx = RunContext(
        source=source, trigger="test", registry=load_registry(), collection="c",
        allow_provisional=True, identity_from="id", after_load=checkpoint_after_load,
    )  # fmt: skip
    return run_load(wh, ctx, LoadPlan(entries=entries, items=lambda: items))


def test_a_clean_load_passes_and_commits_its_validation_results(wh: Warehouse, tmp_path: Path) -> None:
    result = load(wh, RawStore(tmp_path / "w.raw"), [record_for("org/new", 0.4)])
    assert result.status == "completed", result.error
    assert wh.scalar("SELECT count(*) FROM validation_result WHERE run_id = ?", [result.run_id]) == len(CHECKS)


def test_a_failing_checkpoint_rolls_the_load_back_and_records_why(wh: Warehouse, tmp_path: Path) -> None:
    """A failure no row can be quarantined for (here a coverage check a person raised to an error,
    which a new benchmark of one row fails) is the collection's: the load rolls back."""
    wh.con.execute(
        "INSERT INTO curation_setting (key, value, reason) VALUES"
        " ('expectation_level:coverage.benchmark_has_at_least_5_rows', 'error', 'test')"
    )
    before = wh.scalar("SELECT count(*) FROM evaluation")
    result = load(wh, RawStore(tmp_path / "w.raw"), [record_for("org/old", 0.4, bench="lonely_bench")])
    assert result.status == "failed"
    assert "expectation coverage.benchmark_has_at_least_5_rows failed" in result.error
    assert wh.scalar("SELECT count(*) FROM evaluation") == before
    assert wh.scalar("SELECT count(*) FROM evaluation WHERE run_id = ?", [result.run_id]) == 0
    assert wh.scalar("SELECT count(*) FROM score WHERE run_id = ?", [result.run_id]) == 0
    run = wh.con.execute("SELECT status, error FROM ingest_run WHERE run_id = ?", [result.run_id]).fetchone()
    assert run[0] == "failed" and "coverage.benchmark_has_at_least_5_rows" in run[1]
    # The validation results of the refused load survive its rollback.
    failed = wh.con.execute(
        "SELECT suite || '.' || expectation FROM validation_result WHERE run_id = ? AND NOT success",
        [result.run_id],
    ).fetchall()
    assert failed == [("coverage.benchmark_has_at_least_5_rows",)]


def test_a_release_date_before_2015_is_quarantined_alone_and_the_load_commits(wh: Warehouse, tmp_path: Path) -> None:
    result = load(wh, RawStore(tmp_path / "w.raw"), [record_for("org/old", 0.4, release_date="2014-03-01")])
    assert result.status == "partial", result.error
    assert wh.scalar("SELECT count(*) FROM evaluation WHERE run_id = ?", [result.run_id]) == 1
    assert wh.scalar("SELECT count(*) FROM score WHERE run_id = ?", [result.run_id]) == 1
    (locator, stage, reason), *more = wh.con.execute(
        "SELECT locator, stage, reason FROM quarantine WHERE run_id = ?", [result.run_id]
    ).fetchall()
    assert not more and stage == "validate" and "release_date '2014-03-01' is before 2015-01-01" in reason
    assert locator == "load/0.json / model_info.additional_details.release_date"
    assert wh.scalar("SELECT count(*) FROM release_date_evidence WHERE date < DATE '2015-01-01'") == 0
    verdicts = wh.con.execute("SELECT bool_and(success) FROM validation_result WHERE run_id = ?", [result.run_id])
    assert verdicts.fetchone()[0] is True


def test_a_bad_row_the_warehouse_already_holds_is_quarantined_by_the_next_checkpoint(
    wh: Warehouse, tmp_path: Path
) -> None:
    """A claim written before the loader refused such claims (or with the checkpoint skipped) would
    fail every later load's checkpoint: the checkpoint moves it to quarantine instead, by name."""
    base = wh.scalar("SELECT min(base_model_id) FROM model_config")
    wh.con.execute(
        "INSERT INTO release_date_evidence (evidence_id, base_model_id, date, precision, kind, source_key)"
        " VALUES ('old-claim', ?, DATE '1900-01-01', 'day', 'aggregator_field', 'eee-c')",
        [base],
    )
    result = load(wh, RawStore(tmp_path / "w.raw"), [record_for("org/new", 0.4)])
    assert result.status == "completed", result.error
    assert wh.scalar("SELECT count(*) FROM release_date_evidence WHERE evidence_id = 'old-claim'") == 0
    (locator, stage, reason, payload), *more = wh.con.execute(
        "SELECT locator, stage, reason, payload FROM quarantine WHERE run_id = ?", [result.run_id]
    ).fetchall()
    assert not more and (locator, stage) == ("release_date_evidence old-claim", "expectation")
    assert reason.startswith("expectation release_dates.release_date_not_before_2015 failed")
    assert "1900-01-01" in reason and json.loads(payload)["evidence_id"] == "old-claim"
    verdicts = wh.con.execute("SELECT bool_and(success) FROM validation_result WHERE run_id = ?", [result.run_id])
    assert verdicts.fetchone()[0] is True


def test_a_renamed_model_keeps_both_rows_and_is_no_orphan(wh: Warehouse, tmp_path: Path) -> None:
    """A datastore renames a model's display name between runs (same repository id): the artefact,
    so the configuration, is the same, but the name is part of a source row's identity, so the old
    row is not superseded (both stay candidates of the cell) and nothing is orphaned; a value
    re-reported under the same name supersedes the old one."""
    store = RawStore(tmp_path / "w.raw")
    assert load(wh, store, [record_for("org/alpha", 0.3, name="alpha-v1")]).status == "completed"
    assert load(wh, store, [record_for("org/alpha", 0.35, name="alpha-v2")]).status == "completed"
    assert wh.scalar("SELECT count(DISTINCT config_id) FROM v_score_current WHERE config_id LIKE 'org/alpha%'") == 1
    assert wh.scalar("SELECT count(*) FROM v_score_current WHERE config_id LIKE 'org/alpha%'") == 2
    assert load(wh, store, [record_for("org/alpha", 0.4, name="alpha-v2")]).status == "completed"
    current = wh.con.execute(
        "SELECT value FROM v_score_current s JOIN evaluation e USING (evaluation_id) WHERE e.model_name = 'alpha-v2'"
    ).fetchall()
    assert current == [(0.4,)]


def test_a_cell_reported_again_records_its_supersession_and_a_first_load_has_none(
    wh: Warehouse, tmp_path: Path
) -> None:
    """A source reporting a cell again on a later fetch records one supersession naming both
    scores and both values. A source's first load can supersede nothing: the cheap check says so
    and the supersession query is not run; after a second load the check says it may."""
    store = RawStore(tmp_path / "w.raw")
    possible = read_sql("evalhouse.warehouse", "supersession_possible.sql")
    first = load(wh, store, [record_for("org/alpha", 0.3, name="alpha")], source_key="eee-fresh")
    assert first.status == "completed", first.error
    assert first.decisions["supersession"] == 0
    assert wh.scalar(possible, [first.run_id]) is False
    again = load(wh, store, [record_for("org/alpha", 0.35, name="alpha")], source_key="eee-fresh")
    assert again.status == "completed", again.error
    assert wh.scalar(possible, [again.run_id]) is True
    assert again.decisions["supersession"] == 1
    subject, detail = wh.con.execute(
        "SELECT subject, detail FROM curation_decision WHERE kind = 'supersession' AND run_id = ?", [again.run_id]
    ).fetchone()
    subject, detail = json.loads(subject), json.loads(detail)
    new_id, old_id = (
        wh.scalar("SELECT s.score_id FROM score s WHERE s.run_id = ?", [r.run_id]) for r in (again, first)
    )
    assert (subject["score_id"], subject["superseded_score_id"]) == (new_id, old_id)
    assert (detail["old_value"], detail["new_value"], detail["source_key"]) == (0.3, 0.35, "eee-fresh")
    assert wh.scalar("SELECT value FROM v_score_current WHERE config_id LIKE 'org/alpha%'") == 0.35


def test_checkpoint_time_on_ten_thousand_scores(tmp_path: Path) -> None:
    """Not an assertion on speed: prints the checkpoint time at the warehouse's everyday scale."""
    records = [record_for(f"org/s{i}", 0.5, bench="scale", results=50) for i in range(200)]
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        import_tree(wh, write_tree(tmp_path / "tree", records), RawStore(tmp_path / "w.raw"))
        summary = run_checkpoint(wh.con)
    assert summary.frame_rows["scores"] == 10_000
    assert summary.success, summary.message()
    print(f"\ncheckpoint on {summary.frame_rows['scores']:,} scores: {summary.duration_s:.3f} s")


# -- the SQL checkpoint that runs inside loads agrees with great-expectations -------------------


def _verdicts(summary) -> dict[str, tuple[bool, int | None]]:
    return {o.qualified_name: (o.success, o.observed.get("unexpected_count")) for o in summary.outcomes}


@pytest.mark.parametrize("expectation", ["clean", *sorted(BREAKERS)])
def test_the_sql_checkpoint_agrees_with_great_expectations(wh: Warehouse, expectation: str) -> None:
    if expectation != "clean":
        BREAKERS[expectation](wh.con)
    gx = run_checkpoint(wh.con)
    sql = evaluate_sql(wh.con)
    assert _verdicts(sql) == _verdicts(gx)
    assert sql.message() == gx.message()
    for a, b in zip(sql.outcomes, gx.outcomes, strict=True):
        assert a.observed["examples"] == b.observed.get("examples", []), a.qualified_name
        assert a.observed["element_count"] == b.observed["element_count"], a.qualified_name


def test_fingerprints_the_keys_make_unique_are_not_counted_again(wh: Warehouse) -> None:
    """A score's id is its fingerprint's and the key is on the id; an evaluation's fingerprint has a
    UNIQUE constraint: the checkpoint trusts those (no grouping of every fingerprint per load), and
    counts again whenever the name reads a table without them."""
    from evalhouse.warehouse.checks.sql import enforced

    checks = {c.name: c for c in CHECKS}
    for frame, check in (("scores", "score_fingerprint_unique"), ("evaluations", "evaluation_fingerprint_unique")):
        assert enforced(wh.con, FRAMES[frame], checks[check]), check
    wh.con.execute("CREATE TEMP TABLE score_value AS SELECT * FROM main.score_value")
    assert not enforced(wh.con, FRAMES["scores"], checks["score_fingerprint_unique"])
    assert enforced(wh.con, FRAMES["evaluations"], checks["evaluation_fingerprint_unique"])
