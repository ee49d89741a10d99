"""Benchmark identity across sources: a collection's namespaced benchmark linked to the registry's
when subset, split, metric and normalisation match, kept apart with the reason when they do not.
Checked on real records: the EEE hfopenllm_v2 collection (../shared) and the leaderboard bot's
model-card results."""

from __future__ import annotations

import copy
import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.curation.benchmark_links import BenchmarkLinks, packaged_doc
from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore
from evalhouse.curation.registry import load_registry
from evalhouse.errors import InputError
from evalhouse.ingest.source import FetchMeta
from evalhouse.ingest.sources import model_cards
from evalhouse.schema.eee_legacy import migrate_legacy
from evalhouse.schema.records import ParsedRecord

REG = load_registry()
SEALLMS = "datasets/eee-datastore-legacy/data/hfopenllm_v2/SeaLLMs/SeaLLMs-v3-7B-Chat"


def test_every_same_as_link_states_what_was_checked_and_every_apart_entry_why() -> None:
    links = REG.benchmark_links
    assert links is not None and links.links
    for link in links.links:
        assert link.target in REG.benchmarks, link
        if link.same_as:
            assert all((link.subset, link.split, link.metric, link.normalisation, link.evidence)), link
        else:
            assert link.reason and len(link.reason.split()) > 8, link
    # the leaderboard's GPQA is never GPQA Diamond
    apart = links.between("hfopenllm_v2.gpqa", "gpqa_diamond")
    assert [lk.apart_from for lk in apart] == ["gpqa_diamond"] and "diamond" in apart[0].why()
    # ... and the entry still speaks of the benchmark the collection's GPQA loads as
    assert links.between("open_llm_leaderboard_v2.gpqa", "gpqa_diamond") == apart


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda lk: lk.pop("subset"), "states its subset"),
        (lambda lk: lk.update(same_as="no_such_benchmark"), "is not a registry benchmark"),
        (lambda lk: lk.update(metrics={"accuracy": "no_such_metric"}), "is not a registry metric"),
        (lambda lk: lk.update(apart_from="gpqa"), "exactly one of same_as and apart_from"),
    ],
)
def test_a_link_that_does_not_say_enough_is_refused(change, message: str) -> None:
    doc = copy.deepcopy(packaged_doc())
    change(doc["links"][0])
    with pytest.raises(InputError, match=message):
        BenchmarkLinks.from_doc(doc, benchmarks=set(REG.benchmarks), metrics=set(REG.metrics))


def test_the_collections_gpqa_loads_as_the_leaderboards_with_its_acc_norm_named(shared: Path) -> None:
    [path] = (shared / SEALLMS).glob("*.json")
    raw = json.loads(path.read_text())
    record, _ = migrate_legacy(raw, "hfopenllm_v2")
    by_name = {r["evaluation_name"]: r for r in record["evaluation_results"]}
    canon = Canonicaliser(REG, allow_provisional=True)
    gpqa = canon.canonicalise(by_name["GPQA"], source_key="eee-hfopenllm-v2", collection="hfopenllm_v2")
    assert isinstance(gpqa, CanonicalScore)
    assert (gpqa.benchmark_id, gpqa.metric_id) == ("open_llm_leaderboard_v2.gpqa", "normalized_accuracy")
    assert gpqa.value == by_name["GPQA"]["score_details"]["score"]  # the same number, renamed only
    assert "linked to registry benchmark open_llm_leaderboard_v2.gpqa by benchmark_links.yaml" in gpqa.steps[0]
    assert "accuracy -> normalized_accuracy" in gpqa.steps[1]
    # a collection benchmark the file does not link stays provisional, with its candidate named
    helm = canon.canonicalise(
        {**by_name["GPQA"], "evaluation_name": "GPQA", "source_data": {"dataset_name": "GPQA"}},
        source_key="eee-helm-capabilities",
        collection="helm_capabilities",
    )
    assert isinstance(helm, CanonicalScore) and helm.benchmark_id == "helm_capabilities.gpqa"
    assert helm.candidate_benchmark == "gpqa"


def test_the_leaderboard_bots_card_results_name_the_leaderboards_benchmarks(shared: Path) -> None:
    path = shared / "formats" / "hf-model-cards" / "SeaLLMs-v3-7B-Chat.README.md"
    meta = FetchMeta("model-cards", path.resolve().as_uri(), "0" * 64, datetime(2026, 7, 1, tzinfo=UTC), None, None)
    [record] = [i for i in model_cards.parse(path.read_bytes(), meta=meta) if isinstance(i, ParsedRecord)]
    canon = Canonicaliser(REG)
    got = {}
    for result in record.record["evaluation_results"]:
        score = canon.canonicalise(result, source_key="model-cards")
        assert isinstance(score, CanonicalScore)
        got[score.benchmark_id] = (score.metric_id, score.raw_value)
    # the card's table (| GPQA (0-shot) | 6.49 |): the leaderboard's normalised score, its own benchmark
    assert got["open_llm_leaderboard_v2.gpqa"] == ("normalized_score", 6.49)
    assert set(got) == {f"open_llm_leaderboard_v2.{b}" for b in ("ifeval", "bbh", "math_lvl5", "gpqa", "musr",
                                                                  "mmlu_pro")}  # fmt: skip


def test_curate_benchmark_links_lists_each_link_and_its_check() -> None:
    out = CliRunner().invoke(app, ["curate", "benchmark-links", "--json"])
    assert out.exit_code == 0, out.output
    data = json.loads(out.output)
    kinds = {(lk["benchmark"], lk["kind"], lk.get("same_as") or lk.get("apart_from")) for lk in data["links"]}
    assert ("hfopenllm_v2.gpqa", "same_as", "open_llm_leaderboard_v2.gpqa") in kinds
    assert ("hfopenllm_v2.gpqa", "apart_from", "gpqa_diamond") in kinds


# -- the pinned corpus: Epoch + AA (real refresh), the legacy datastore, the shared model cards ----


@pytest.fixture(scope="module")
def corpus(real_warehouse_with_legacy: Path, shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from realwarehouse import copy_warehouse

    from evalhouse.pipeline.ingest_file import ingest_file
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    db = copy_warehouse(real_warehouse_with_legacy, tmp_path_factory.mktemp("corpus"))
    store = RawStore(db.with_suffix(".raw"))
    with Warehouse.open(db) as wh:
        for card in sorted((shared / "formats" / "hf-model-cards").glob("*.README.md")):
            ingest_file(wh, store, "model-cards", str(card))
    return db


@pytest.mark.slow
def test_on_the_pinned_corpus_the_leaderboards_numbers_meet_in_its_benchmarks(corpus: Path) -> None:
    import duckdb

    con = duckdb.connect(str(corpus), read_only=True)
    try:
        assert con.execute("SELECT count(*) FROM score WHERE benchmark_id LIKE 'hfopenllm_v2.%'").fetchone()[0] == 0
        by_source = dict(con.execute(
            "SELECT source_key, count(*) FROM score WHERE benchmark_id = 'open_llm_leaderboard_v2.gpqa' GROUP BY 1"
        ).fetchall())  # fmt: skip
        assert by_source["eee-hfopenllm-v2"] == 2365 and by_source["model-cards"] >= 5
        assert (
            con.execute(
                "SELECT count(*) FROM score WHERE benchmark_id = 'gpqa_diamond' AND source_key LIKE 'eee-%'"
            ).fetchone()[0]
            == 0
        )
        linked = con.execute(
            "SELECT json_extract_string(subject, '$.id'), json_extract_string(subject, '$.linked_to')"
            " FROM curation_decision WHERE kind = 'benchmark_link' ORDER BY 1"
        ).fetchall()
        links = dict(linked)
        assert links["hfopenllm_v2.gpqa"] == "open_llm_leaderboard_v2.gpqa"
        assert len([b for b in links if b.startswith("hfopenllm_v2.")]) == 6
        assert links["helm_classic.boolq"] == "boolq" and links["helm_classic.hellaswag"] == "hellaswag"
        assert len(linked) == 8
    finally:
        con.close()
    data = json.loads(CliRunner().invoke(app, ["--db", str(corpus), "stats", "--json"]).output)
    assert data["cells_with_several_sources"] >= 22 and data["source_pairs"]
    # one model both report: the card's number (the leaderboard's normalised GPQA) and the
    # collection's (the raw acc_norm) now share the benchmark; the near miss says what still differs
    out = CliRunner().invoke(app, ["--db", str(corpus), "conflicts", "--model", "SeaLLMs/SeaLLMs-v3-7B-Chat",
                                   "--benchmark", "open_llm_leaderboard_v2.gpqa", "--json"])  # fmt: skip
    assert out.exit_code == 0, out.output
    near = json.loads(out.output)["near_misses"]
    [pair] = [p for p in near["pairs"] if {*p["a"]["sources"], *p["b"]["sources"]} == {"eee-hfopenllm-v2",
                                                                                          "model-cards"}]  # fmt: skip
    assert pair["a"]["benchmark_id"] == pair["b"]["benchmark_id"] == "open_llm_leaderboard_v2.gpqa"
    parts = {d["part"]: {d["a"], d["b"]} for d in pair["apart_by"]}
    assert parts["metric"] == {"normalized_accuracy", "normalized_score"}
    assert parts["configuration"] == {"seallms/seallms-v3-7b-chat", "seallms/seallms-v3-7b-chat|precision=bfloat16"}
    assert "setup shots" not in parts  # the leaderboard's protocol fixes GPQA at 0 shots; the card says 0
