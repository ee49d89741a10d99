"""MT-Bench (and MMLU) as the LMSYS leaderboard table lists them, on the recorded real
``leaderboard_table_20250506.csv`` (utterstep/chatbot-arena-leaderbord-vis @ 930b107), replayed over loopback.

Cells are counted from the CSV itself (the csv module, not the parser): every ``MT-bench (score)``
and ``MMLU`` cell that is not ``-``. One row is listed twice (``yi-34b-chat``): its cell is one
record, loaded once and counted as a duplicate.
"""

from __future__ import annotations

import csv
import hashlib
import json
from datetime import UTC, datetime

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.source import FetchMeta, LayoutChanged
from evalhouse.ingest.sources import mt_bench
from evalhouse.schema.records import ParseFailure

CSV = DEFAULT_FIXTURES / "mt-bench" / mt_bench.FILE
MEASURED = ("MT-bench (score)", "MMLU")


def rows() -> list[dict[str, str]]:
    with CSV.open(encoding="utf-8", newline="") as f:
        return list(csv.DictReader(f))


def payload_cells() -> list[tuple[str, str, str]]:
    return [(r["key"], c, r[c]) for r in rows() for c in MEASURED if r[c].strip() not in ("", "-")]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(mt_bench.SOURCE, tmp_path_factory.mktemp("mt-bench")) as done:
        yield done


def test_every_cell_of_the_recorded_table_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(rows()) == 292 and len(expected) == 67 + 103
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.scores_in_duplicates == 1  # the second yi-34b-chat row


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["model"], s["result_id"].removeprefix(s["model"] + "."), s["raw_value"]) for s in scores(wh, "mt-bench")}
    # read off the CSV: lines 2, 3, 16 and the gpt-4 rows
    for spot in [
        ("wizardlm-30b", "MT-bench (score)", 7.01),
        ("wizardlm-30b", "MMLU", 0.587),
        ("vicuna-13b-16k", "MT-bench (score)", 6.92),
        ("gpt-4-1106-preview", "MT-bench (score)", 9.32),
        ("gpt-4-0314", "MMLU", 0.864),
        ("claude-1", "MT-bench (score)", 7.9),
    ]:
        assert spot in got, spot
    assert got == {(k, c, float(v)) for k, c, v in payload_cells()}


def test_who_measured_and_the_setup_of_each_kind_of_cell(night) -> None:
    _result, wh = night
    by_benchmark = {}
    for s in scores(wh, "mt-bench"):
        by_benchmark.setdefault(s["benchmark"], set()).add((s["metric"], s["evaluated_by"], s["setup"]))
    assert by_benchmark.keys() == {"mt_bench", "mmlu"}
    ((metric, by, setup),) = by_benchmark["mt_bench"]
    assert (metric, by, json.loads(setup)["grader_model"]) == ("rating_10", "benchmark_creator", "gpt-4")
    ((metric, by, setup),) = by_benchmark["mmlu"]
    assert (metric, by, json.loads(setup)["shots"]) == ("accuracy", "unknown", "5")


def _meta() -> FetchMeta:
    return FetchMeta(
        source_key="mt-bench", url=mt_bench.URL, sha256="0" * 64, retrieved_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


def test_a_renamed_column_is_a_layout_change_and_a_bad_cell_is_quarantined() -> None:
    body = CSV.read_bytes()
    with pytest.raises(LayoutChanged, match="MT-bench"):
        list(mt_bench.parse(body.replace(b"MT-bench (score)", b"MT-Bench", 1), meta=_meta()))
    bad = body.replace(b"wizardlm-30b,WizardLM-30B,7.01,", b"wizardlm-30b,WizardLM-30B,n/a,", 1)
    failures = [i for i in mt_bench.parse(bad, meta=_meta()) if isinstance(i, ParseFailure)]
    assert [f.locator for f in failures] == ["line 2 wizardlm-30b (MT-bench (score))"]


def test_the_fixture_is_the_recorded_blob() -> None:
    body = CSV.read_bytes()
    assert hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest() == "e1d56c523faf3b187ae371eadae06b81e52081c6"
