"""EvalPerf on its recorded real ``COMBINED-RESULTS.json`` (evalplus.github.io @ 8741845), replayed over
loopback.

Cells are counted from the JSON itself: every non-null field of every model entry (every key but the
pairwise ``heatmap_data`` table, which is not a per-model measurement).
"""

from __future__ import annotations

import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import evalperf

FILE = DEFAULT_FIXTURES / "evalperf" / "COMBINED-RESULTS.json"


def models() -> dict[str, dict]:
    return {k: v for k, v in json.loads(FILE.read_text(encoding="utf-8")).items() if k != "heatmap_data"}


def payload_cells() -> list[tuple[str, str, float]]:
    return [(m, f, v) for m, entry in models().items() for f, v in entry.items() if v is not None]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(evalperf.SOURCE, tmp_path_factory.mktemp("evalperf")) as done:
        yield done


def test_every_cell_of_the_recorded_file_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(models()) == 34 and len(expected) == 34 * 5
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 34


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["metric"], s["raw_value"], s["setup"]) for s in scores(wh, "evalperf")}
    fast, default = "performance-encouraging", "default"
    # read off COMBINED-RESULTS.json
    for model, metric, value, setup in [
        ("infly/OpenCoder-8B-Instruct", "dps", 81.65576442357961, default),
        ("infly/OpenCoder-8B-Instruct", "dps.normalised", 77.46557596992379, default),
        ("infly/OpenCoder-8B-Instruct", "pass_rate", 76.9322033898305, default),
        ("infly/OpenCoder-8B-Instruct", "win_rate.model", 0.30303030303030304, default),
        ("o1-preview-2024-09-12", "dps", 85.24709950585509, fast),
        ("o1-preview-2024-09-12", "win_rate.task", 0.5898576512455516, fast),
    ]:
        assert any(
            m == model and k == metric and v == value and json.loads(s)["prompt"] == setup for m, k, v, s in got
        ), (
            model,
            metric,
        )
    assert {v for _m, _k, v, _s in got} <= {v for _m, _f, v in payload_cells()}
    assert {s["benchmark"] for s in scores(wh, "evalperf")} == {"evalperf"}
