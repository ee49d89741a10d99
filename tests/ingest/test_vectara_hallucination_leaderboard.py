"""The Vectara hallucination leaderboard on its recorded real README (vectara/hallucination-leaderboard
@ 2e09859), replayed over loopback.

Cells are counted from the README itself (a line scan, not the parser): every non-empty cell of
the four measurement columns on the table lines between the leaderboard markers.
"""

from __future__ import annotations

import hashlib
import json
from datetime import UTC, datetime

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.source import FetchMeta, LayoutChanged
from evalhouse.ingest.sources import vectara_hallucination_leaderboard as vectara
from evalhouse.schema.records import ParsedRecord, ParseFailure

README = DEFAULT_FIXTURES / "vectara-hallucination-leaderboard" / "README.md"


def table() -> list[list[str]]:
    text = README.read_text(encoding="utf-8")
    block = text[text.index("<!-- LEADERBOARD_START -->") : text.index("<!-- LEADERBOARD_END -->")]
    lines = [line for line in block.splitlines() if line.startswith("|")]
    return [[c.strip() for c in line.strip("|").split("|")] for line in lines]


def payload_cells() -> list[tuple[str, str, str]]:
    header, _separator, *rows = table()
    return [(row[0], column, value) for row in rows for column, value in zip(header[1:], row[1:], strict=True) if value]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(vectara.SOURCE, tmp_path_factory.mktemp("vectara")) as done:
        yield done


def test_every_cell_of_the_recorded_table_is_accounted_for(night) -> None:
    result, _wh = night
    expected = payload_cells()
    assert len(expected) == 96 * 4
    assert result.status == "completed", result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    assert r.records_loaded + r.records_duplicate == 96


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {
        (s["model"], s["result_id"].removeprefix(s["model"] + "."), s["raw_value"])
        for s in scores(wh, vectara.SOURCE.key)
    }
    # read off README.md lines 29, 46, 56 and 124
    for spot in [
        ("antgroup/finix_s1_32b", "Hallucination Rate", 1.8),
        ("antgroup/finix_s1_32b", "Average Summary Length (Words)", 172.4),
        ("openai/gpt-4.1-2025-04-14", "Factual Consistency Rate", 94.4),
        ("openai/gpt-5.4-2026-03-05", "Answer Rate", 99.9),
        ("microsoft/Phi-4-mini-instruct", "Average Summary Length (Words)", 420.2),
        ("mistralai/ministral-3-3b-2512", "Answer Rate", 74.3),
    ]:
        assert spot in got, spot
    expected = {(m, c, float(v.removesuffix("%").strip())) for m, c, v in payload_cells()}
    assert got == expected


def test_cells_carry_the_judge_and_the_update_date(night) -> None:
    _result, wh = night
    rows = scores(wh, vectara.SOURCE.key)
    assert {s["benchmark"] for s in rows} == {"vectara_hallucination"}
    assert {s["evaluated_by"] for s in rows} == {"benchmark_creator"}
    assert all(json.loads(s["setup"])["grader_model"] == "HHEM-2.3" for s in rows)
    lower = wh.con.execute(
        "SELECT DISTINCT s.lower_is_better FROM score s WHERE s.source_key = ? AND s.metric_id = 'hallucination_rate'",
        [vectara.SOURCE.key],
    ).fetchall()
    assert lower == [(True,)]
    stamps = wh.con.execute(
        "SELECT DISTINCT CAST(e.evaluation_timestamp AS VARCHAR) FROM evaluation e WHERE e.source_key = ?",
        [vectara.SOURCE.key],
    ).fetchall()
    assert [s[0][:10] for s in stamps] == ["2026-03-10"]


def _meta() -> FetchMeta:
    return FetchMeta(
        source_key=vectara.SOURCE.key, url=vectara.URL, sha256="0" * 64, retrieved_at=datetime(2026, 1, 1, tzinfo=UTC)
    )


def test_a_renamed_column_or_a_missing_judge_is_a_layout_change() -> None:
    body = README.read_bytes()
    with pytest.raises(LayoutChanged, match="Answer Rate"):
        list(vectara.parse(body.replace(b"|Answer Rate|", b"|Response Rate|", 1), meta=_meta()))
    with pytest.raises(LayoutChanged, match="HHEM version"):
        list(
            vectara.parse(
                body.replace(b"This leaderboard uses HHEM-2.3", b"This leaderboard uses a model"), meta=_meta()
            )
        )


def test_a_bad_cell_is_quarantined_and_the_rest_of_its_row_loads() -> None:
    body = README.read_bytes().replace(b"|antgroup/finix_s1_32b|1.8 %|", b"|antgroup/finix_s1_32b|n/a|", 1)
    items = list(vectara.parse(body, meta=_meta()))
    failures = [i for i in items if isinstance(i, ParseFailure)]
    assert [f.locator for f in failures] == ["table row 1 antgroup/finix_s1_32b.Hallucination Rate"]
    first = next(i for i in items if isinstance(i, ParsedRecord))
    assert len(first.record["evaluation_results"]) == 3
    assert sum(isinstance(i, ParsedRecord) for i in items) == 96


def test_the_fixture_is_the_recorded_blob() -> None:
    body = README.read_bytes()
    assert hashlib.sha1(b"blob %d\0" % len(body) + body).hexdigest() == "5bb49fb400edce2938de14b938807f019baa7175"
