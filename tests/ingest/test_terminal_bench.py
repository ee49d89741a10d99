"""Terminal-Bench's leaderboard-read function: POSTed per version, nested rows, hidden rows refused,
pages followed, replayed through the real refresh over loopback.

The source is verified on a recorded real answer of the 4.0 board (``test_terminal_bench_recorded.py``).
The answers here are AUTHORED edge cases the real answer does not hold (hidden rows, a second page,
the older boards), in the shape of the real one and the site's own client
(harbor-framework/terminal-bench-website, ``lib/leaderboard.ts``: ``LeaderboardReadResponse``)."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path

import pytest
from recorded import accounted, refresh_from

from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.source import FetchMeta, LayoutChanged, SourceState
from evalhouse.ingest.sources import terminal_bench as tb
from evalhouse.schema.records import ParsedRecord, ParseFailure
from evalhouse.warehouse.db import Warehouse

NOW = datetime(2026, 9, 14, tzinfo=UTC)
EVERY_BOARD = {tb.BOARDS_ENV: "4.0,3.0,2.1,2.0"}


def row(
    i: int,
    model: str,
    effort: str,
    accuracy: float,
    *,
    agent: str = "Codex",
    org: str = "OpenAI",
    status: str = "display",
) -> dict:
    return {
        "id": f"row-{i}",
        "leaderboard_id": "board",
        "rank": i,
        "metadata": {
            "date": "2026-09-03",
            "agent_display": {"url": "https://example.org/agent", "label": agent},
            "model_display": {"url": "https://example.org/model", "label": model},
            "agent_org": {"url": "https://example.org", "label": org},
            "model_org": {"url": "https://example.org", "label": "OpenAI"},
            "reasoning_effort": effort,
        },
        "metrics": {"accuracy": accuracy, "accuracy_ci95_half_width": 2.8, "n_trials": 330},
        "status": status,
        "n_trials": 330,
    }


def answer(version: str, rows: list[dict], **extra: object) -> bytes:
    package, name = tb.BOARDS[version]
    return json.dumps(
        {"leaderboard": {"package": package, "name": name, "title": f"Terminal-Bench {version}"}, "rows": rows, **extra}
    ).encode()


def meta(version: str) -> FetchMeta:
    return FetchMeta("terminal-bench", tb.ENDPOINT, "0" * 64, NOW, label=f"board:{version}")


def test_the_plan_posts_the_current_board_and_others_when_asked() -> None:
    (current,) = tb.plan(SourceState())
    assert current.label == "board:4.0"
    requests = tb.plan(SourceState(env=EVERY_BOARD))
    assert {r.method for r in requests} == {"POST"} and {r.url for r in requests} == {tb.ENDPOINT}
    bodies = {r.label: json.loads(r.body) for r in requests}
    assert bodies["board:2.0"] == {"package": "terminal-bench/terminal-bench-2", "name": "2-0"}
    assert bodies["board:4.0"] == {"package": "terminal-bench/terminal-bench", "name": "4-0-0"}


def test_nested_rows_become_agent_and_effort_cells_and_hidden_rows_are_refused() -> None:
    body = answer(
        "4.0",
        [
            row(1, "GPT-6 Astra", "max", 58.18),
            row(2, "GPT-6 Astra", "high", 57.9),
            row(3, "GPT-6 Astra", "low", 50.6, status="hide"),
        ],
    )
    items = list(tb.parse(body, meta=meta("4.0")))
    records = [i for i in items if isinstance(i, ParsedRecord)]
    (hidden,) = [i for i in items if isinstance(i, ParseFailure)]
    assert "hidden by the board" in hidden.reason and len(records) == 2
    first = records[0].record["evaluation_results"][0]
    assert first["source_data"]["dataset_name"] == "Terminal-Bench 4.0"
    assert first["score_details"]["score"] == 58.18
    assert first["score_details"]["uncertainty"]["confidence_interval"]["lower"] == pytest.approx(55.38)
    assert first["generation_config"]["additional_details"] == {"agent": "Codex", "reasoning_effort": "max"}
    assert records[0].record["source_metadata"]["additional_details"]["evalhouse.evaluated_by"] == "model_developer"


def test_an_answer_for_another_board_is_a_layout_change() -> None:
    with pytest.raises(LayoutChanged, match="describes"):
        list(tb.parse(answer("3.0", [row(1, "m", "max", 1.0)]), meta=meta("4.0")))


def test_a_further_page_is_asked_for_with_the_same_body() -> None:
    (nxt,) = tb.follow(
        answer("2.1", [row(1, "m", "max", 1.0)], pagination={"page": 1, "total_pages": 2}), meta=meta("2.1")
    )
    assert json.loads(nxt.body) == {"package": "terminal-bench/terminal-bench-2-1", "name": "main", "page": 2}
    assert tb.follow(answer("2.1", [], pagination={"page": 2, "total_pages": 2}), meta=meta("2.1")) == []


def test_refresh_replays_the_posts_from_a_mirror_over_loopback(tmp_path: Path) -> None:
    boards = {
        "4.0": answer(
            "4.0",
            [row(1, "GPT-6 Astra", "max", 58.18), row(2, "Opus 5", "max", 51.8, agent="Claude Code", org="Anthropic")],
        ),
        "3.0": answer(
            "3.0",
            [row(1, "GPT-5.6 Sol", "max", 34.59), row(2, "GPT-5.6 Sol", "high", 30.0, status="hide")],
            pagination={"page": 1, "total_pages": 2},
        ),
        "2.1": answer("2.1", [row(1, "GPT-5", "high", 49.6)]),
        "2.0": answer("2.0", [row(1, "GPT-5", "high", 49.6)]),
    }
    page2 = answer(
        "3.0",
        [row(3, "Kimi K3", "none", 20.1, agent="Terminus 2", org="Stanford")],
        pagination={"page": 2, "total_pages": 2},
    )
    payloads = {(tb.ENDPOINT, r.body): boards[r.label.split(":")[1]] for r in tb.plan(SourceState(env=EVERY_BOARD))}
    payloads[(tb.ENDPOINT, tb.request("3.0", 2).body)] = page2
    build_mirror(tmp_path / "m", payloads)
    night = refresh_from(tmp_path / "m", ["terminal-bench"], tmp_path, env=EVERY_BOARD)
    result = night.results["terminal-bench"]
    # the hidden row is quarantined with its reason, so the run is partial (everything shown loaded)
    assert result.status == "partial", result.error
    with Warehouse.open(night.db) as wh:
        per_board = dict(
            wh.con.execute(
                "SELECT benchmark_id, count(*) FROM score WHERE source_key = 'terminal-bench' GROUP BY 1"
            ).fetchall()
        )
        hidden = wh.scalar(
            "SELECT count(*) FROM quarantine WHERE source_key = 'terminal-bench' AND reason LIKE 'hidden%'"
        )
        bodies = {
            json.loads(b)["name"]
            for (b,) in wh.con.execute(
                "SELECT json_extract_string(request_params, '$.body') FROM raw_snapshot"
                " WHERE source_key = 'terminal-bench'"
            ).fetchall()
        }
    assert per_board == {
        "terminal_bench_v4": 2,
        "terminal_bench_v3": 2,
        "terminal_bench_v2_1": 1,
        "terminal_bench_v2": 1,
    }
    assert hidden == 1 and accounted(result) == 7  # 6 shown rows loaded + 1 hidden row quarantined
    assert bodies == {"4-0-0", "3-0-0", "main", "2-0"}


def test_a_night_of_posts_exports_to_a_mirror_that_replays_it(tmp_path: Path) -> None:
    """``evalhouse mirror export`` keeps each POST's payload under its URL and body."""
    from evalhouse.ingest.mirror_export import export_mirror
    from evalhouse.warehouse.raw.store import RawStore

    payloads = {
        (tb.ENDPOINT, r.body): answer(r.label.split(":")[1], [row(1, "GPT-5", "high", 49.6)])
        for r in tb.plan(SourceState(env=EVERY_BOARD))
    }
    build_mirror(tmp_path / "m", payloads)
    night = refresh_from(tmp_path / "m", ["terminal-bench"], tmp_path, env=EVERY_BOARD)
    assert night.results["terminal-bench"].status == "completed"
    with Warehouse.open(night.db) as wh:
        written = export_mirror(wh, RawStore(tmp_path / "raw"), tmp_path / "exported")
    assert set(written) == set(payloads)
    assert all(written[k].read_bytes() == body for k, body in payloads.items())


def test_a_board_name_evalhouse_does_not_know_fails_the_run_naming_it(tmp_path: Path) -> None:
    env = {tb.BOARDS_ENV: "4.0,5.0"}
    (asked,) = tb.plan(SourceState(env=env))
    assert json.loads(asked.body) == {"package": "terminal-bench/terminal-bench", "name": "4-0-0"}
    build_mirror(tmp_path / "m", {(tb.ENDPOINT, asked.body): answer("4.0", [row(1, "GPT-5", "high", 49.6)])})
    result = refresh_from(tmp_path / "m", ["terminal-bench"], tmp_path, env=env).results["terminal-bench"]
    assert result.status == "failed" and "['5.0']" in result.error and tb.BOARDS_ENV in result.error
