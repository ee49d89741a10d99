"""SWE-bench on its recorded real ``data/leaderboards.json`` (swe-bench.github.io @ f702a7f), replayed
over loopback.

Cells are counted from the JSON itself: every non-null ``resolved``, ``cost``, ``instance_cost`` and
``instance_calls`` of every result of every leaderboard.
"""

from __future__ import annotations

import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import swe_bench

FILE = DEFAULT_FIXTURES / "swe-bench" / "leaderboards.json"
FIELDS = ("resolved", "cost", "instance_cost", "instance_calls")


def boards() -> dict[str, list[dict]]:
    return {b["name"]: b["results"] for b in json.loads(FILE.read_text(encoding="utf-8"))["leaderboards"]}


def payload_cells() -> list[tuple[str, str, str, float]]:
    return [
        (board, r["folder"], field, r[field])
        for board, results in boards().items()
        for r in results
        for field in FIELDS
        if r.get(field) is not None
    ]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(swe_bench.SOURCE, tmp_path_factory.mktemp("swe")) as done:
        yield done


def test_every_cell_of_the_recorded_file_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    listed = boards()
    assert {k: len(v) for k, v in listed.items()} == {
        "bash-only": 22,
        "Test": 22,
        "Verified": 145,
        "Lite": 84,
        "Multimodal": 21,
    }
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded + r.scores_in_duplicates >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == sum(len(v) for v in listed.values())
    # the team's bash-only runs are listed again on the Verified board (same folder): one record each
    twins = {x["folder"] for x in listed["bash-only"]} & {x["folder"] for x in listed["Verified"]}
    assert r.records_duplicate == len(twins) == 22


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["result_id"], s["benchmark"], s["raw_value"]) for s in scores(wh, "swe-bench")}
    # read off leaderboards.json
    for spot in [
        ("20250929_mini-v1.13.3_sonnet-4-5-20250929.resolved", "swe_bench_verified", 70.6),
        ("20250929_mini-v1.13.3_sonnet-4-5-20250929.instance_calls", "swe_bench_verified", 50.988),
        ("20250929_mini-v1.13.3_sonnet-4-5-20250929.cost", "swe_bench_verified", 279.1673704500001),
        ("20240620_sweagent_claude3.5sonnet.resolved", "swe_bench_lite", 23.0),
        ("20240620_sweagent_claude3.5sonnet.resolved", "swe_bench_verified", 33.6),
    ]:
        assert spot in got, spot
    firsts = {b: rs[0] for b, rs in boards().items()}
    assert (f"{firsts['Test']['folder']}.resolved", "swe_bench_full", firsts["Test"]["resolved"]) in got
    assert (
        f"{firsts['Multimodal']['folder']}.resolved",
        "swe_bench_multimodal",
        firsts["Multimodal"]["resolved"],
    ) in got
    expected = {(f"{folder}.{field}", value) for _b, folder, field, value in payload_cells()}
    assert {(rid, v) for rid, _b, v in got} <= expected


def test_who_ran_it_and_the_model_a_submission_names(night) -> None:
    _result, wh = night
    rows = scores(wh, "swe-bench")
    by = {(s["result_id"], s["evaluated_by"], s["model"]) for s in rows if s["result_id"].endswith(".resolved")}
    assert (
        "20250929_mini-v1.13.3_sonnet-4-5-20250929.resolved",
        "benchmark_creator",
        "claude-sonnet-4-5-20250929",
    ) in by
    # a system built on twelve models is its own model; a submission's run by its submitter
    cortexa = [b for b in by if b[0] == "20250516_cortexa_o3.resolved"]
    assert cortexa == [("20250516_cortexa_o3.resolved", "community", "Nemotron-CORTEXA")]
