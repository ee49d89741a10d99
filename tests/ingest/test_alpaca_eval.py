"""AlpacaEval 2.0 on its recorded real leaderboard CSV (tatsu-lab/alpaca_eval @ cd543a1), replayed over
loopback.

Cells are counted from the CSV itself: every non-empty ``length_controlled_winrate``, ``win_rate`` and
``discrete_win_rate`` (the win/draw counts, ``n_total`` and ``avg_length`` describe those cells).
"""

from __future__ import annotations

import csv
import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import alpaca_eval

FILE = DEFAULT_FIXTURES / "alpaca-eval" / "weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
CELLS = ("length_controlled_winrate", "win_rate", "discrete_win_rate")


def rows() -> list[dict[str, str]]:
    with FILE.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def payload_cells() -> list[tuple[str, str, float]]:
    return [(r[""], c, float(r[c])) for r in rows() for c in CELLS if r[c].strip()]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(alpaca_eval.SOURCE, tmp_path_factory.mktemp("alpaca")) as done:
        yield done


def test_every_cell_of_the_recorded_csv_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(rows()) == 223 and len(expected) == 669
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 223


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["metric"], s["raw_value"], s["evaluated_by"]) for s in scores(wh, "alpaca-eval")}
    # read off the CSV: lines 2 and 3, and gpt-4o-2024-05-13 (a 'minimal' row, no LC standard error)
    for spot in [
        ("NullModel", "win_rate.length_controlled", 86.45780691307947, "community"),
        ("NullModel", "win_rate", 76.91979180386511, "community"),
        ("NullModel", "win_rate.discrete", 83.97515527950311, "community"),
        ("SelfMoA_gemma-2-9b-it-WPO-HB", "win_rate.length_controlled", 78.53928111481099, "community"),
        ("gpt-4o-2024-05-13", "win_rate.length_controlled", 57.45682883335095, "benchmark_creator"),
        ("gpt-4o-2024-05-13", "win_rate", 51.32757578249279, "benchmark_creator"),
    ]:
        assert spot in got, spot
    assert {(m, v) for m, _k, v, _e in got} <= {(m, v) for m, _c, v in payload_cells()}
    assert {s["benchmark"] for s in scores(wh, "alpaca-eval")} == {"alpaca_eval_2"}


def test_standard_errors_and_sample_size_come_from_the_row(night) -> None:
    _result, wh = night
    stderr, n = wh.con.execute(
        "SELECT s.stderr, s.n_samples FROM score s JOIN evaluation e USING (evaluation_id)"
        " WHERE s.source_key = 'alpaca-eval' AND e.model_source_id = 'NullModel' AND s.metric_id = 'win_rate'"
    ).fetchone()
    assert n == 805
    assert stderr == pytest.approx(0.9090102449662572 / 100)  # canonical proportion
    setup = {s["setup"] for s in scores(wh, "alpaca-eval")}
    assert len(setup) == 1 and json.loads(next(iter(setup)))["grader_model"] == "gpt-4-1106-preview"
