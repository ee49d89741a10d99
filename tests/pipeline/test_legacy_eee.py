"""The real EEE datastore corpus (2,792 legacy 0.2.x records, ../shared/datasets/eee-datastore-legacy)
imported as a new user would: every result accounted for per collection, nothing collapsed, a
second import adds nothing, and the export passes the EEE project's own validator."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from collections import Counter
from pathlib import Path

import pytest

from evalhouse.config import ENV_MEMORY, raw_store_path
from evalhouse.errors import RunFailed
from evalhouse.pipeline.import_eee import collection_source_key, import_tree
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.eee_export import export_tree
from evalhouse.warehouse.load.ledger import record_view_decisions
from evalhouse.warehouse.raw.store import RawStore

LEGACY = "datasets/eee-datastore-legacy"


def input_results(root: Path) -> dict[str, tuple[int, int]]:
    """Per collection: (records, results) read straight from the files, independently of evalhouse."""
    out: dict[str, list[int]] = {}
    for path in (root / "data").glob("*/*/*/*.json"):
        collection = path.relative_to(root / "data").parts[0]
        record = json.loads(path.read_text())
        counts = out.setdefault(collection, [0, 0])
        counts[0] += 1
        counts[1] += len(record["evaluation_results"])
    return {k: (v[0], v[1]) for k, v in out.items()}


@pytest.fixture(scope="module")
def corpus(shared: Path) -> Path:
    root = shared / LEGACY
    if not (root / "data").is_dir():
        pytest.skip(f"{root} is not there")
    return root


@pytest.fixture(scope="module")
def loaded(corpus: Path, legacy_imported_twice: dict) -> dict:
    """The corpus imported once, then imported again unchanged (built once per test run)."""
    return legacy_imported_twice


@pytest.fixture
def wh(loaded: dict):
    with Warehouse.open(loaded["db"], read_only=True) as w:
        yield w


def test_every_result_is_loaded_quarantined_or_in_a_duplicate_per_collection(corpus: Path, loaded: dict) -> None:
    expected = input_results(corpus)
    runs = {r.source_key: r for r in loaded["first"].runs}
    assert set(runs) == {collection_source_key(c) for c in expected}
    for collection, (records, results) in expected.items():
        r = runs[collection_source_key(collection)].report
        assert r.records_read + r.parse_failures == records, collection
        assert r.records_loaded + r.records_duplicate + r.records_quarantined + r.parse_failures == records
        accounted = r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates + r.scores_in_quarantined_records
        assert accounted == results, f"{collection}: {accounted} accounted for, {results} in the files"
        assert r.records_migrated == r.records_loaded, f"{collection}: every loaded record was 0.2.x"


def test_at_least_95_percent_of_results_are_loaded_and_current(corpus: Path, loaded: dict, wh: Warehouse) -> None:
    results = sum(n for _, n in input_results(corpus).values())
    current = wh.scalar("SELECT count(*) FROM v_score_current WHERE source_key LIKE 'eee-%'")
    loaded_scores = wh.scalar("SELECT count(*) FROM score WHERE source_key LIKE 'eee-%'")
    assert current == loaded_scores, "nothing in one unchanged corpus supersedes anything else"
    assert current >= 0.95 * results, f"{current} of {results} results loaded and current"
    assert not [r for r in loaded["first"].runs if r.status == "failed"]


@pytest.mark.parametrize(
    ("source", "collection"),
    [("eee-helm-mmlu", "helm_mmlu"), ("eee-global-mmlu-lite", "global-mmlu-lite"), ("eee-hal-gaia", "hal-gaia")],
)
def test_results_that_differ_by_subject_language_or_agent_stay_separate_cells(
    corpus: Path, wh: Warehouse, source: str, collection: str
) -> None:
    """HELM MMLU subjects, Global-MMLU-Lite languages and HAL agents were collapsed to one cell each."""
    _, results = input_results(corpus)[collection]
    quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = ?", [source])
    current = wh.scalar("SELECT count(*) FROM v_score_current WHERE source_key = ?", [source])
    cells = wh.scalar("SELECT count(DISTINCT cell_id) FROM v_cell_candidates WHERE source_key = ?", [source])
    assert current == results - quarantined
    assert cells == current, f"{source}: {current} current rows fall into {cells} cells"


@pytest.mark.parametrize(
    ("source", "collection"), [("eee-helm-mmlu", "helm_mmlu"), ("eee-global-mmlu-lite", "global-mmlu-lite")]
)
def test_subjects_and_languages_are_subsets_of_one_benchmark(
    corpus: Path, wh: Warehouse, source: str, collection: str
) -> None:
    """Every evaluation_name of a HELM MMLU / Global-MMLU-Lite record is its own subset of one benchmark
    (the collection's aggregate has no subset)."""
    names = {
        r["evaluation_name"]
        for path in (corpus / "data" / collection).rglob("*.json")
        for r in json.loads(path.read_text())["evaluation_results"]
    }
    assert len(names) >= 15
    found = wh.con.execute(
        "SELECT count(DISTINCT benchmark_id), count(DISTINCT coalesce(subset, '')) FROM score WHERE source_key = ?"
        " AND metric_id <> 'win_rate'",
        [source],
    ).fetchone()
    win_rate_rows = wh.scalar(
        "SELECT count(DISTINCT subset) FROM score WHERE source_key = ? AND metric_id = 'win_rate'", [source]
    )
    assert found == (1, len(names) - win_rate_rows)


def test_hal_agent_scaffolds_are_part_of_the_setup(wh: Warehouse) -> None:
    setups = wh.con.execute(
        "SELECT config_id, count(DISTINCT setup_key) FROM score WHERE source_key = 'eee-hal-gaia' GROUP BY 1"
        " HAVING count(DISTINCT setup_key) > 1"
    ).fetchall()
    assert setups, "HAL runs one model under several agent scaffolds; each is its own setup"
    assert wh.scalar(
        "SELECT count(*) FROM score WHERE source_key = 'eee-hal-gaia' AND setup_key LIKE '%agent_scaffold=%'"
    )


def test_helm_placeholders_are_quarantined_with_the_reason(wh: Warehouse) -> None:
    reasons = Counter(
        r[0].split(":")[0]
        for r in wh.con.execute("SELECT reason FROM quarantine WHERE source_key LIKE 'eee-helm%'").fetchall()
    )
    assert reasons and set(reasons) == {"placeholder -1.0"}
    assert wh.scalar("SELECT count(*) FROM score WHERE source_key LIKE 'eee-helm%' AND raw_value = -1.0") == 0


def test_every_score_says_its_record_was_migrated(wh: Warehouse) -> None:
    missing = wh.scalar(
        "SELECT count(*) FROM score WHERE source_key LIKE 'eee-%'"
        " AND NOT list_contains(CAST(canonical_steps AS VARCHAR[]), 'migrated from EEE 0.2.0 to 0.3.0')"
        " AND NOT list_contains(CAST(canonical_steps AS VARCHAR[]), 'migrated from EEE 0.2.2 to 0.3.0')"
    )
    assert missing == 0


def test_metric_is_read_from_the_description_where_the_record_names_none(corpus: Path, wh: Warehouse) -> None:
    """hfopenllm_v2 results carry no metric_id: 'Accuracy on IFEval' is accuracy."""
    sample = min((corpus / "data/hfopenllm_v2").rglob("*.json"))
    result = json.loads(sample.read_text())["evaluation_results"][0]
    assert "metric_id" not in result["metric_config"], "the corpus still lacks metric_id"
    metrics = dict(
        wh.con.execute(
            "SELECT benchmark_raw, any_value(metric_id) FROM score WHERE source_key = 'eee-hfopenllm-v2' GROUP BY 1"
        ).fetchall()
    )
    assert metrics["IFEval"] == "accuracy"
    assert not wh.scalar("SELECT count(*) FROM quarantine WHERE reason LIKE 'unmapped metric%'")


def test_records_sharing_an_evaluation_id_are_both_kept(wh: Warehouse) -> None:
    """hfopenllm_v2 holds float16 and bfloat16 runs of one repo under one evaluation_id."""
    renamed = wh.con.execute(
        "SELECT evaluation_id, source_evaluation_id FROM evaluation WHERE source_evaluation_id IS NOT NULL"
    ).fetchall()
    assert renamed
    for new_id, old_id in renamed:
        assert new_id.startswith(old_id + "#")
        assert wh.scalar("SELECT count(*) FROM evaluation WHERE evaluation_id = ?", [old_id]) == 1
    decisions = wh.scalar("SELECT count(*) FROM curation_decision WHERE kind = 'evaluation_id_collision'")
    assert decisions == len(renamed)


def test_precision_runs_of_one_repo_are_separate_configurations(wh: Warehouse) -> None:
    pairs = wh.con.execute(
        "SELECT model_source_id, list(DISTINCT config_id) FROM evaluation WHERE source_key = 'eee-hfopenllm-v2'"
        " GROUP BY 1 HAVING count(DISTINCT config_id) > 1 LIMIT 5"
    ).fetchall()
    assert pairs
    for _, configs in pairs:
        assert all("precision=" in c for c in configs)


def test_no_configuration_spans_two_hugging_face_repos(wh: Warehouse) -> None:
    spanning = wh.con.execute(
        "SELECT config_id, list(DISTINCT model_source_id) FROM evaluation WHERE source_key = 'eee-hfopenllm-v2'"
        " GROUP BY 1 HAVING count(DISTINCT lower(model_source_id)) > 1"
    ).fetchall()
    assert spanning == []


def test_a_second_import_of_the_unchanged_corpus_adds_nothing(loaded: dict) -> None:
    before, after = dict(loaded["after_first"]), dict(loaded["after_second"])
    # one summary decision per collection says how many files were skipped unread
    assert after.pop("curation_decision") == before.pop("curation_decision") + len(loaded["second"].runs)
    assert after == before
    assert {r.status for r in loaded["second"].runs} == {"unchanged"}
    data = loaded["second"].as_dict()
    assert data["files_unchanged"] == sum(r.report.records_read for r in loaded["first"].runs)


def _samples_line(record: dict, n: int) -> str:
    return json.dumps(
        {
            "schema_version": "0.3.0",
            "evaluation_id": record["evaluation_id"],
            "model_id": record["model_info"]["id"],
            "evaluation_name": record["evaluation_results"][0]["evaluation_name"],
            "sample_id": f"s{n}",
            "interaction_type": "single_turn",
            "input": {"raw": f"question {n}", "reference": ["4"]},
            "output": {"raw": ["4"]},
            "evaluation": {"score": 1.0, "is_correct": True},
        }
    )


def test_export_reads_samples_back_from_the_packs_of_the_real_corpus(corpus: Path, tmp_path: Path) -> None:
    """The real corpus, with a samples file beside the first record of each collection, imported:
    each collection's payloads are one pack, and export-eee writes every samples file back byte
    for byte from its pack (re-hashed on the way out)."""
    tree = tmp_path / "tree"
    shutil.copytree(corpus / "data", tree / "data")
    written = {}
    for folder in sorted((tree / "data").iterdir()):
        first = min(folder.rglob("*.json"))
        record = json.loads(first.read_text())
        samples = first.with_name(first.stem + "_samples.jsonl")
        samples.write_text("".join(_samples_line(record, n) + "\n" for n in range(3)))
        written[record["evaluation_id"]] = samples.read_bytes()
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        summary = import_tree(wh, tree, RawStore(raw_store_path(db)))
        paths = wh.con.execute(
            "SELECT r.storage_path FROM raw_snapshot r JOIN evaluation e ON e.samples_sha256 = r.sha256"
        ).fetchall()
    assert not [r for r in summary.runs if r.status == "failed"]
    assert len(paths) == len(written) and all(p.startswith("packs/") and ".pack#" in p for (p,) in paths)
    packs = sorted((raw_store_path(db) / "packs").glob("*.pack"))
    assert len(packs) == len(written) and all(p.with_suffix(".idx").is_file() for p in packs)  # one per collection
    assert not list(raw_store_path(db).glob("??/*"))  # no loose file
    with Warehouse.open(db, read_only=True) as wh:
        exported = export_tree(wh, tmp_path / "out", RawStore(raw_store_path(db)))
    assert exported.samples == len(written)
    out = {p.read_bytes() for p in (tmp_path / "out").rglob("*_samples.jsonl")}
    assert out == set(written.values())


@pytest.mark.conformance
def test_the_export_passes_the_eee_validator_with_no_warnings(loaded: dict, tmp_path: Path) -> None:
    pytest.importorskip("every_eval_ever", reason="the every-eval-ever test extra is not installed")
    with Warehouse.open(loaded["db"], read_only=True) as wh:
        summary = export_tree(wh, tmp_path / "out", RawStore(raw_store_path(loaded["db"])))
        total = wh.scalar("SELECT count(*) FROM evaluation")
    assert summary.skipped == [] and summary.written == total
    assert summary.results_omitted == 160, "the HELM placeholders are left out (and counted)"
    out = tmp_path / "out"
    files = sorted(str(p.relative_to(out)) for p in out.rglob("*.json"))  # the path rule reads data/...
    assert len(files) == total
    for start in range(0, len(files), 1000):
        proc = subprocess.run(
            [sys.executable, "-m", "every_eval_ever", "validate", "--format", "json", *files[start : start + 1000]],
            check=False,
            capture_output=True,
            text=True,
            cwd=out,
            timeout=600,
        )
        assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
        report = json.loads(proc.stdout)
        assert _count(report, "errors") == 0 and _count(report, "warnings") == 0, proc.stdout[:2000]


def _count(report: object, key: str) -> int:
    """Total ``key`` entries anywhere in the validator's JSON report (lists are counted by length)."""
    if isinstance(report, dict):
        own = report.get(key)
        n = len(own) if isinstance(own, list) else int(own or 0) if isinstance(own, int) else 0
        return n + sum(_count(v, key) for k, v in report.items() if k != key)
    if isinstance(report, list):
        return sum(_count(v, key) for v in report)
    return 0


def test_instruct_models_stay_apart_from_their_base_and_are_listed_as_candidates(wh: Warehouse) -> None:
    """Llama-3-8B-Instruct, gemma-2-27b-it, falcon-40b-instruct: distinct base models with lineage,
    and the loose name match recorded in v_identity_candidates for review."""
    pairs = {
        (a, b): reason
        for a, b, reason in wh.con.execute(
            "SELECT base_model_a, base_model_b, reason FROM v_identity_candidates"
        ).fetchall()
    }
    for parent, child in (
        ("meta/llama-3-8b", "meta/llama-3-8b-instruct"),
        ("google/gemma-2-27b", "google/gemma-2-27b-instruct"),
        ("tii/falcon-40b", "tii/falcon-40b-instruct"),
    ):
        assert wh.scalar("SELECT derived_from FROM base_model WHERE base_model_id = ?", [child]) == parent
        assert pairs.get((parent, child)) == "one derives from the other", (parent, child)
    averaged = wh.scalar("SELECT count(*) FROM v_scores_canonical WHERE n_used > 1")
    assert averaged == 0, "under the default policy no canonical value is a mean of several rows"


VOLATILE = {"run_id", "first_run_id", "loaded_at", "fetch_id", "retrieved_at", "decision_id", "quarantine_id"}
VOLATILE |= {"decided_at", "quarantined_at", "created_at", "recorded_at", "updated_at"}
SAME_TABLES = ("evaluation", "score", "quarantine", "curation_decision", "model_config", "model_alias", "base_model")
SAME_TABLES += ("model_attribute", "release_date_evidence", "benchmark", "metric")


def table_contents(db: Path, table: str) -> Counter:
    with Warehouse.open(db, read_only=True) as wh:
        columns = [c for (c,) in wh.con.execute(f"SELECT column_name FROM (DESCRIBE {table})").fetchall()]
        keep = [c for c in columns if c not in VOLATILE]
        rows = wh.con.execute(f"SELECT {', '.join(keep)} FROM {table}").fetchall()
    # a run id (source@time-random) names the run, not what it loaded
    return Counter(re.sub(r"@\d{8}T\d{6}Z-[0-9a-f]{6}", "@<run>", json.dumps(row, default=str)) for row in rows)


def test_batch_size_changes_nothing_that_is_loaded(loaded: dict, corpus: Path, tmp_path: Path) -> None:
    """The real corpus loaded in batches of 97 records (boundaries fall inside collections, and a
    record and its duplicate can land in different batches) gives the same rows, quarantines,
    decisions, fingerprints and ids as the default batches."""
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        import_tree(wh, corpus, RawStore(raw_store_path(db)), batch_size=97)
        import_tree(wh, corpus, RawStore(raw_store_path(db)), batch_size=97)  # as the fixture: twice
    for table in SAME_TABLES:
        assert table_contents(db, table) == table_contents(loaded["db"], table), table


def test_a_load_past_its_memory_budget_runs_again_without_it_and_loads_the_same(
    loaded: dict, corpus: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """Each collection loads with DuckDB limited to a budget beyond what it holds (the fixture: the
    default budget). With no room at all every collection runs out of memory, rolls back, says so
    and loads again without the budget: the same rows, quarantines, decisions and fetch rows, and
    DuckDB's own limit again afterwards."""
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        default_limit = wh.scalar("SELECT current_setting('memory_limit')")
        first = import_tree(wh, corpus, RawStore(raw_store_path(db)), memory_budget=0)
        said = capfd.readouterr().err
        import_tree(wh, corpus, RawStore(raw_store_path(db)), memory_budget=0)  # as the fixture: twice
        assert wh.scalar("SELECT current_setting('memory_limit')") == default_limit
    assert said.count("loading it again without that budget") == len(first.runs)
    assert [r.counts for r in first.runs] == [r.counts for r in loaded["first"].runs]
    for table in SAME_TABLES:
        assert table_contents(db, table) == table_contents(loaded["db"], table), table
    runs = "SELECT source_key, status, n_read, n_loaded, n_quarantined, n_duplicate, n_scores FROM ingest_run"
    runs += " ORDER BY ALL"
    fetches = "SELECT count(*), count(DISTINCT sha256) FROM raw_snapshot"
    with Warehouse.open(db, read_only=True) as mine, Warehouse.open(loaded["db"], read_only=True) as theirs:
        for query in (runs, fetches):  # durations differ; what each run read, loaded and fetched does not
            assert mine.con.execute(query).fetchall() == theirs.con.execute(query).fetchall()


def test_conflict_decisions_within_a_memory_budget_are_those_without_one(
    loaded: dict, tmp_path: Path, capfd: pytest.CaptureFixture[str]
) -> None:
    """The decisions after an import run with DuckDB limited to a budget beyond what it holds; a
    budget too small for the step rolls it back and records the same decisions without it."""
    db = tmp_path / "w.duckdb"
    db.write_bytes(loaded["db"].read_bytes())
    kinds = ("conflict_resolution", "canonical_metric")
    recorded = {}
    with Warehouse.open(db) as wh:
        run_id = wh.scalar("SELECT max(run_id) FROM ingest_run")
        for budget in (384 * 2**20, 0):
            wh.con.execute("DELETE FROM curation_decision WHERE kind IN (?, ?)", list(kinds))
            decided = record_view_decisions(wh, run_id, budget=budget)
            rows = wh.con.execute(
                "SELECT kind, subject, detail FROM curation_decision WHERE kind IN (?, ?) ORDER BY ALL", list(kinds)
            ).fetchall()
            recorded[budget] = (decided, rows, capfd.readouterr().err)
    (spilled, rows, quiet), (retried, again, said) = recorded[384 * 2**20], recorded[0]
    assert spilled["conflict_resolution"] > 0 and spilled["canonical_metric"] > 0  # the corpus has both
    assert retried == spilled and again == rows
    assert quiet == ""
    assert "recorded again without that budget" in said


def test_decisions_that_do_not_fit_the_chosen_memory_limit_say_what_to_raise(
    loaded: dict, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Under a $EVALHOUSE_MEMORY_LIMIT too low for the conflict decisions even without the budget,
    the step fails with an error naming the setting (not a DuckDB traceback), and nothing of it stays."""
    db = tmp_path / "w.duckdb"
    db.write_bytes(loaded["db"].read_bytes())
    with Warehouse.open(db) as wh:
        run_id = wh.scalar("SELECT max(run_id) FROM ingest_run")
        before = wh.scalar("SELECT count(*) FROM curation_decision")
        wh.con.execute("DELETE FROM curation_decision WHERE kind = 'conflict_resolution'")
        monkeypatch.setenv(ENV_MEMORY, "16MB")  # the limit the budget gives back to after its attempt
        with pytest.raises(RunFailed, match=f"raise \\${ENV_MEMORY}") as failed:
            record_view_decisions(wh, run_id, budget=0)
        assert "(15.2 MiB:" in str(failed.value)  # the limit in force, as DuckDB renders 16 MB
        assert wh.scalar("SELECT count(*) FROM curation_decision WHERE kind = 'conflict_resolution'") == 0
    assert before > 0


def test_a_commit_out_of_memory_loads_the_collection_again_without_the_budget(
    loaded: dict, corpus: Path, tmp_path: Path, capfd: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """A load's commit runs within a budget too. A commit that runs out of memory keeps nothing
    (the warehouse reopens the database when DuckDB invalidated it: tests/warehouse/test_db.py) and
    the load runs again without a budget. Here the first commit of every collection's budgeted
    load fails so: the same rows, quarantines, decisions and runs as the default import."""
    from contextlib import contextmanager

    from evalhouse.errors import CommitFailed
    from evalhouse.warehouse.load import ledger

    budgeted = {"load": False}
    load_once, transaction = ledger._load_once, Warehouse.transaction

    def tracked(wh, ctx, plan, result, budget):
        budgeted["load"] = budget is not None
        return load_once(wh, ctx, plan, result, budget)

    @contextmanager
    def failing(self):
        if not budgeted["load"]:
            with transaction(self) as con:
                yield con
            return
        budgeted["load"] = False
        self.con.execute("BEGIN TRANSACTION")
        yield self.con
        self.con.execute("ROLLBACK")
        raise CommitFailed("the commit failed (out of memory)", out_of_memory=True, reopened=True)

    monkeypatch.setattr(ledger, "_load_once", tracked)
    monkeypatch.setattr(Warehouse, "transaction", failing)
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        first = import_tree(wh, corpus, RawStore(raw_store_path(db)))
        said = capfd.readouterr().err
        monkeypatch.undo()
        import_tree(wh, corpus, RawStore(raw_store_path(db)))  # as the fixture: twice
    replayed = [line for line in said.splitlines() if "the commit failed" in line]
    assert len(replayed) == len(first.runs) and all("loading it again without" in line for line in replayed)
    assert [r.status for r in first.runs] == [r.status for r in loaded["first"].runs]
    assert [r.counts for r in first.runs] == [r.counts for r in loaded["first"].runs]
    for table in SAME_TABLES:
        assert table_contents(db, table) == table_contents(loaded["db"], table), table
