"""EvalPlus on its recorded real ``results.json`` (evalplus.github.io @ 8741845), replayed over loopback.

Cells are counted from the JSON itself: every non-null value under a model's ``pass@1``.
"""

from __future__ import annotations

import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import evalplus

FILE = DEFAULT_FIXTURES / "evalplus" / "results.json"


def payload_cells() -> list[tuple[str, str, float]]:
    doc = json.loads(FILE.read_text(encoding="utf-8"))
    return [(m, k, v) for m, entry in doc.items() for k, v in entry["pass@1"].items() if v is not None]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(evalplus.SOURCE, tmp_path_factory.mktemp("evalplus")) as done:
        yield done


def test_every_cell_of_the_recorded_file_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(json.loads(FILE.read_text(encoding="utf-8"))) == 125
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    # one record per model and role: HumanEval as an independent run, the EvalPlus sets as the creator's
    assert r.records_loaded + r.records_duplicate == 125 + 125


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["benchmark"], s["raw_value"], s["evaluated_by"]) for s in scores(wh, "evalplus")}
    # read off results.json
    for spot in [
        ("OpenCoder-8B-Instruct", "humaneval", 81.7, "independent_evaluator"),
        ("OpenCoder-8B-Instruct", "humaneval_plus", 77.4, "benchmark_creator"),
        ("OpenCoder-8B-Instruct", "mbpp_evalplus", 82.0, "benchmark_creator"),
        ("OpenCoder-8B-Instruct", "mbpp_plus", 71.4, "benchmark_creator"),
        ("Qwen2.5-Coder-32B-Instruct", "humaneval", 92.1, "independent_evaluator"),
        ("CodeLlama-70B-Instruct", "humaneval_plus", 65.9, "benchmark_creator"),
    ]:
        assert spot in got, spot
    assert not any(m == "Code-13B" and b.startswith("mbpp") for m, b, _v, _e in got)  # null in the bytes
    expected = {(m, v) for m, _k, v in payload_cells()}
    assert {(m, v) for m, _b, v, _e in got} <= expected
