"""SWE-PolyBench on its recorded real ``polybench_data.json`` (gh-pages @ fe4a40b), replayed over loopback.

Cells are counted from the JSON itself: every numeric value of a ``resolved…``, ``file_…`` or
``node_…`` field of every result (``"-"`` marks a value not reported).
"""

from __future__ import annotations

import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import swe_polybench

FILE = DEFAULT_FIXTURES / "swe-polybench" / "polybench_data.json"


def boards() -> dict[str, list[dict]]:
    return {b["name"]: b["results"] for b in json.loads(FILE.read_text(encoding="utf-8"))["leaderboards"]}


def payload_cells() -> list[tuple[str, str, str, float]]:
    return [
        (board, r["name"], k, v)
        for board, results in boards().items()
        for r in results
        for k, v in r.items()
        if k.startswith(("resolved", "file_", "node_")) and isinstance(v, int | float)
    ]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(swe_polybench.SOURCE, tmp_path_factory.mktemp("polybench")) as done:
        yield done


def test_every_cell_of_the_recorded_file_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert {k: len(v) for k, v in boards().items()} == {"Full": 10, "PolyBench500": 10, "Verified": 13}
    assert len(expected) == 30 * 31 + 5 + 5 + 10  # 30 complete results; iSWE-Agent reports 5, 5 and 10
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 33


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    rows = scores(wh, "swe-polybench")
    got = {(s["benchmark"], s["result_id"], s["raw_value"]) for s in rows}
    first = boards()["Full"][0]  # Aider-PB (Sonnet 3.5)
    for field, value in [
        ("resolved", 14.075829383886257),
        ("resolved_java", 15.757575757575756),
        ("resolved_rate_single_class", 40.0),
        ("file_precision_all", 55.79778830963665),
        ("node_recall_js", 30.458453932796708),
    ]:
        assert first[field] == value  # the bytes say so
        assert ("swe_polybench", f"Aider-PB (Sonnet 3.5).{field}", value) in got
    assert ("swe_polybench_verified", "iSWE-Agent.resolved_py", 58.4070796460177) in got
    assert ("swe_polybench_500", "iSWE-Agent.resolved_java", 32.0) in got
    assert {(rid.rsplit(".", 1)[0], v) for _b, rid, v in got} <= {(n, v) for _b, n, _k, v in payload_cells()}
    assert {s["metric"] for s in rows} == {
        "pass_rate",
        "precision.file",
        "recall.file",
        "precision.node",
        "recall.node",
    }
    by = {s["model"]: s["evaluated_by"] for s in rows}
    assert by["Aider-PB (Sonnet 3.5)"] == "benchmark_creator" and by["Atlassian Rovo Dev"] == "community"
