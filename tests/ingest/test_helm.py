"""HELM on real helm-summarize outputs (the Safety suite): HELM's model ids from the score cells'
run specs, every Accuracy cell loaded through the real refresh over loopback, HELM's own run groups
registered from their headers. Cells are counted here from the JSON itself, never by the parser."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from recorded import accounted, mirror_of, pinned, refresh_from

from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.source import FetchMeta, ParseError
from evalhouse.ingest.sources import helm
from evalhouse.schema.records import ParsedRecord, ParseFailure
from evalhouse.warehouse.db import Warehouse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "helm"
NOW = datetime(2024, 11, 8, tzinfo=UTC)
V1 = f"{helm.STORAGE}/safety/benchmark_output/releases/v1.0.0"


def accuracy_cells(body: bytes) -> int:
    (tab,) = [t for t in json.loads(body) if t["title"] == "Accuracy"]
    return sum(1 for row in tab["rows"] for cell in row[1:] if cell.get("value") is not None)


def table(body: bytes) -> list:
    meta = FetchMeta("helm", f"{V1}/groups/safety_scenarios.json", "0" * 64, NOW, label="table:safety")
    return list(helm.parse(body, meta=meta))


def test_the_chain_follows_the_chosen_projects_latest_release_to_its_main_group() -> None:
    (groups,) = helm.follow(
        (FIXTURES / "project_metadata.json").read_bytes(),
        meta=FetchMeta("helm", helm.METADATA_URL, "0" * 64, NOW, label="project_metadata:safety"),
    )
    assert (groups.url, groups.label) == (f"{V1}/groups.json", "groups:safety")
    (main,) = helm.follow(
        (FIXTURES / "safety_v3_groups.json").read_bytes(),
        meta=FetchMeta("helm", groups.url, "0" * 64, NOW, label=groups.label),
    )
    assert (main.url, main.label) == (f"{V1}/groups/safety_scenarios.json", "table:safety")
    # a project evalhouse cannot read, or one the metadata does not list, fails loudly
    for asked, message in (("safety,heim", "does not read"), ("capabilities", "lists no release")):
        meta = FetchMeta("helm", helm.METADATA_URL, "0" * 64, NOW, label=f"project_metadata:{asked}")
        with pytest.raises(ParseError, match=message):
            list(helm.parse((FIXTURES / "project_metadata.json").read_bytes(), meta=meta))


def test_models_are_helm_ids_from_the_score_cells_run_specs() -> None:
    body = (FIXTURES / "safety_v3_groups_safety_scenarios.json").read_bytes()
    records = [i for i in table(body) if isinstance(i, ParsedRecord)]
    by_display = {r.record["model_info"]["additional_details"]["display_name"]: r.record for r in records}
    llama = by_display["Llama 3 (70B)"]  # the v3 suite ran the base model (v4: meta_llama-3-70b-chat)
    assert llama["model_info"]["id"] == llama["model_info"]["name"] == "meta/llama-3-70b"
    assert llama["model_info"]["additional_details"]["helm_model_id"] == "meta_llama-3-70b"
    assert by_display["GPT-4o (2024-05-13)"]["model_info"]["id"] == "openai/gpt-4o-2024-05-13"


def test_spot_values_match_the_bytes() -> None:
    body = (FIXTURES / "safety_v3_groups_safety_scenarios.json").read_bytes()
    (tab,) = [t for t in json.loads(body) if t["title"] == "Accuracy"]
    headers = [h["value"] for h in tab["header"]]
    parsed = {
        r.record["model_info"]["additional_details"]["display_name"]: {
            res["score_details"]["details"]["column"]: res["score_details"]["score"]
            for res in r.record["evaluation_results"]
        }
        for r in table(body)
        if isinstance(r, ParsedRecord)
    }
    checked = 0
    for row in tab["rows"][:5]:  # one cell per row, a different column each time
        column = 1 + checked % (len(headers) - 1)
        assert parsed[row[0]["value"]][headers[column]] == row[column]["value"]
        checked += 1
    assert checked == 5


def test_a_row_whose_cells_name_no_model_is_refused_not_guessed() -> None:
    body = json.loads((FIXTURES / "safety_v3_groups_safety_scenarios.json").read_bytes())
    accuracy = next(t for t in body if t["title"] == "Accuracy")
    for cell in accuracy["rows"][0][1:]:
        cell.pop("run_spec_names", None)
    items = table(json.dumps(body).encode())
    failures = [i for i in items if isinstance(i, ParseFailure)]
    assert len(failures) == 1 and "no score cell names the HELM model" in failures[0].reason
    assert sum(isinstance(i, ParsedRecord) for i in items) == 8


def refresh_and_count(mirror: Path, payloads: dict, tmp_path: Path) -> None:
    night = refresh_from(mirror, ["helm"], tmp_path)
    result = night.results["helm"]
    assert result.status == "completed", result.error
    expected = sum(accuracy_cells(b) for u, b in payloads.items() if u.endswith("safety_scenarios.json"))
    with Warehouse.open(night.db) as wh:
        loaded = wh.scalar("SELECT count(*) FROM score WHERE source_key = 'helm'")
        quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = 'helm'")
        sql = "SELECT json_extract_string(subject, '$.id'), rule FROM curation_decision WHERE kind = ?"
        decisions = dict(wh.con.execute(sql, ["provisional_benchmark"]).fetchall())
        sql = "SELECT DISTINCT source_model_id FROM model_alias WHERE source_key = 'helm'"
        models = {r[0] for r in wh.con.execute(sql).fetchall()}
    assert accounted(result) == expected and loaded >= 0.99 * expected and quarantined == 0
    assert "declared by source helm" in decisions["helm.helm_safety_harmbench"]
    # the first row's HELM model id, as its HarmBench cell's run spec writes it
    (tab,) = [t for u, b in payloads.items() if u.endswith("safety_scenarios.json") for t in json.loads(b)][:1]
    spec = tab["rows"][0][2]["run_spec_names"][0]
    assert spec.split("model=")[1].replace("_", "/", 1) in models


def test_refresh_on_the_recorded_v3_suite_without_the_pinned_folder(tmp_path: Path) -> None:
    payloads = {
        helm.METADATA_URL: (FIXTURES / "project_metadata.json").read_bytes(),
        f"{V1}/groups.json": (FIXTURES / "safety_v3_groups.json").read_bytes(),
        f"{V1}/groups/safety_scenarios.json": (FIXTURES / "safety_v3_groups_safety_scenarios.json").read_bytes(),
    }
    build_mirror(tmp_path / "m", payloads)
    refresh_and_count(tmp_path / "m", payloads, tmp_path)


def test_refresh_on_the_recorded_replay(tmp_path: Path) -> None:
    if pinned() is None:
        pytest.skip("the HELM replay's files are in ../shared, which is not beside the checkout")
    payloads = mirror_of("helm", tmp_path / "m", pinned())
    assert len(payloads) == 3
    refresh_and_count(tmp_path / "m", payloads, tmp_path)
