"""Open LLM Leaderboard v2 on its one real row (the formatted API's row for 0-hero/Matter-0.2-7B-DPO,
kept verbatim by the EEE project): every cell through the real refresh over loopback.

No full real response is public (the Space is archived); the row lives in ../shared, so these tests
skip without it. Cells are counted here from the JSON, never by the parser."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from recorded import accounted, mirror_of, pinned, refresh_from

from evalhouse.ingest.sources import open_llm_leaderboard as oll
from evalhouse.warehouse.db import Warehouse

pytestmark = pytest.mark.skipif(pinned() is None, reason="the real row is in ../shared, not beside the checkout")


def test_refresh_on_the_real_row_loads_every_cell_and_keeps_the_row_facts(tmp_path: Path) -> None:
    payloads = mirror_of("open-llm-leaderboard", tmp_path / "m", pinned())
    (row,) = json.loads(payloads[oll.URL])
    expected = sum(
        (cell.get("value") is not None) + (cell.get("normalized_score") is not None)
        for cell in row["evaluations"].values()
    )
    night = refresh_from(tmp_path / "m", ["open-llm-leaderboard"], tmp_path)
    result = night.results["open-llm-leaderboard"]
    assert result.status == "completed", result.error
    with Warehouse.open(night.db) as wh:
        scores = {
            (b, m): v
            for b, m, v in wh.con.execute(
                "SELECT benchmark_id, metric_id, raw_value FROM score WHERE source_key = 'open-llm-leaderboard'"
            ).fetchall()
        }
        record = json.loads(wh.scalar("SELECT record FROM evaluation WHERE source_key = 'open-llm-leaderboard'"))
    assert expected == 12 and accounted(result) == expected and len(scores) == expected
    # five cells against the bytes
    ev = row["evaluations"]
    assert scores[("open_llm_leaderboard_v2.ifeval", "accuracy")] == ev["ifeval"]["value"]
    assert scores[("open_llm_leaderboard_v2.bbh", "normalized_score")] == ev["bbh"]["normalized_score"]
    assert scores[("open_llm_leaderboard_v2.math_lvl5", "exact_match")] == ev["math"]["value"]
    assert scores[("open_llm_leaderboard_v2.musr", "normalized_score")] == ev["musr"]["normalized_score"]
    assert scores[("open_llm_leaderboard_v2.mmlu_pro", "accuracy")] == ev["mmlu_pro"]["value"]
    facts = record["model_info"]["additional_details"]
    assert record["model_info"]["id"] == row["model"]["name"] and facts["precision"] == "bfloat16"
    assert facts["sha"] == row["model"]["sha"] and facts["has_chat_template"] == "true"
    assert facts["params_billions"] == repr(row["metadata"]["params_billions"])
