"""Harness logs in: the real lm-eval, HELM, Inspect and EEE files in ../shared/formats.

Row counts equal the source lines; per-choice and per-sample values are kept; what the logs let us
recompute (HELM exact match from the chosen letter, Inspect accuracy from the sample scores) is
recomputed and compared with the harness's own aggregate.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path

import pytest

HELM_RUNS = ("hellaswag-pythia-1b", "mmlu-philosophy-gpt2", "narrative-qa-gpt2")
INSPECT_WITH_SAMPLES = (
    "data_arc_qwen.json",
    "data_arc_sonnet.json",
    "data_cvebench_empty_choices.json",
    "data_cyse2_vuln_exploit_challenges.json",
    "data_intercode_ctf_local_path.json",
    "data_pubmedqa_gpt4o_mini.json",
)


def _count(ingest, sql: str, params: list | None = None) -> int:
    return ingest.rows(sql, params)[0][0]


def test_lm_eval_directory_loads_one_row_per_samples_line(ingest, formats: Path) -> None:
    folder = formats / "lm_eval"
    samples = next(folder.glob("samples_*.jsonl"))
    lines = sum(1 for line in samples.read_bytes().splitlines() if line.strip())
    result = ingest("lm-eval", folder)
    assert result.status == "completed", result.error
    assert (result.items.responses_read, result.items.responses_loaded) == (lines, lines)
    assert _count(ingest, "SELECT count(*) FROM item_response WHERE source_key = 'lm-eval'") == lines
    rows = ingest.rows(
        "SELECT r.line, r.p_correct, r.score_name, json_extract(r.scores, '$.exact_match')::DOUBLE, r.output,"
        " i.gold, i.benchmark, r.unmapped FROM item_response r JOIN item i USING (item_id) ORDER BY r.line"
    )
    originals = [json.loads(x) for x in samples.read_bytes().splitlines() if x.strip()]
    for (_line, p, name, stored, output, gold, bench, unmapped), orig in zip(rows, originals, strict=True):
        assert p == orig["exact_match"] == stored  # the per-sample metric, exactly as the harness wrote it
        assert name == "exact_match,none"
        assert output == orig["filtered_resps"][0]
        assert gold == orig["target"]
        assert bench == "math_perturbed_full"
        assert json.loads(unmapped)["doc_hash"] == orig["doc_hash"]  # kept although no column maps it
    header = json.loads(next(folder.glob("results_*.json")).read_text())
    aggregate = json.loads(ingest.rows("SELECT aggregate FROM eval_run")[0][0])
    assert aggregate["results"] == header["results"]["math_perturbed_full"]
    # The upstream fixture keeps 10 of the task's 5000 samples, so the harness's aggregate cannot be
    # recomputed from it; what is stored says so (n-samples), rather than a mean of 10 posing as it.
    assert aggregate["n-samples"]["effective"] == 5000 > lines
    ckpt = ingest.rows("SELECT suite, revision, size_params FROM checkpoint")[0]
    assert ckpt == (header["model_name"], header["config"]["model_sha"], header["config"]["model_num_parameters"])


def test_a_results_file_brings_its_samples(ingest, formats: Path) -> None:
    results = next((formats / "lm_eval").glob("results_*.json"))
    assert ingest("lm-eval", results).items.responses_loaded == 10


@pytest.mark.parametrize("run", HELM_RUNS)
def test_helm_run_rows_and_exact_match_recomputed(ingest, formats: Path, run: str) -> None:
    folder = formats / "helm" / run
    states = json.loads((folder / "scenario_state.json").read_text())["request_states"]
    result = ingest("helm-run", folder)
    assert result.status == "completed", result.error
    assert result.items.responses_loaded == len(states)
    rows = ingest.rows(
        "SELECT i.split, r.acc, r.p_correct, i.gold_index, r.chosen_index FROM item_response r"
        " JOIN item i USING (item_id) ORDER BY r.line"
    )
    stats = json.loads((folder / "stats.json").read_text())
    for split in {r[0] for r in rows}:
        mine = [r for r in rows if r[0] == split]
        helm = next(s["mean"] for s in stats if s["name"] == {"name": "exact_match", "split": split})
        # HELM's own aggregate exact_match per split, from its per-instance stats (stored as p_correct)
        assert sum(r[2] for r in mine) / len(mine) == pytest.approx(helm, abs=1e-12)
        if run != "narrative-qa-gpt2":  # multiple choice: recompute from the chosen letter vs the gold
            assert all(r[1] == (1.0 if r[3] == r[4] else 0.0) for r in mine)
            assert sum(r[1] for r in mine) / len(mine) == pytest.approx(helm, abs=1e-12)


@pytest.mark.parametrize("name", INSPECT_WITH_SAMPLES)
def test_inspect_json_rows_and_accuracy(ingest, formats: Path, name: str) -> None:
    doc = json.loads((formats / "inspect" / name).read_text())
    result = ingest("inspect-log", formats / "inspect" / name)
    assert result.status == "completed", result.error
    assert result.items.responses_loaded == len(doc["samples"])
    epochs = ingest.rows("SELECT epoch FROM item_response ORDER BY line")
    assert [e[0] for e in epochs] == [s["epoch"] for s in doc["samples"]]
    score = doc["results"]["scores"][0]
    if doc["results"]["completed_samples"] == len(doc["samples"]) and "accuracy" in score["metrics"]:
        mean = ingest.rows("SELECT avg(p_correct) FROM item_response")[0][0]
        assert mean == pytest.approx(score["metrics"]["accuracy"]["value"], abs=1e-12)


def test_inspect_eval_zip_reads_like_its_json(ingest, formats: Path, tmp_path: Path) -> None:
    """An ``.eval`` archive laid out as Inspect writes it (header.json + samples/<id>_epoch_<n>.json),
    built here from the real JSON log (no real .eval file is in ../shared)."""
    doc = json.loads((formats / "inspect" / "data_arc_sonnet.json").read_text())
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as zf:
        zf.writestr("header.json", json.dumps({k: v for k, v in doc.items() if k != "samples"}))
        for s in doc["samples"]:
            zf.writestr(f"samples/{s['id']}_epoch_{s['epoch']}.json", json.dumps(s))
    path = tmp_path / "arc.eval"
    path.write_bytes(buf.getvalue())
    result = ingest("inspect-log", path)
    assert result.items.responses_loaded == len(doc["samples"])
    assert ingest.rows("SELECT avg(p_correct) FROM item_response")[0][0] == pytest.approx(1.0)


def test_inspect_log_without_samples_loads_its_scores(ingest, formats: Path) -> None:
    result = ingest("inspect-log", formats / "inspect" / "data_with_llm_scoring.json")
    assert result.status == "completed", result.error
    assert (result.report.scores_loaded, result.items) == (1, None)  # the scores; no item rows to load
    assert _count(ingest, "SELECT count(*) FROM item_response") == 0


def test_eee_instances_with_their_aggregate(ingest, formats: Path) -> None:
    folder = formats / "eee" / "demo-source" / "demo-org" / "demo-model"
    result = ingest("eee-instances", folder)
    assert result.items.responses_loaded == 1
    row = ingest.rows(
        "SELECT i.benchmark, i.content_sha256, r.p_correct, r.acc, c.suite FROM item_response r"
        " JOIN item i USING (item_id) JOIN checkpoint c USING (checkpoint_id)"
    )[0]
    line = json.loads(next(folder.glob("*_samples.jsonl")).read_text())
    assert row == ("demo_bench", line["sample_hash"], 1.0, 1.0, "demo-org/demo-model")


def test_reingest_is_a_duplicate_and_counts_balance(ingest, formats: Path) -> None:
    folder = formats / "helm" / "mmlu-philosophy-gpt2"
    ingest("helm-run", folder)
    again = ingest("helm-run", folder)
    assert again.status == "completed"
    assert (again.counts["loaded"], again.items.responses_duplicate, again.report.records_duplicate) == (0, 10, 1)
    assert _count(ingest, "SELECT count(*) FROM item_response") == 10
    runs = ingest.rows("SELECT n_read, n_loaded, n_duplicate, n_quarantined FROM ingest_run ORDER BY started_at")
    assert all(r[0] == r[1] + r[2] + r[3] for r in runs)


def test_a_bad_samples_line_is_quarantined_with_file_and_line(ingest, formats: Path, tmp_path: Path) -> None:
    src = formats / "lm_eval"
    for f in src.iterdir():
        data = f.read_bytes()
        if f.name.startswith("samples_"):
            lines = data.splitlines(keepends=True)
            data = b"".join([*lines[:3], b"{not json\n", *lines[3:]])
        (tmp_path / f.name).write_bytes(data)
    result = ingest("lm-eval", tmp_path)
    assert result.status == "partial"
    # the two tasks' records, and the samples file's 11 lines (one refused)
    assert result.counts == {"read": 2 + 11, "loaded": 2 + 10, "quarantined": 1, "duplicate": 0}
    locator, stage = ingest.rows("SELECT locator, stage FROM quarantine")[0]
    assert locator.endswith(".jsonl:4") and stage == "parse"


def test_an_item_id_with_other_content_is_never_merged(ingest, formats: Path, tmp_path: Path) -> None:
    folder = formats / "lm_eval"
    ingest("lm-eval", folder)
    for f in folder.iterdir():
        data = f.read_bytes()
        if f.name.startswith("samples_"):
            data = data.replace(b'"How many vertical', b'"How MANY vertical', 1)
        if f.name.startswith("results_"):
            data = data.replace(b'"model_sha": "8', b'"model_sha": "9', 1)  # another checkpoint
        (tmp_path / f.name).write_bytes(data)
    result = ingest("lm-eval", tmp_path)
    assert result.items.responses_quarantined == 1 and result.items.responses_loaded == 9
    reason = ingest.rows("SELECT reason FROM quarantine")[0][0]
    assert "never merged" in reason
