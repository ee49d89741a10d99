"""Harness logs yield scores: the real lm-eval, Inspect and HELM logs in ../shared/formats, through the CLI.

Every log's aggregate metric cells are counted here from the JSON itself, by the harness's own
layout (not by the parser): an lm-eval ``results[task]`` ``"<metric>,<filter>"`` key other than
the ``*_stderr`` ones; an Inspect scorer metric other than its uncertainty (stderr, std); a HELM
``stats.json`` stat named by one of HELM's quality metrics (the EEE HELM converter's list). For
each log, scores loaded + cells quarantined = that count, and every loaded value, standard error
and n equals the file's; a handful of values are also found in the file's bytes as written.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path
from typing import Any

import duckdb
import pytest
from clirunner import CliRunner

from evalhouse.cli import app

runner = CliRunner()
INSPECT_UNCERTAINTY = {"stderr", "bootstrap_stderr", "std", "stddev", "var"}
# HELM's quality metrics, as every_eval_ever/converters/helm/metrics.py lists them (prefixes)
HELM_QUALITY = (
    "exact_match", "quasi_exact_match", "prefix_exact_match", "quasi_prefix_exact_match", "classification_micro_f1",
    "classification_macro_f1", "f1_score", "rouge_l", "bleu_", "ifeval_strict_accuracy",
    "chain_of_thought_correctness", "math_equiv",
)  # fmt: skip


def _cli(*args: str, code: int = 0) -> Any:
    result = runner.invoke(app, list(args))
    assert result.exit_code == code, result.output
    return json.loads(result.stdout) if "--json" in args and code == 0 else result.output


def _folder(formats: Path, name: str) -> Path:
    folder = formats / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent (../shared/formats/{name})")
    return folder


# -- what the files hold, counted from their JSON ---------------------------------------------


def lm_eval_cells(doc: dict[str, Any]) -> dict[str, tuple[float, Any, Any]]:
    """``task/key`` -> (value, stderr, n) of every metric entry of an lm-eval results file."""
    cells = {}
    for task, entries in doc["results"].items():
        n = (doc.get("n-samples") or {}).get(task, {}).get("effective")
        for key, value in entries.items():
            if "," not in key or "_stderr" in key:  # "<metric>,<filter>"; alias, name, sample_len describe
                continue
            metric, _, flt = key.partition(",")
            cells[f"{task}/{key}"] = (value, entries.get(f"{metric}_stderr,{flt}"), n)
    return cells


def inspect_cells(doc: dict[str, Any]) -> dict[str, tuple[float, Any, Any]]:
    """``scorer/metric`` -> (value, stderr, n) of every scorer metric of an Inspect log."""
    cells = {}
    for scorer in (doc.get("results") or {}).get("scores") or []:
        metrics = {m["name"]: m["value"] for m in scorer["metrics"].values()}
        n = scorer.get("scored_samples", doc["results"].get("completed_samples"))
        for name, value in metrics.items():
            if name not in INSPECT_UNCERTAINTY:
                cells[f"{scorer['name']}/{name}"] = (value, metrics.get("stderr"), n)
    return cells


def helm_cells(stats: list[dict[str, Any]]) -> dict[str, tuple[float, Any, Any]]:
    """``stat:split[:perturbation:computed_on]`` -> (mean, None, num_instances of the split)."""
    n = {
        s["name"]["split"]: s["mean"]
        for s in stats
        if s["name"] == {"name": "num_instances", "split": s["name"]["split"]}
    }
    cells = {}
    for s in stats:
        label = s["name"]
        if not label["name"].startswith(HELM_QUALITY):
            continue
        pert = label.get("perturbation") or {}
        key = ":".join(
            str(p) for p in (label["name"], label.get("split"), pert.get("name"), pert.get("computed_on")) if p
        )
        cells[key] = (s["mean"], None, int(n[label["split"]]))
    return cells


# -- one warehouse with every real log, loaded through the CLI --------------------------------


@pytest.fixture(scope="module")
def loaded(formats: Path, tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    lm, inspect, helm = (_folder(formats, n) for n in ("lm_eval", "inspect", "helm"))
    db = str(tmp_path_factory.mktemp("harness") / "w.duckdb")
    results = sorted(lm.glob("results_*.json"))
    runs = {
        "lm-eval": _cli("--db", db, "ingest", "lm-eval", *map(str, results), *map(str, lm.glob("samples_*")), "--json"),
        "inspect-log": _cli("--db", db, "ingest", "inspect-log", *map(str, sorted(inspect.glob("*.json"))), "--json"),
        "helm-run": _cli("--db", db, "ingest", "helm-run", *map(str, sorted(helm.iterdir())), "--json"),
    }
    return {"db": db, "runs": runs, "stats": _cli("--db", db, "stats", "--json"), "lm": lm, "inspect": inspect,
            "helm": helm}  # fmt: skip


def _rows(db: str, sql: str, params: list | None = None) -> list[tuple]:
    with duckdb.connect(db, read_only=True) as con:
        return con.execute(sql, params or []).fetchall()


def _scores(db: str, source: str, locator: str) -> dict[str, tuple[float, Any, Any]]:
    """The loaded scores of one log (its record's locator), by the harness's own key of the cell."""
    rows = _rows(
        db,
        "SELECT s.evaluation_result_id, s.raw_value, s.stderr, s.n_samples FROM score s"
        " JOIN evaluation e USING (evaluation_id) WHERE s.source_key = ? AND e.locator LIKE ?",
        [source, locator],
    )
    return {r[0]: r[1:] for r in rows}


def _quarantined(db: str, source: str, like: str) -> int:
    """Quarantine rows of one log's score cells (parse or canonicalise stage), not of its samples."""
    return _rows(
        db,
        "SELECT count(*) FROM quarantine WHERE source_key = ? AND locator LIKE ? AND stage <> 'load'"
        " AND (locator LIKE '%#results%' OR locator LIKE '%evaluation_results%' OR locator LIKE 'stats.json%')",
        [source, like],
    )[0][0]


def _same(stored: tuple, expected: tuple) -> None:
    value, stderr, n = expected
    assert stored[0] == value
    assert stored[1] == (stderr if isinstance(stderr, int | float) else None)
    assert stored[2] == n


def test_runs_complete_and_stats_counts_every_cell(loaded: dict[str, Any]) -> None:
    lm_total = sum(len(lm_eval_cells(json.loads(p.read_bytes()))) for p in loaded["lm"].glob("results_*.json"))
    inspect_total = sum(len(inspect_cells(json.loads(p.read_bytes()))) for p in loaded["inspect"].glob("*.json"))
    helm_total = sum(len(helm_cells(json.loads((d / "stats.json").read_bytes()))) for d in loaded["helm"].iterdir())
    by_source = {row["source"]: row for row in loaded["stats"]["by_source"]}
    for source, total in (("lm-eval", lm_total), ("inspect-log", inspect_total), ("helm-run", helm_total)):
        run = loaded["runs"][source]
        assert run["status"] == "completed", run
        assert run["scores"]["loaded"] + run["scores"]["quarantined"] == total
        assert by_source[source]["scores"] + by_source[source]["quarantined"] == total > 0
    assert (lm_total, inspect_total, helm_total) == (2, 8, 108)  # the files as pinned upstream


def test_lm_eval_scores_equal_the_results_file(loaded: dict[str, Any]) -> None:
    db = loaded["db"]
    for path in sorted(loaded["lm"].glob("results_*.json")):
        body = path.read_bytes()
        expected = lm_eval_cells(json.loads(body))
        stored = _scores(db, "lm-eval", f"{path.name}#%")
        assert len(stored) + _quarantined(db, "lm-eval", f"{path.name}%") == len(expected)
        for key, cell in expected.items():
            _same(stored[key], cell)
    # spot checks against the bytes as written
    body = next(loaded["lm"].glob("results_*.json")).read_bytes()
    stored = _scores(db, "lm-eval", "results_%")
    rephrased = stored["math_rephrased_full/exact_match,none"]
    assert f'"exact_match,none": {rephrased[0]!r}'.encode() in body  # 0.0004
    assert f'"exact_match_stderr,none": {rephrased[1]!r}'.encode() in body
    assert f'"effective": {rephrased[2]}'.encode() in body
    perturbed = stored["math_perturbed_full/exact_match,none"]
    assert f'"exact_match,none": {perturbed[0]!r}'.encode() in body
    assert f'"exact_match_stderr,none": {perturbed[1]!r}'.encode() in body


def test_lm_eval_aggregate_without_samples_loads_and_samples_link(loaded: dict[str, Any]) -> None:
    """math_rephrased_full has no samples file: its score loads; math_perturbed_full's links to its 10 lines."""
    rows = _rows(
        loaded["db"],
        "SELECT json_extract_string(s.setup, '$.shots'), e.evaluation_id, count(r.item_id), e.samples_sha256"
        " FROM score s JOIN evaluation e USING (evaluation_id) LEFT JOIN item_response r"
        " ON r.eval_run_id = e.evaluation_id WHERE s.source_key = 'lm-eval' AND s.evaluation_result_id = ?"
        " GROUP BY ALL",
        ["math_rephrased_full/exact_match,none"],
    )
    assert [(r[0], r[2], r[3]) for r in rows] == [("0", 0, None)]  # n-shot 0, as the file states
    samples = next(loaded["lm"].glob("samples_math_perturbed_full_*.jsonl"))
    lines = sum(1 for line in samples.read_bytes().splitlines() if line.strip())
    linked = _rows(
        loaded["db"],
        "SELECT count(*), any_value(e.samples_sha256) FROM score s JOIN evaluation e USING (evaluation_id)"
        " JOIN eval_run k ON k.eval_run_id = e.evaluation_id JOIN item_response r ON r.eval_run_id = k.eval_run_id"
        " WHERE s.evaluation_result_id = 'math_perturbed_full/exact_match,none'",
    )[0]
    assert linked[0] == lines == 10
    assert linked[1] == hashlib.sha256(samples.read_bytes()).hexdigest()


def test_inspect_scores_equal_the_logs(loaded: dict[str, Any]) -> None:
    db = loaded["db"]
    spot = 0
    for path in sorted(loaded["inspect"].glob("*.json")):
        body = path.read_bytes()
        expected = inspect_cells(json.loads(body))
        stored = _scores(db, "inspect-log", path.name)
        assert len(stored) + _quarantined(db, "inspect-log", f"{path.name}%") == len(expected), path.name
        for key, cell in expected.items():
            _same(stored[key], cell)
            assert f'"value": {stored[key][0]!r}'.encode() in body  # as written in the log
            spot += 1
    assert spot >= 5


def test_inspect_log_without_samples_keeps_its_judge_and_logs_with_samples_link(loaded: dict[str, Any]) -> None:
    db = loaded["db"]
    doc = json.loads((loaded["inspect"] / "data_with_llm_scoring.json").read_bytes())
    assert "samples" not in doc
    judge, setup = _rows(
        db,
        "SELECT s.llm_scoring, s.setup FROM score s JOIN evaluation e USING (evaluation_id)"
        " WHERE e.locator = 'data_with_llm_scoring.json'",
    )[0]
    grader = doc["results"]["scores"][0]["params"]["grader_model"]["model"]
    assert json.loads(judge)["judges"][0]["model_info"]["name"] == grader
    assert json.loads(setup)["grader_model"] == grader
    # arc with qwen: every sample logged, so the linked item rows' mean is the log's accuracy
    value, mean, n = _rows(
        db,
        "SELECT s.raw_value, avg(r.p_correct), count(*) FROM score s JOIN evaluation e USING (evaluation_id)"
        " JOIN item_response r ON r.eval_run_id = e.evaluation_id WHERE e.locator = 'data_arc_qwen.json'"
        " GROUP BY ALL",
    )[0]
    arc = json.loads((loaded["inspect"] / "data_arc_qwen.json").read_bytes())
    assert n == len(arc["samples"]) and value == pytest.approx(mean, abs=1e-12)


def test_helm_scores_equal_the_run_stats(loaded: dict[str, Any]) -> None:
    db = loaded["db"]
    spot = 0
    for run in sorted(loaded["helm"].iterdir()):
        body = (run / "stats.json").read_bytes()
        expected = helm_cells(json.loads(body))
        spec = json.loads((run / "run_spec.json").read_bytes())
        mine = _run_scores(db, spec["name"])
        assert len(mine) + _quarantined_helm(db, run.name) == len(expected), run.name
        for key, cell in expected.items():
            _same(mine[key], cell)
        for value in sorted({v[0] for v in mine.values()})[:3]:
            assert f'"mean": {value!r}'.encode() in body  # as written in stats.json
            spot += 1
    assert spot >= 5


def _run_scores(db: str, run_spec: str) -> dict[str, tuple]:
    rows = _rows(
        db,
        "SELECT s.evaluation_result_id, s.raw_value, s.stderr, s.n_samples FROM score s JOIN evaluation e"
        " USING (evaluation_id) WHERE s.source_key = 'helm-run'"
        " AND json_extract_string(e.record, '$.evaluation_results[0].score_details.details.run_spec') = ?",
        [run_spec],
    )
    return {r[0]: r[1:] for r in rows}


def _quarantined_helm(db: str, run_dir: str) -> int:
    """Quarantined stats of one run directory (its payload's URL names the directory)."""
    return _rows(
        db,
        "SELECT count(*) FROM quarantine q JOIN raw_snapshot r ON r.sha256 = q.raw_sha256"
        " WHERE q.source_key = 'helm-run' AND q.locator LIKE 'stats.json%' AND r.url LIKE ?",
        [f"%/{run_dir}/"],
    )[0][0]


def test_models_reach_audit_and_the_site(loaded: dict[str, Any], tmp_path: Path) -> None:
    db = loaded["db"]
    audit = _cli("--db", db, "audit", "model", "openai/gpt2", "--json")
    sources = {v["source"] for row in audit["side_by_side"] for v in row["values"]}
    assert sources == {"helm-run"} and audit["configs"][0]["n_scores"] == 48 + 36  # MMLU and NarrativeQA runs
    claude = _cli("--db", db, "audit", "model", "anthropic/claude-sonnet-4-0", "--json")
    assert [v["value"] for row in claude["side_by_side"] for v in row["values"]] == [1.0]
    out = tmp_path / "site"
    _cli("--db", db, "site", str(out), "--no-analyses")
    pages = " ".join(p.read_text(encoding="utf-8") for p in (out / "models").glob("*.html"))
    for model in ("openai/gpt2", "eleutherai/pythia-1b-v0", "qwen2.5:0.5b", "RylanSchaeffer/mem_Qwen3-93M"):
        assert model in pages, model


# -- edge cases made from the real files -------------------------------------------------------


def test_helm_run_with_stats_but_no_samples_loads_its_scores(formats: Path, tmp_path: Path) -> None:
    src = _folder(formats, "helm") / "mmlu-philosophy-gpt2"
    run = tmp_path / "mmlu-philosophy-gpt2"
    run.mkdir()
    for name in ("run_spec.json", "scenario.json", "stats.json"):
        shutil.copyfile(src / name, run / name)
    db = str(tmp_path / "w.duckdb")
    result = _cli("--db", db, "ingest", "helm-run", str(run), "--json")
    expected = helm_cells(json.loads((src / "stats.json").read_bytes()))
    assert (result["status"], result["scores"]["loaded"], result["items"]) == ("completed", len(expected), None)


def test_a_log_with_neither_scores_nor_samples_is_quarantined_and_its_neighbours_load(
    formats: Path, tmp_path: Path
) -> None:
    folder = _folder(formats, "inspect")
    doc = json.loads((folder / "data_with_llm_scoring.json").read_bytes())
    doc["results"]["scores"] = []
    empty = tmp_path / "empty.json"
    empty.write_text(json.dumps(doc))
    db = str(tmp_path / "w.duckdb")
    alone = _cli("--db", db, "ingest", "inspect-log", str(empty), "--json", code=1)
    assert "neither scores nor samples" in alone
    run = _cli("--db", db, "ingest", "inspect-log", str(empty), str(folder / "data_arc_sonnet.json"),
               str(tmp_path / "missing.json"), "--json")  # fmt: skip
    assert (run["status"], run["scores"]["loaded"]) == ("partial", 1)
    reasons = [r[0] for r in _rows(db, "SELECT reason FROM quarantine ORDER BY quarantine_id")]
    assert len(reasons) == 3  # the empty log twice (both runs), the missing path once
    assert "neither scores nor samples" in reasons[0] and "no such file" in reasons[2]


def test_a_run_that_errored_quarantines_its_scores_and_keeps_its_samples(formats: Path, tmp_path: Path) -> None:
    doc = json.loads((_folder(formats, "inspect") / "data_arc_sonnet.json").read_bytes())
    doc["status"] = "error"
    path = tmp_path / "arc_error.json"
    path.write_text(json.dumps(doc))
    run = _cli("--db", str(tmp_path / "w.duckdb"), "ingest", "inspect-log", str(path), "--json")
    assert (run["status"], run["scores"]["loaded"], run["items"]["responses_loaded"]) == (
        "partial",
        0,
        len(doc["samples"]),
    )
    assert run["quarantined"] == len(inspect_cells(doc)) and "status 'error'" in next(iter(run["quarantine_reasons"]))


def test_an_undeclared_metric_is_quarantined_naming_the_file(formats: Path, tmp_path: Path) -> None:
    src = next(_folder(formats, "lm_eval").glob("results_*.json"))
    path = tmp_path / src.name
    path.write_bytes(src.read_bytes().replace(b'"exact_match,none": 0.0004', b'"novel_metric,none": 0.0004'))
    run = _cli("--db", str(tmp_path / "w.duckdb"), "ingest", "lm-eval", str(path), "--json")
    assert (run["status"], run["scores"]["loaded"], run["quarantined"]) == ("partial", 1, 1)
    assert "undeclared metric 'novel_metric'" in next(iter(run["quarantine_reasons"]))


def test_several_paths_of_a_source_without_locate_get_a_clear_message(tmp_path: Path) -> None:
    a, b = tmp_path / "a.csv", tmp_path / "b.csv"
    a.write_text("x\n")
    b.write_text("x\n")
    out = _cli("--db", str(tmp_path / "w.duckdb"), "ingest", "epoch-benchmarks", str(a), str(b), code=2)
    assert "one file or URL per run" in out and "locate()" not in out


def test_an_eee_aggregate_loads_as_its_record_beside_its_instances(formats: Path, tmp_path: Path) -> None:
    folder = _folder(formats, "eee") / "demo-source" / "demo-org" / "demo-model"
    aggregate = next(p for p in folder.glob("*.json"))
    doc = json.loads(aggregate.read_bytes())
    db = str(tmp_path / "w.duckdb")
    run = _cli("--db", db, "ingest", "eee-instances", str(folder), "--json")
    assert run["scores"]["loaded"] + run["scores"]["quarantined"] == len(doc["evaluation_results"]) == 1
    value, samples_sha, linked = _rows(
        db,
        "SELECT s.raw_value, e.samples_sha256, count(r.item_id) FROM score s JOIN evaluation e USING (evaluation_id)"
        " JOIN eval_run k ON json_extract_string(k.details, '$.evaluation_id') = e.evaluation_id"
        " JOIN item_response r ON r.eval_run_id = k.eval_run_id GROUP BY ALL",
    )[0]
    assert value == doc["evaluation_results"][0]["score_details"]["score"]
    assert f'"score": {value!r}'.encode() in aggregate.read_bytes()
    assert samples_sha == doc["detailed_evaluation_results"]["checksum"]  # the record's own checksum of its samples
    assert linked == doc["detailed_evaluation_results"]["total_rows"]


# -- the recorded lm-eval results files (tests/fixtures/lm-eval, see its SOURCE.md) -----------

FIXTURES = Path(__file__).parents[1] / "fixtures" / "lm-eval"


def test_a_results_file_without_samples_loads_its_aggregate(tmp_path: Path) -> None:
    path = FIXTURES / "results_2025-01-21T00-40-03.356274.json"
    body = path.read_bytes()
    doc = json.loads(body)
    db = str(tmp_path / "w.duckdb")
    run = _cli("--db", db, "ingest", "lm-eval", str(path), "--json")
    expected = lm_eval_cells(doc)
    assert (run["status"], run["items"]) == ("completed", None)
    assert run["scores"]["loaded"] + run["scores"]["quarantined"] == len(expected) == 1
    (key, (value, stderr, n)), = expected.items()  # fmt: skip
    row = _rows(
        db,
        "SELECT s.evaluation_result_id, s.raw_value, s.stderr, s.n_samples, json_extract_string(s.setup, '$.shots'),"
        " e.model_source_id, s.subset FROM score s JOIN evaluation e USING (evaluation_id)",
    )
    assert row == [(key, value, stderr, n, "0", doc["model_name"], None)]
    for text in (
        f'"acc,none": {value!r}',
        f'"acc_stderr,none": {stderr!r}',
        f'"effective": {n}',
        '"mmlu_abstract_algebra": 0',
    ):
        assert text.encode() in body  # 0.34, 0.047609522856952344, 100 samples, 0-shot: as written
    assert f'"model_name": "{doc["model_name"]}"'.encode() in body


def test_a_results_file_that_names_no_model_is_quarantined_cell_by_cell(tmp_path: Path) -> None:
    path = FIXTURES / "cpu_group_regression_expected.json"
    doc = json.loads(path.read_bytes())
    db = str(tmp_path / "w.duckdb")
    out = _cli("--db", db, "ingest", "lm-eval", str(path), "--json", code=1)
    assert "names no model" in out
    locators = [r[0] for r in _rows(db, "SELECT locator FROM quarantine")]
    assert sorted(loc.split("#results.", 1)[1].replace(".", "/", 1) for loc in locators) == sorted(lm_eval_cells(doc))


def test_a_task_under_a_scoring_group_is_its_subset(tmp_path: Path) -> None:
    """The same real file with the model named: each of its six cells loads, under its group."""
    doc = json.loads((FIXTURES / "cpu_group_regression_expected.json").read_bytes())
    doc["model_name"] = "EleutherAI/pythia-14m"  # the model the harness's CPU regression test runs
    path = tmp_path / "results_2026-08-21T00-00-00.000000.json"
    path.write_text(json.dumps(doc))
    db = str(tmp_path / "w.duckdb")
    run = _cli("--db", db, "ingest", "lm-eval", str(path), "--json")
    assert (run["status"], run["scores"]["loaded"]) == ("completed", len(lm_eval_cells(doc)))
    rows = _rows(
        db,
        "SELECT evaluation_result_id, benchmark_raw, subset, raw_value, stderr, n_samples FROM score ORDER BY 1",
    )
    for key, benchmark, subset, value, stderr, n in rows:
        task, metric = key.split("/")
        group = "regression_arc"
        assert (benchmark, subset) == ((group, task) if task != group else (group, None))
        assert value == doc["results"][task][metric] and stderr is None  # "N/A" is no standard error
        assert n == (doc["n-samples"].get(task, {}).get("effective") or doc["results"][task]["sample_len"])
