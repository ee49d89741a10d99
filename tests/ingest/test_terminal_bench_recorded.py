"""Terminal-Bench on a recorded real answer of the leaderboard-read function (the 4.0 board, 27 rows),
POSTed and replayed over loopback through the real refresh.

Cells are counted from the JSON itself (the json module, not the parser): for every shown row, its
``metrics.accuracy``, ``pass_at_2`` … ``pass_at_5`` and ``total_cost_usd``.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.source import FetchMeta
from evalhouse.ingest.sources import terminal_bench as tb
from evalhouse.schema.records import ParsedRecord

ANSWER = DEFAULT_FIXTURES / "terminal-bench" / "leaderboard-read_4-0-0.json"
CELLS = ("accuracy", "pass_at_2", "pass_at_3", "pass_at_4", "pass_at_5", "total_cost_usd")


def doc() -> dict:
    return json.loads(ANSWER.read_text(encoding="utf-8"))


def payload_cells() -> list[tuple[str, str, float]]:
    return [
        (row["id"], key, row["metrics"][key])
        for row in doc()["rows"]
        if row["status"] == "display"
        for key in CELLS
        if row["metrics"].get(key) is not None
    ]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(tb.SOURCE, tmp_path_factory.mktemp("terminal-bench")) as done:
        yield done


def test_the_recording_is_the_answer_to_the_post_the_plan_sends() -> None:
    (asked,) = tb.plan(tb.SourceState())
    ((url, _file, body),) = tb.SOURCE.verified_on.replay
    assert (url, json.loads(body)) == (asked.url, json.loads(asked.body))
    board = doc()["leaderboard"]
    assert (board["package"], board["name"], board["title"]) == (
        "terminal-bench/terminal-bench",
        "4-0-0",
        "Terminal-Bench 4.0",
    )
    assert doc()["pagination"] == {"total": 27, "page": 1, "page_size": 100, "total_pages": 1}


def test_every_cell_of_the_recorded_answer_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(doc()["rows"]) == 27 and len(expected) == 27 * 6
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 27


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["result_id"], s["raw_value"]) for s in scores(wh, "terminal-bench")}
    # read off the answer: rows[0] (Codex, GPT-6 Astra, max), rows[1] (Claude Code, Fable 5.1, max),
    # rows[15] (Claude Code, GLM-5.3), rows[16] (Grok Build, Grok 4.7: a partial cost) and the last row
    for spot in [
        ("5c537be4-7fc3-449b-8bfc-ceb9061c2535.accuracy", 58.18),
        ("5c537be4-7fc3-449b-8bfc-ceb9061c2535.pass_at_5", 0.7121),
        ("c741608e-c94e-417d-b7a8-e67111a0c887.total_cost_usd", 6243.5),
        ("d72e8775-f4f1-4313-99e7-35b1cb499f24.accuracy", 41.82),
        ("84b39f56-fe3c-46c3-919f-3b67b73f9b49.total_cost_usd", 3683.287146),
        ("14f4da14-b86a-4dca-92d7-11178d4fe064.pass_at_2", 0.1636),
    ]:
        assert spot in got, spot
    assert got == {(f"{row_id}.{key}", value) for row_id, key, value in payload_cells()}


def test_agent_effort_interval_and_who_ran_it(night) -> None:
    _result, wh = night
    lo, hi, n, setup, by = wh.con.execute(
        "SELECT s.ci_lower, s.ci_upper, s.n_samples, s.setup, s.evaluated_by FROM score s"
        " WHERE s.source_key = 'terminal-bench' AND s.evaluation_result_id = ?",
        ["5c537be4-7fc3-449b-8bfc-ceb9061c2535.accuracy"],
    ).fetchone()
    assert (lo, hi, n) == (pytest.approx(0.5539), pytest.approx(0.6097), 330)  # 58.18 ± 2.79 percent
    assert json.loads(setup)["agent"] == "Codex" and json.loads(setup)["reasoning_effort"] == "max"
    assert by == "model_developer"  # OpenAI's agent on OpenAI's model
    glm = wh.scalar(
        "SELECT s.evaluated_by FROM score s WHERE s.evaluation_result_id = ?",
        ["d72e8775-f4f1-4313-99e7-35b1cb499f24.accuracy"],
    )
    assert glm == "community"  # Anthropic's Claude Code on Z.ai's GLM-5.3
    assert {s["benchmark"] for s in scores(wh, "terminal-bench")} == {"terminal_bench_v4"}
    # five efforts of one model and agent are five cells, never one
    efforts = wh.con.execute(
        "SELECT count(DISTINCT s.setup_key) FROM score s JOIN evaluation e USING (evaluation_id)"
        " WHERE s.source_key = 'terminal-bench' AND e.model_source_id = 'GPT-6 Astra' AND s.metric_id = 'pass_rate'"
    ).fetchone()[0]
    assert efforts == 5


def test_run_facts_travel_with_the_accuracy_cell() -> None:
    meta = FetchMeta("terminal-bench", tb.ENDPOINT, "0" * 64, datetime(2026, 9, 22, tzinfo=UTC), label="board:4.0")
    grok = next(
        i
        for i in tb.parse(ANSWER.read_bytes(), meta=meta)
        if isinstance(i, ParsedRecord) and i.locator == "4.0 rows[16]"
    )
    accuracy = grok.record["evaluation_results"][0]
    assert accuracy["score_details"]["details"]["display_cost"] == "$3.68k (partial: 324/330)"
    assert accuracy["score_details"]["details"]["successes"] == "124.0"


def test_the_fixture_is_the_recorded_text() -> None:
    import hashlib

    body = ANSWER.read_bytes()
    assert len(body.decode("utf-8")) == 34159  # the stored text's length, character for character
    assert hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest() == "833b0957beddbc43983cdb42cb82013ae2aafcd4"
