"""Arena-Hard-Auto v0.1 on its recorded real leaderboard CSV (lmarena/arena-hard-auto @ 196f6b8),
replayed over loopback.

Cells are counted from the CSV itself: every row's ``score`` (its interval columns describe it).
"""

from __future__ import annotations

import csv

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import arena_hard_auto

FILE = DEFAULT_FIXTURES / "arena-hard-auto" / arena_hard_auto.FILE


def rows() -> list[dict[str, str]]:
    with FILE.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(arena_hard_auto.SOURCE, tmp_path_factory.mktemp("arena-hard")) as done:
        yield done


def test_every_cell_of_the_recorded_csv_is_accounted_for(night) -> None:
    result, _wh = night
    expected = [r for r in rows() if r["score"].strip()]
    assert len(expected) == 60
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons


def test_spot_values_and_intervals_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["raw_value"]) for s in scores(wh, "arena-hard-auto")}
    # read off the CSV
    for spot in [
        ("gpt-4-turbo-2024-04-09", 82.63),
        ("claude-3-5-sonnet-20240620", 79.35),
        ("gpt-4o-2024-05-13", 79.21),
        ("gpt-4-0314", 50.0),
        ("gemma-2b-it", 3.0),
    ]:
        assert spot in got, spot
    assert got == {(r["model"], float(r["score"])) for r in rows()}
    lo, hi, bench, by = wh.con.execute(
        "SELECT s.ci_lower, s.ci_upper, s.benchmark_id, s.evaluated_by FROM score s JOIN evaluation e"
        " USING (evaluation_id) WHERE e.model_source_id = 'gpt-4-turbo-2024-04-09'"
    ).fetchone()
    assert (lo, hi) == (pytest.approx(0.8075), pytest.approx(0.846))  # 80.75 / 84.6 percent, canonical proportion
    assert (bench, by) == ("arena_hard_v0_1", "benchmark_creator")
