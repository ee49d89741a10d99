"""LMArena on its real published tables (the three arenas' CSVs), through the real refresh over
loopback; cells are counted here with the csv module, never by the parser."""

from __future__ import annotations

import csv
import io
from datetime import UTC, datetime
from pathlib import Path

import pytest
from recorded import accounted, mirror_of, refresh_from

from evalhouse.ingest.source import FetchMeta, LayoutChanged, ParseError
from evalhouse.ingest.sources import lmarena
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse.db import Warehouse

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lmarena"
NOW = datetime(2025, 8, 6, tzinfo=UTC)


def meta(arena: str) -> FetchMeta:
    return FetchMeta("lmarena", f"{lmarena.MIRROR}lmarena_{arena}.csv", "0" * 64, NOW, label=f"arena:{arena}")


def test_spot_values_match_the_bytes() -> None:
    """Five rows read from the CSV text itself: score, CI bounds and votes as written."""
    text = (FIXTURES / "lmarena_text.csv").read_text(encoding="utf-8")
    parsed = {
        r.record["model_info"]["name"]: r.record["evaluation_results"][0]
        for r in lmarena.parse(text.encode(), meta=meta("text"))
    }
    for line in text.splitlines()[1:6]:
        cells = next(csv.reader([line]))
        result = parsed[cells[2]]
        up, down = (float(x) for x in cells[4].lstrip("+").split("/-"))
        score = float(cells[3])
        interval = result["score_details"]["uncertainty"]["confidence_interval"]
        assert result["score_details"]["score"] == score
        assert (interval["lower"], interval["upper"]) == (score - down, score + up)
        assert result["score_details"]["uncertainty"]["num_samples"] == int(cells[5])
        assert result["score_details"]["details"]["rank_stylectrl"] == cells[1]
    assert parsed["Gemini-2.5-Pro"]["source_data"]["dataset_name"] == "LMArena Text"


def test_each_arena_is_its_own_benchmark_and_a_pickle_is_refused() -> None:
    image = [r for r in lmarena.parse((FIXTURES / "lmarena_image.csv").read_bytes(), meta=meta("image"))]
    assert all(isinstance(r, ParsedRecord) for r in image) and len(image) == 19
    assert {r.record["evaluation_results"][0]["source_data"]["dataset_name"] for r in image} == {
        "LMArena Text-to-Image"
    }
    with pytest.raises(ParseError, match="unpickle"):
        list(lmarena.parse(b"\x80\x04\x95 pickled", meta=meta("text")))
    with pytest.raises(LayoutChanged, match="lacks columns"):
        list(lmarena.parse(b"Model,Arena Score\nx,1\n", meta=meta("text")))


def test_refresh_on_the_recorded_tables_loads_every_rating(tmp_path: Path) -> None:
    payloads = mirror_of("lmarena", tmp_path / "m", None)  # all three tables are in tests/fixtures
    night = refresh_from(tmp_path / "m", ["lmarena"], tmp_path)
    result = night.results["lmarena"]
    assert result.status == "completed", result.error
    expected = sum(
        1
        for body in payloads.values()
        for row in csv.DictReader(io.StringIO(body.decode(), newline=""))
        if row["arena_score"].strip()
    )
    with Warehouse.open(night.db) as wh:
        sql = "SELECT benchmark_id, count(*) FROM score WHERE source_key = 'lmarena' GROUP BY 1"
        per_arena = dict(wh.con.execute(sql).fetchall())
        quarantined = wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = 'lmarena'")
    assert expected == 266 + 86 + 19
    assert accounted(result) == expected and sum(per_arena.values()) >= 0.99 * expected and quarantined == 0
    assert per_arena == {"lmarena_text": 266, "lmarena_vision": 86, "lmarena_text_to_image": 19}
