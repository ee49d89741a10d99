"""One model seen in a model card, a paper table and a leaderboard resolves to one base model.

WizardLM-2-8x22B is in the shared cards (alpindale's copy, Open LLM Leaderboard v2 results), in
the authored paper 9912.00002v1 (Table 1) and in the Epoch AI export (GPQA Diamond, MATH Level
5). All three go through the real fetch/parse/load path; names are resolved through the public
identity functions, never through hard-coded ids, and ``evalhouse audit model`` shows the three
sources' MATH Level 5 values with their tiers.
"""

from __future__ import annotations

import json
from pathlib import Path

from clirunner import CliRunner
from hubcards import client_for, hub_payloads, serve_hub

from evalhouse.cli import app
from evalhouse.curation.identity import resolve_model
from evalhouse.curation.registry import load_registry
from evalhouse.ingest.catalog import get_source
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.pipeline.refresh import RefreshOptions
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

PAPER = Path(__file__).resolve().parents[1] / "fixtures" / "papers" / "9912.00002v1.html"
REPO = "alpindale/WizardLM-2-8x22B"
NAME = "WizardLM-2-8x22B"


def test_card_paper_and_leaderboard_meet_in_one_base_model(shared: Path, tmp_path: Path) -> None:
    db = tmp_path / "w.duckdb"
    epoch = shared / "datasets" / "epoch-benchmarks-2025-11"
    with Warehouse.open(db) as wh, serve_hub(tmp_path / "hub", hub_payloads(shared)) as srv:
        store = RawStore(tmp_path / "w.raw")
        for csv_name in ("gpqa_diamond.csv", "math_level_5.csv"):
            assert ingest_file(wh, store, "epoch-benchmarks", str(epoch / csv_name)).status in {
                "completed",
                "partial",
            }
        card = ingest_file(wh, store, "model-card", REPO, RefreshOptions(client_factory=client_for(srv)))
        assert card.status == "completed", card.error
        assert ingest_file(wh, store, "paper", str(PAPER)).status == "partial"  # its non-result tables are refused
        seen = wh.con.execute(
            "SELECT e.source_key, mc.base_model_id FROM evaluation e JOIN model_config mc USING (config_id)"
            " WHERE e.model_name = ? OR e.model_source_id = ?",
            [NAME, REPO],
        ).fetchall()
    # what the identity layer says each source's model_info is (the same dicts the parsers emit)
    registry = load_registry()
    expected = {
        resolve_model({"id": REPO, "name": NAME}, "model-cards", registry).base_model_id,
        resolve_model({"id": NAME, "name": NAME}, "papers", registry).base_model_id,
        resolve_model(
            {"id": f"microsoft/{NAME}", "name": NAME, "developer": "Microsoft"}, "epoch-benchmarks", registry
        ).base_model_id,
    }
    assert len(expected) == 1
    assert {source for source, _ in seen} == {"epoch-benchmarks", "model-cards", "papers"}
    assert {base for _, base in seen} == expected

    (base,) = expected

    def audit(benchmark: str) -> list[dict]:
        result = CliRunner().invoke(app, ["--db", str(db), "audit", "model", base, "--benchmark", benchmark, "--json"])
        assert result.exit_code == 0, result.output
        return json.loads(result.stdout)["scores"]

    scores = audit("math_level_5")
    tiers = {s["source_key"]: s["source_tier"] for s in scores}
    assert tiers == {k: get_source(k).SOURCE.tier for k in ("epoch-benchmarks", "papers")}
    values = {s["source_key"]: s["raw_value"] for s in scores}
    assert values["papers"] == 25.7  # the paper's printed number
    assert abs(values["epoch-benchmarks"] - 0.25736404833836857) < 1e-12
    # the card carries the Open LLM Leaderboard's number: its own benchmark (4-shot, lm-eval), normalised
    [card] = audit("open_llm_leaderboard_v2.math_lvl5")
    assert (card["source_key"], card["source_tier"]) == ("model-cards", get_source("model-cards").SOURCE.tier)
    assert (card["raw_value"], card["metric_id"]) == (22.28, "normalized_score")  # the card's printed number
