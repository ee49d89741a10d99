"""The model-cards source: the six real shared cards (README and Hub API forms), and bad input.

The Hub API is a local HTTP server (tests/hubcards.py) replaying responses assembled from the
shared cards, fetched through the normal client and loaded into a real warehouse file.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clirunner import CliRunner
from httpserver import Reply
from hubcards import EXPECTED_RESULTS, api_body, client_for, facts, front_matter, hub_payloads, mirror_url, serve_hub

from evalhouse.cli import app
from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore
from evalhouse.curation.registry import load_registry
from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.source import FetchMeta, ParseError
from evalhouse.ingest.sources import model_cards as mc
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.pipeline.refresh import RefreshOptions
from evalhouse.pipeline.targets import named_models, refresh_targets
from evalhouse.schema.records import ParsedRecord, ParseFailure
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

RETRIEVED = datetime(2026, 7, 1, tzinfo=UTC)


def _meta(url: str, label: str | None = None) -> FetchMeta:
    return FetchMeta("model-cards", url, "0" * 64, RETRIEVED, None, label)


def _parse(body: bytes | str, url: str = "file:///cards/README.md"):
    data = body.encode("utf-8") if isinstance(body, str) else body
    return list(mc.parse(data, meta=_meta(url)))


@pytest.fixture
def wh(tmp_path: Path):
    with Warehouse.open(tmp_path / "w.duckdb") as w:
        yield w


@pytest.fixture
def store(tmp_path: Path) -> RawStore:
    return RawStore(tmp_path / "w.raw")


def _cards(shared: Path) -> dict[str, Path]:
    return {repo: shared / "formats" / "hf-model-cards" / f["card"] for repo, f in facts().items()}


# -- README form ------------------------------------------------------------------------------


def test_readme_form_reads_every_model_index_result_of_the_five_cards_with_front_matter(shared: Path) -> None:
    canonicaliser = Canonicaliser(load_registry())
    for repo, path in _cards(shared).items():
        items = _parse(path.read_bytes(), path.resolve().as_uri())
        records = [i for i in items if isinstance(i, ParsedRecord)]
        if repo == "tiiuae/Falcon3-10B-Instruct":  # a bare metadata export: no '---' front matter
            assert records == [] and len(items) == 1
            assert "no YAML front matter" in items[0].reason and "'metadata'" in items[0].reason
            continue
        assert not [i for i in items if isinstance(i, ParseFailure)], repo
        results = [r for rec in records for r in rec.record["evaluation_results"]]
        assert len(results) == EXPECTED_RESULTS[repo], repo
        # v1 and v2 are different evaluators' numbers: one record each, third party, source kept
        assert len(records) == EXPECTED_RESULTS[repo] // 6
        for rec in records:
            meta = rec.record["source_metadata"]
            assert meta["evaluator_relationship"] == "third_party"
            assert meta["additional_details"]["evalhouse.original_source"].startswith("Open LLM Leaderboard v")
            assert rec.record["model_info"]["id"] == repo  # from the bot's ?query=<org>/<model>
        for result in results:
            outcome = canonicaliser.canonicalise(result, source_key="model-cards")
            assert isinstance(outcome, CanonicalScore), (repo, result["source_data"], outcome)
            assert result["metric_config"]["metric_unit"] == "percent"  # declared by the leaderboard
            assert 0 <= outcome.value <= 1


def test_v2_values_are_normalised_scores_and_v1_keep_their_metric(shared: Path) -> None:
    path = _cards(shared)["MaziyarPanahi/calme-2.3-phi3-4b"]
    records = [i for i in _parse(path.read_bytes()) if isinstance(i, ParsedRecord)]
    by_source = {r.record["source_metadata"]["additional_details"]["evalhouse.original_source"]: r for r in records}
    v1 = {
        r["source_data"]["dataset_name"]: r for r in by_source["Open LLM Leaderboard v1"].record["evaluation_results"]
    }
    v2 = {
        r["source_data"]["dataset_name"]: r for r in by_source["Open LLM Leaderboard v2"].record["evaluation_results"]
    }
    assert v1["ARC-Challenge"]["metric_config"]["metric_id"] == "normalized_accuracy"
    assert v1["TruthfulQA"]["metric_config"]["metric_id"] == "mc2"
    assert v1["ARC-Challenge"]["generation_config"]["additional_details"]["shots"] == "25"
    assert {r["metric_config"]["metric_id"] for r in v2.values()} == {"normalized_score"}
    # the leaderboard's six tasks are named as the leaderboard names them (its own benchmarks)
    assert set(v2) == {f"Open LLM Leaderboard v2: {t}" for t in ("IFEval", "BBH", "MATH Lvl 5", "GPQA", "MuSR",
                                                                 "MMLU-Pro")}  # fmt: skip
    gpqa = v2["Open LLM Leaderboard v2: GPQA"]
    assert gpqa["metric_config"]["metric_name"] == "acc_norm"  # the card's own word, kept
    assert gpqa["score_details"]["score"] == 9.06


# -- Hub API form, loaded through the local Hub ----------------------------------------------------


def test_the_six_shared_cards_load_every_result_with_creation_date_evidence(
    wh: Warehouse, store: RawStore, shared: Path, tmp_path: Path
) -> None:
    with serve_hub(tmp_path / "hub", hub_payloads(shared)) as srv:
        result = refresh_targets(
            wh, store, "model-card", list(EXPECTED_RESULTS), RefreshOptions(client_factory=client_for(srv))
        )
    assert result.status == "completed", result.error
    per_repo = dict(
        wh.con.execute(
            "SELECT e.model_source_id, count(*) FROM score s JOIN evaluation e USING (evaluation_id)"
            " WHERE s.source_key = 'model-cards' GROUP BY 1"
        ).fetchall()
    )
    assert per_repo == EXPECTED_RESULTS
    assert result.report.scores_loaded == sum(EXPECTED_RESULTS.values()) == 48
    assert wh.scalar("SELECT count(*) FROM quarantine") == 0
    evidence = wh.con.execute(
        "SELECT e.config_id, e.date, e.kind, e.precision FROM release_date_evidence e WHERE kind = 'hf_repo_created'"
    ).fetchall()
    dates = {str(d) for _c, d, _k, _p in evidence}
    assert dates == {f["createdAt"][:10] for f in facts().values()}
    assert {p for *_x, p in evidence} == {"day"}
    kind = wh.con.execute("SELECT lower_bound FROM release_date_kind WHERE kind = 'hf_repo_created'").fetchone()
    assert kind == (True,)  # the registry's kind: a repository creation date only bounds the release below


def test_cli_ingest_model_card_by_repo_id_and_by_targets_file(shared: Path, tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    runner = CliRunner()
    with serve_hub(tmp_path / "hub", hub_payloads(shared)) as srv:
        one = runner.invoke(
            app, ["--db", str(db), "ingest", "model-card", "alpindale/WizardLM-2-8x22B", "--mirror", mirror_url(srv),
                  "--skip-validation", "--json"],
        )  # fmt: skip
        assert one.exit_code == 0, one.output
        assert json.loads(one.stdout)["scores"]["loaded"] == 6
        listing = tmp_path / "repos.txt"
        listing.write_text("# the shared cards\nSeaLLMs/SeaLLMs-v3-7B-Chat\nnobody/not-a-repo  # a 404\n")
        many = runner.invoke(
            app, ["--db", str(db), "ingest", "model-cards", "--targets", str(listing), "--mirror", mirror_url(srv),
                  "--skip-validation", "--json"],
        )  # fmt: skip
    assert many.exit_code == 0, many.output
    report = json.loads(many.stdout)
    assert report["status"] == "partial" and report["scores"]["loaded"] == 6 and report["quarantined"] == 1
    with Warehouse.open(db, read_only=True) as wh:
        reason = wh.scalar("SELECT reason FROM quarantine WHERE locator = 'nobody/not-a-repo'")
    assert "http_status" in reason and "404" in reason


def test_named_models_are_the_repo_shaped_ids_of_other_sources(wh: Warehouse, store: RawStore, shared: Path) -> None:
    epoch_csv = shared / "datasets" / "epoch-benchmarks-2025-11" / "gpqa_diamond.csv"
    assert ingest_file(wh, store, "epoch-benchmarks", str(epoch_csv)).status in {"completed", "partial"}
    named = named_models(wh, "model-card")
    assert named and all(mc.REPO_ID_RE.match(n) for n in named)
    ids = {r[0] for r in wh.con.execute("SELECT DISTINCT model_source_id FROM evaluation").fetchall()}
    assert set(named) <= ids
    assert len(named) == len({n.casefold() for n in named})


# -- bad input --------------------------------------------------------------------------------


CARD = """---
license: mit
model-index:
- name: demo-model
  results:
  - task: {type: text-generation}
    dataset: {name: MMLU (5-Shot), type: cais/mmlu, config: all, split: test, args: {num_few_shot: 5}}
    metrics:
    - {type: acc, value: n/a, name: accuracy}
    source: {url: 'https://example.org/report', name: Own report}
  - task: {type: text-generation}
    dataset: {name: GSM8k (5-shot), type: gsm8k, config: main, split: test}
    metrics:
    - {type: acc, value: 0.712, name: accuracy}
  - task: {type: text-generation}
    dataset: {name: HellaSwag (10-Shot), type: hellaswag, split: validation}
    metrics:
    - {type: acc_norm, value: 0.805, verified: true}
---
# demo
"""


def test_metric_value_na_is_quarantined_and_the_rest_of_the_card_loads() -> None:
    items = _parse(CARD, "https://huggingface.co/demo-org/demo-model/raw/main/README.md")
    failures = [i for i in items if isinstance(i, ParseFailure)]
    records = [i for i in items if isinstance(i, ParsedRecord)]
    assert len(failures) == 1 and "'n/a' is not a plain number" in failures[0].reason
    assert failures[0].locator == "model-index[0].results[0].metrics[0]"
    (record,) = records  # self-reported: one first-party record
    assert record.record["source_metadata"]["evaluator_relationship"] == "first_party"
    assert record.record["model_info"]["id"] == "demo-org/demo-model"
    results = record.record["evaluation_results"]
    assert [r["metric_config"]["metric_unit"] for r in results] == ["proportion", "proportion"]
    assert results[1]["score_details"]["details"]["verified"] == "true"
    assert "all 2 values" in results[0]["score_details"]["details"]["evalhouse.scale_decision"]


def test_a_lone_value_in_0_1_is_ambiguous_and_quarantined() -> None:
    card = CARD.split("  - task: {type: text-generation}\n    dataset: {name: GSM8k", maxsplit=1)[0] + "---\n"
    card = card.replace("value: n/a", "value: 0.41")
    (failure,) = _parse(card)
    assert failure.reason.startswith("ambiguous scale") and "0.41" in failure.reason


def test_a_card_without_front_matter_and_invalid_yaml_are_clear_outcomes() -> None:
    (no_meta,) = _parse("# A model\n\nNo metadata here.\n")
    assert isinstance(no_meta, ParseFailure) and "no YAML front matter" in no_meta.reason
    with pytest.raises(ParseError, match="not valid YAML"):
        _parse("---\nlicense: mit\nmodel-index: [unclosed\n---\n# body\n")
    (no_index,) = _parse("---\nlicense: mit\n---\n# body\n")
    assert "no model-index" in no_index.reason


def test_an_unknown_metric_cannot_have_its_scale_decided() -> None:
    card = CARD.replace("{type: acc, value: n/a, name: accuracy}", "{type: bleu, value: 31.5}")
    failures = [i for i in _parse(card) if isinstance(i, ParseFailure)]
    assert len(failures) == 1 and "'bleu'" in failures[0].reason and "metrics.yaml" in failures[0].reason


def test_api_form_reads_eval_results_and_refuses_hub_rejected_files() -> None:
    fact = {"sha": "a" * 40, "createdAt": "2025-03-01T00:00:00.000Z", "lastModified": "2025-04-01T00:00:00.000Z"}
    gpqa = {"id": "Idavidrein/gpqa", "task_id": "gpqa_diamond"}
    source = {"url": "https://huggingface.co/demo/m", "name": "Model Card"}
    eval_results = [
        {"filename": ".eval_results/gpqa.yaml", "data": {"dataset": gpqa, "value": 63.3, "date": "2026-02-03",
                                                         "source": source}},
        {"filename": ".eval_results/hle.yaml", "data": {"dataset": {"id": "cais/hle", "task_id": "hle"}, "value": 44.9,
                                                        "notes": "With tools"}},
        {"filename": ".eval_results/bad.yaml", "error": "dataset is not a benchmark"},
    ]  # fmt: skip
    body = api_body("demo/m", fact, {"license": "mit"}, evalResults=eval_results)
    items = list(mc.parse(body, meta=_meta(mc.api_url("demo/m"))))
    failures = [i for i in items if isinstance(i, ParseFailure)]
    assert len(failures) == 1 and "dataset is not a benchmark" in failures[0].reason
    (record,) = [i for i in items if isinstance(i, ParsedRecord)]
    results = record.record["evaluation_results"]
    assert [r["source_data"]["dataset_name"] for r in results] == ["gpqa_diamond", "hle"]
    assert results[1]["generation_config"]["additional_details"]["prompting"] == "With tools"
    details = record.record["model_info"]["additional_details"]
    assert details["release_date"] == "2025-03-01" and details["evalhouse.release_date_kind"] == "hf_repo_created"


def test_a_creation_date_on_the_hub_epoch_is_no_release_evidence() -> None:
    fact = {"sha": "b" * 40, "createdAt": "2022-03-02T23:29:04.000Z", "lastModified": "2024-01-01T00:00:00.000Z"}
    (record,) = mc.parse(api_body("old/bert-like", fact, {}), meta=_meta(mc.api_url("old/bert-like")))
    details = record.record["model_info"]["additional_details"]
    assert "release_date" not in details
    assert "predates the Hub's creation-date records" in details["evalhouse.hf_created_at_note"]
    assert record.record["evaluation_results"] == []  # the repository is still recorded


def test_a_redirect_to_a_login_page_fails_the_run(wh: Warehouse, store: RawStore, tmp_path: Path) -> None:
    login = b"<!DOCTYPE html><html><head><title>Log in | Hugging Face</title></head><body><form>"
    login += b'<input type="password" name="password"></form></body></html>'
    api_path = "/m/" + str(mirror_relpath(mc.api_url("gated-org/gated-model")))
    with serve_hub(tmp_path / "hub", {}) as srv:
        srv.route("/login", Reply(200, login, headers={"Content-Type": "text/html"}))
        srv.route(api_path, Reply(302, headers={"Location": f"{srv.url}/login"}))
        result = ingest_file(
            wh, store, "model-card", "gated-org/gated-model", RefreshOptions(client_factory=client_for(srv))
        )
        assert srv.requests_for("/login")
    assert result.status == "failed"
    assert "login page" in result.error and "gated or private" in result.error
    assert wh.scalar("SELECT count(*) FROM evaluation") == 0


def test_every_model_index_value_of_the_recorded_cards_is_accounted_for(
    wh: Warehouse, store: RawStore, shared: Path, tmp_path: Path
) -> None:
    """The source's ``verified_on`` cards, counted from their own YAML (not the parser) and loaded
    through the Hub API path over loopback: loaded + quarantined + duplicate = every value."""
    recorded = [shared / ref.removeprefix("shared:") for ref in mc.SOURCE.verified_on.files]
    assert sorted(p.name for p in recorded) == sorted(p.name for p in _cards(shared).values())
    values = [
        metric["value"]
        for path in recorded
        for entry in front_matter(path.read_text(encoding="utf-8"))["model-index"]
        for result in entry["results"]
        for metric in result["metrics"]
    ]
    assert len(values) == 48
    with serve_hub(tmp_path / "hub", hub_payloads(shared)) as srv:
        result = refresh_targets(
            wh, store, "model-card", list(EXPECTED_RESULTS), RefreshOptions(client_factory=client_for(srv))
        )
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(values)
    assert r.scores_loaded >= 0.99 * len(values)
    got = set(
        wh.con.execute(
            "SELECT e.model_source_id, s.raw_value FROM score s JOIN evaluation e USING (evaluation_id)"
            " WHERE s.source_key = 'model-cards'"
        ).fetchall()
    )
    # read off the cards' front matter (first values of four cards, and calme's GPQA)
    for spot in [
        ("UCLA-AGI/Llama-3-Instruct-8B-SPPO-Iter3", 68.28),
        ("UCLA-AGI/Llama-3-Instruct-8B-SPPO-Iter3", 29.74),
        ("alpindale/WizardLM-2-8x22B", 52.72),
        ("SeaLLMs/SeaLLMs-v3-7B-Chat", 43.77),
        ("BEE-spoke-data/smol_llama-220M-GQA", 24.83),
        ("MaziyarPanahi/calme-2.3-phi3-4b", 9.06),
    ]:
        assert spot in got, spot
