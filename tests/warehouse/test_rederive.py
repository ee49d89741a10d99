"""Re-deriving identities is a migration: a warehouse whose scores were derived under older rules
is upgraded to exactly what a fresh load under the current rules holds, every change a recorded
decision, and a snapshot of its old state still verifies and opens.

The older rules are reproduced on a copy of the real warehouse (Epoch AI + Artificial Analysis
through the real refresh), the way the previous evalhouse stored them: Epoch's own GPQA Diamond
runs keyed by their harness (``harness=inspect_ai``, so they never met AA's), AA's August 2024
GPT-4o under an older configuration id, and Epoch's GPQA Diamond under a benchmark the registry did
not know yet. The reference is the untouched real warehouse.
"""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner
from realwarehouse import copy_warehouse

from evalhouse.cli import app
from evalhouse.warehouse import db as db_module
from evalhouse.warehouse.db import Warehouse, migrations
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.freeze import create_snapshot
from evalhouse.warehouse.snapshot.reader import open_snapshot
from evalhouse.warehouse.snapshot.verify import verify_snapshot

NEW_CONFIG, OLD_CONFIG = "openai/gpt-4o|date=2024-08-06", "openai/gpt-4o|date=aug-24"
#: The migrations that re-derive identities; the old state is the warehouse without them.
REDERIVING = (91, 94)
OLD_BENCHMARK = "epoch_benchmarks.gpqa_diamond"
SCORE_COLUMNS = "* EXCLUDE (loaded_at, canonical_steps), CAST(canonical_steps AS VARCHAR) AS steps"
SHARED_GPQA = (
    "SELECT count(*) FROM v_scores_canonical WHERE benchmark_id = 'gpqa_diamond' AND list_contains(candidate_sources,"
    " 'epoch-benchmarks') AND list_contains(candidate_sources, 'artificial-analysis')"
)
ROW_KEYS = """
UPDATE score_value SET source_row_key = k.source_row_key
FROM (
    SELECT v.score_id,
           source_row_key(v.source_key, e.model_source_id, coalesce(e.model_name, ''), e.config_id, g.benchmark_id,
                          g.subset, g.metric_id, u.metric_params_key, u.setup_key, e.original_source,
                          e.original_source_url,
                          coalesce(json_extract_string(e.record, '$.evaluation_results[' || v.result_index
                                                       || '].score_details.details.source_record_id'), ''),
                          v.evaluation_result_id) AS source_row_key
    FROM score_value v JOIN evaluation e USING (evaluation_id) JOIN score_group g USING (group_id)
    JOIN score_setup u USING (setup_id)
) k
WHERE score_value.score_id = k.score_id
"""


def older_rules(con: duckdb.DuckDBPyConnection) -> dict[str, int]:
    """Put the copy back in the state the previous rules left: returns what was changed."""
    moved = con.execute(
        "SELECT evaluation_id FROM evaluation WHERE source_key = 'artificial-analysis' AND config_id = ?", [NEW_CONFIG]
    ).fetchall()
    con.execute(f"INSERT INTO model_config SELECT * REPLACE ('{OLD_CONFIG}' AS config_id) FROM model_config"
                f" WHERE config_id = '{NEW_CONFIG}'")  # fmt: skip
    ids = [m[0] for m in moved]
    con.execute("UPDATE evaluation SET config_id = ? WHERE list_contains(?, evaluation_id)", [OLD_CONFIG, ids])
    con.execute(f"INSERT INTO model_attribute SELECT * REPLACE ('{OLD_CONFIG}' AS config_id) FROM model_attribute"
                " WHERE list_contains(?, evaluation_id)", [ids])  # fmt: skip
    con.execute(
        "DELETE FROM model_attribute WHERE config_id = ? AND list_contains(?, evaluation_id)", [NEW_CONFIG, ids]
    )
    con.execute(
        "UPDATE release_date_evidence SET config_id = ? WHERE config_id = ? AND source_key = 'artificial-analysis'",
        [OLD_CONFIG, NEW_CONFIG],
    )
    harness = con.execute(
        "SELECT count(*) FROM score_value v JOIN score_setup u USING (setup_id)"
        " WHERE u.setup_key = '' AND json_extract_string(u.setup, '$.harness') = 'inspect_ai'"
    ).fetchone()[0]
    con.execute(
        "CREATE TEMP TABLE _old_setup AS SELECT setup_id, score_setup_id(metric_params, metric_params_key,"
        " 'harness=inspect_ai', setup, generation_config) AS old_id FROM score_setup"
        " WHERE setup_key = '' AND json_extract_string(setup, '$.harness') = 'inspect_ai'"
    )
    con.execute(
        "INSERT INTO score_setup SELECT o.old_id, u.metric_params, u.metric_params_key, 'harness=inspect_ai', u.setup,"
        " u.generation_config FROM score_setup u JOIN _old_setup o USING (setup_id)"
    )
    con.execute("UPDATE score_value SET setup_id = o.old_id FROM _old_setup o WHERE score_value.setup_id = o.setup_id")
    con.execute("DELETE FROM score_setup WHERE setup_id IN (SELECT setup_id FROM _old_setup)")
    con.execute(
        "CREATE TEMP TABLE _old_group AS SELECT group_id, score_group_id(benchmark_raw, ?, subset, metric_raw,"
        " metric_id, raw_unit, unit, lower_is_better, steps) AS old_id FROM score_group"
        " WHERE benchmark_id = 'gpqa_diamond' AND benchmark_raw = 'gpqa_diamond'",
        [OLD_BENCHMARK],
    )
    con.execute(
        "INSERT INTO score_group SELECT o.old_id, g.* EXCLUDE (group_id) REPLACE (? AS benchmark_id)"
        " FROM score_group g JOIN _old_group o USING (group_id)",
        [OLD_BENCHMARK],
    )
    renamed = con.execute(
        "SELECT count(*) FROM score_value WHERE group_id IN (SELECT group_id FROM _old_group)"
    ).fetchone()[0]
    con.execute("UPDATE score_value SET group_id = o.old_id FROM _old_group o WHERE score_value.group_id = o.group_id")
    con.execute("DELETE FROM score_group WHERE group_id IN (SELECT group_id FROM _old_group)")
    con.execute(ROW_KEYS)
    con.execute("DELETE FROM _migrations WHERE list_contains(?, version)", [list(REDERIVING)])
    return {"evaluations": len(ids), "harness_scores": harness, "renamed_scores": renamed}


def rows(con: duckdb.DuckDBPyConnection, sql: str) -> list[tuple]:
    return sorted(con.execute(sql).fetchall(), key=repr)


@pytest.fixture(scope="module")
def upgraded(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    root = tmp_path_factory.mktemp("rederive")
    db = copy_warehouse(real_warehouse, root / "db")
    con = duckdb.connect(str(db))
    changed = older_rules(con)
    con.close()
    # a snapshot of the old state, made by a writer that knows every migration but the re-deriving ones
    older = [m for m in migrations() if m.version not in REDERIVING]
    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(db_module, "migrations", lambda: older)
        with Warehouse.open(db) as wh:
            assert wh.schema_version() == older[-1].version
            old_shared = wh.scalar(SHARED_GPQA)
            snap = create_snapshot(wh, root / "snap", RawStore(db.with_suffix(".raw")))
    with Warehouse.open(db) as wh:  # the upgrade: migrations 0091 and 0094 re-derive
        assert wh.schema_version() == max(m.version for m in migrations())
    return {
        "db": db,
        "snapshot": snap.path,
        "changed": changed,
        "old_shared": old_shared,
        "old_version": older[-1].version,
    }


def test_the_upgraded_warehouse_holds_what_a_fresh_load_holds(upgraded: dict, real_warehouse: Path) -> None:
    got, want = duckdb.connect(str(upgraded["db"]), read_only=True), duckdb.connect(str(real_warehouse), read_only=True)
    try:
        for sql in (
            f"SELECT {SCORE_COLUMNS} FROM score",
            "SELECT * FROM score_group",
            "SELECT * FROM score_setup",
            "SELECT * FROM model_attribute",
            "SELECT * EXCLUDE (recorded_at) FROM release_date_evidence",
            "SELECT evaluation_id, config_id FROM evaluation",
        ):
            assert rows(got, sql) == rows(want, sql), sql
        assert got.execute(SHARED_GPQA).fetchone()[0] == want.execute(SHARED_GPQA).fetchone()[0] >= 22
    finally:
        got.close()
        want.close()
    assert upgraded["old_shared"] == 0  # before the upgrade no GPQA Diamond cell held both sources


def test_every_change_is_a_decision_naming_the_migration(upgraded: dict) -> None:
    changed = upgraded["changed"]
    assert changed["evaluations"] >= 1 and changed["harness_scores"] >= 100 and changed["renamed_scores"] >= 100
    con = duckdb.connect(str(upgraded["db"]), read_only=True)
    try:
        found = {
            kind: [(json.loads(s), json.loads(d), r) for s, d, r in rows_]
            for kind, rows_ in (
                (k, con.execute("SELECT subject, detail, rule FROM curation_decision WHERE kind = ?", [k]).fetchall())
                for k in ("configuration_rederived", "benchmark_rederived", "cell_rederived")
            )
        }
    finally:
        con.close()
    [(subject, detail, rule)] = found["configuration_rederived"]
    assert (subject["from"], subject["to"], detail["evaluations"]) == (OLD_CONFIG, NEW_CONFIG, changed["evaluations"])
    assert "migration 0091" in rule
    [(subject, detail, _)] = found["benchmark_rederived"]
    assert (subject["from"]["benchmark_id"], subject["to"]["benchmark_id"]) == (OLD_BENCHMARK, "gpqa_diamond")
    assert detail["scores"] == changed["renamed_scores"]
    cells = {(s["source_key"], s["from_setup_key"], s["to_setup_key"]): d["scores"]
             for s, d, _ in found["cell_rederived"]}  # fmt: skip
    assert cells == {("epoch-benchmarks", "harness=inspect_ai", ""): changed["harness_scores"]}


def test_a_snapshot_of_the_old_state_still_verifies_and_opens(upgraded: dict) -> None:
    snap = upgraded["snapshot"]
    report = verify_snapshot(snap)
    assert report.ok, report.problems()
    con = open_snapshot(snap)
    try:
        assert con.execute("SELECT schema_version FROM snapshot_meta").fetchone()[0] == upgraded["old_version"]
        # it shows the cells as they were: Epoch's GPQA Diamond runs under the old benchmark and key
        assert con.execute(SHARED_GPQA).fetchone()[0] == 0
        assert (
            con.execute(
                "SELECT count(*) FROM v_scores_canonical WHERE benchmark_id = ? AND setup_key = 'harness=inspect_ai'",
                [OLD_BENCHMARK],
            ).fetchone()[0]
            >= 100
        )
    finally:
        con.close()
    runner = CliRunner()
    assert runner.invoke(app, ["snapshot", "verify", str(snap)]).exit_code == 0
    out = runner.invoke(app, ["snapshot", "open", str(snap), "--sql", "SELECT count(*) AS n FROM v_scores_canonical"])
    assert out.exit_code == 0, out.output


def test_re_deriving_again_changes_nothing(upgraded: dict) -> None:
    out = CliRunner().invoke(app, ["--db", str(upgraded["db"]), "curate", "rederive", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["scores_read"] > 10_000
    assert {k: report[k] for k in ("configurations", "groups", "setups", "scores_moved", "refused", "decisions")} == {
        "configurations": 0, "groups": 0, "setups": 0, "scores_moved": 0, "refused": 0, "decisions": 0,
    }  # fmt: skip


def test_a_result_the_rules_would_now_refuse_is_left_as_it_is_and_counted(real_warehouse: Path, tmp_path: Path) -> None:
    db = copy_warehouse(real_warehouse, tmp_path / "db")
    con = duckdb.connect(str(db))
    # one stored result whose unit the registries do not know (as if a unit had left them)
    score_id, evaluation_id, index = con.execute(
        "SELECT score_id, evaluation_id, result_index FROM score WHERE source_key = 'epoch-benchmarks'"
        " AND benchmark_id = 'gpqa_diamond' ORDER BY score_id LIMIT 1"
    ).fetchone()
    [(text,)] = con.execute(
        "SELECT CAST(record AS VARCHAR) FROM evaluation WHERE evaluation_id = ?", [evaluation_id]
    ).fetchall()
    record = json.loads(text)
    record["evaluation_results"][index]["metric_config"]["metric_unit"] = "furlongs"
    con.execute("UPDATE evaluation SET record = ? WHERE evaluation_id = ?", [json.dumps(record), evaluation_id])
    before = con.execute(f"SELECT {SCORE_COLUMNS} FROM score WHERE score_id = ?", [score_id]).fetchall()
    con.close()
    out = CliRunner().invoke(app, ["--db", str(db), "curate", "rederive", "--json"])
    assert out.exit_code == 0, out.output
    report = json.loads(out.output)
    assert report["refused"] == 1 and report["scores_moved"] == 0 and report["decisions"] == 0
    con = duckdb.connect(str(db), read_only=True)
    try:
        assert con.execute(f"SELECT {SCORE_COLUMNS} FROM score WHERE score_id = ?", [score_id]).fetchall() == before
    finally:
        con.close()


def test_migration_0094_gives_artificial_analysis_tau2_its_telecom_subset(real_warehouse: Path, tmp_path: Path) -> None:
    """Before 0094, AA's τ²-Bench Telecom loaded as τ²-bench with no subset, so it could never meet
    the τ²-bench leaderboard's telecom rows; the upgrade moves it, as a decision naming 0094."""
    db = copy_warehouse(real_warehouse, tmp_path / "db")
    con = duckdb.connect(str(db))
    con.execute(
        "CREATE TEMP TABLE _old_group AS SELECT group_id, score_group_id(benchmark_raw, benchmark_id, NULL, metric_raw,"
        " metric_id, raw_unit, unit, lower_is_better, steps) AS old_id FROM score_group"
        " WHERE benchmark_id = 'tau2_bench' AND subset = 'telecom'"
    )
    con.execute(
        "INSERT INTO score_group SELECT o.old_id, g.* EXCLUDE (group_id) REPLACE (NULL AS subset)"
        " FROM score_group g JOIN _old_group o USING (group_id)"
    )
    moved = con.execute(
        "SELECT count(*) FROM score_value WHERE group_id IN (SELECT group_id FROM _old_group)"
    ).fetchone()
    con.execute("UPDATE score_value SET group_id = o.old_id FROM _old_group o WHERE score_value.group_id = o.group_id")
    con.execute("DELETE FROM score_group WHERE group_id IN (SELECT group_id FROM _old_group)")
    con.execute(ROW_KEYS)
    con.execute("DELETE FROM _migrations WHERE version = 94")
    assert (
        con.execute(
            "SELECT count(*) FROM score WHERE source_key = 'artificial-analysis' AND benchmark_id = 'tau2_bench'"
            " AND subset IS NULL"
        ).fetchone()[0]
        == moved[0]
        >= 100
    )
    con.close()
    with Warehouse.open(db):  # the upgrade: migration 0094 re-derives
        pass
    got, want = duckdb.connect(str(db), read_only=True), duckdb.connect(str(real_warehouse), read_only=True)
    try:
        assert rows(got, f"SELECT {SCORE_COLUMNS} FROM score") == rows(want, f"SELECT {SCORE_COLUMNS} FROM score")
        [(subject, detail, rule)] = got.execute(
            "SELECT subject, detail, rule FROM curation_decision WHERE kind = 'benchmark_rederived'"
        ).fetchall()
    finally:
        got.close()
        want.close()
    subject, detail = json.loads(subject), json.loads(detail)
    assert (subject["from"]["subset"], subject["to"]["subset"]) == (None, "telecom")
    assert subject["source_key"] == "artificial-analysis" and detail["scores"] == moved[0]
    assert "migration 0094" in rule
