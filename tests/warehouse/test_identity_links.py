"""Every identity link is a recorded curation decision with its evidence, and real sources meet.

A fresh DuckDB warehouse is loaded with real Artificial Analysis records (the pinned snapshot, parsed
by its source) by the real loader; the session's real warehouse (Epoch + AA through the refresh
over loopback) shows the same configuration reached from both sources.
"""

from __future__ import annotations

import copy
import json
from pathlib import Path
from typing import Any

import duckdb
import pytest
from pinned_digest import parse_items

from evalhouse.curation.registry import load_registry
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.load.records import LoadContext, Loader
from evalhouse.warehouse.registry_sync import sync_registry

REG = load_registry()
NAMES = ("GPT-4.1", "GPT-4o (Aug '24)", "Gemini 2.0 Flash Thinking Experimental (Dec '24)")


@pytest.fixture(scope="module")
def aa_records(shared: Path) -> list[ParsedRecord]:
    items = parse_items(shared)["artificial-analysis"]
    chosen = [i for i in items if isinstance(i, ParsedRecord) and i.record["model_info"]["name"] in NAMES]
    assert {i.record["model_info"]["name"] for i in chosen} == set(NAMES)
    return chosen


def _load(db: Path, items: list[ParsedRecord], run_id: str) -> None:
    with Warehouse.open(db) as wh, wh.transaction() as con:
        sync_registry(con, REG)
        Loader(con, LoadContext(source_key="artificial-analysis", run_id=run_id, registry=REG)).load(
            items, raw_sha256=run_id
        )


def _rerun(items: list[ParsedRecord]) -> list[ParsedRecord]:
    """The same models measured again: other values, other evaluations."""
    out = []
    for item in items:
        record: dict[str, Any] = copy.deepcopy(item.record)
        record["evaluation_id"] = f"{record['evaluation_id']}-again"
        for result in record["evaluation_results"]:
            result["score_details"]["score"] = float(result["score_details"]["score"]) * 0.5
        out.append(ParsedRecord(record=record, locator=f"{item.locator} again"))
    return out


def _decisions(db: Path) -> list[tuple[str, str, dict[str, Any], dict[str, Any]]]:
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT kind, rule, subject, detail FROM curation_decision WHERE kind LIKE 'identity%' ORDER BY decision_id"
        ).fetchall()
    return [(k, r, json.loads(s), json.loads(d)) for k, r, s, d in rows]


def test_identity_links_are_decisions_with_their_evidence_recorded_once(
    aa_records: list[ParsedRecord], tmp_path: Path
) -> None:
    db = tmp_path / "w.duckdb"
    _load(db, aa_records, "run-1")
    decisions = _decisions(db)
    by_model = {(d[2]["source_model_id"], d[3]["step"]): d for d in decisions}

    # AA's undated "GPT-4.1", released (AA says) 2025-04-14: the registry's only snapshot of that day
    kind, rule, subject, detail = by_model[("openai/gpt-4-1", "date")]
    assert kind == "identity_link" and subject["config_id"] == "openai/gpt-4.1|date=2025-04-14"
    assert detail["evidence"] == "https://platform.openai.com/docs/models/gpt-4.1"
    assert detail["configurations"] == ["openai/gpt-4.1|date=2025-04-14"] and "(2025-04-14)" in rule

    kind, rule, subject, detail = by_model[("openai/gpt-4o-2024-08-06", "date")]
    assert subject["config_id"] == "openai/gpt-4o|date=2024-08-06" and detail["model_name"] == "GPT-4o (Aug '24)"
    assert "'openai/gpt-4o-2024-08-06'" in rule  # the source's own identifier is the evidence

    kind, rule, subject, detail = by_model[("google/gemini-2-0-flash-thinking-exp-1219", "candidate")]
    assert kind == "identity_candidate" and subject["config_id"].endswith("|date=2024-12")
    assert sorted(detail["configurations"]) == [
        "google/gemini-2.0-flash|mode=reasoning|preview=exp|date=2024-12-11",
        "google/gemini-2.0-flash|mode=reasoning|preview=exp|date=2024-12-19",
    ]
    with duckdb.connect(str(db), read_only=True) as con:
        configs = {r[0] for r in con.execute("SELECT config_id FROM model_config").fetchall()}
    assert not set(detail["configurations"]) & configs, "a candidate is a link, never a merge"

    _load(db, _rerun(aa_records), "run-2")  # the same models again: loaded, no second decision
    with duckdb.connect(str(db), read_only=True) as con:
        runs = con.execute("SELECT count(DISTINCT run_id) FROM evaluation").fetchone()[0]
    assert runs == 2
    assert _decisions(db) == decisions


def test_real_sources_meet_in_one_configuration_and_near_misses_are_listed(real_warehouse: Path) -> None:
    with duckdb.connect(str(real_warehouse), read_only=True) as con:
        names = ["GPT-4o (Aug '24)", "gpt-4o-2024-08-06", "GPT-4.1", "gpt-4.1-2025-04-14"]
        names += ["Mistral Large 2 (Nov '24)", "mistral-large-2411", "DeepSeek R1 0528 (May '25)", "DeepSeek-R1-0528"]
        aliases = dict(
            con.execute(
                "SELECT source_key || ' ' || model_name, config_id FROM model_alias"
                " WHERE model_name IN (SELECT unnest(?::VARCHAR[]))",
                [names],
            ).fetchall()
        )
        candidates = con.execute("SELECT config_a, config_b, reason FROM v_config_candidates").fetchall()
    assert aliases["artificial-analysis GPT-4o (Aug '24)"] == aliases["epoch-benchmarks gpt-4o-2024-08-06"]
    assert aliases["epoch-benchmarks gpt-4o-2024-08-06"] == "openai/gpt-4o|date=2024-08-06"
    assert aliases["artificial-analysis GPT-4.1"] == aliases["epoch-benchmarks gpt-4.1-2025-04-14"]
    assert aliases["artificial-analysis Mistral Large 2 (Nov '24)"] == aliases["epoch-benchmarks mistral-large-2411"]
    assert aliases["artificial-analysis DeepSeek R1 0528 (May '25)"] == aliases["epoch-benchmarks DeepSeek-R1-0528"]
    # AA's ChatGPT version of March 2025 is a month; Epoch's is a day: a listed candidate, not a merge
    assert (
        "openai/gpt-4o|date=2025-03|alias=chatgpt",
        "openai/gpt-4o|date=2025-03-27|alias=chatgpt",
        "a month beside a day in it",
    ) in candidates
    assert all(a != b for a, b, _ in candidates)
