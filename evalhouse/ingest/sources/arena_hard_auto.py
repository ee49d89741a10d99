"""Arena-Hard-Auto v0.1 leaderboard: the CSV the arena-hard-auto repository publishes.

``leaderboard/arena_hard_leaderboard_20240731.csv``: ``model``, ``score`` (percent of the 500
Arena-Hard v0.1 prompts on which the GPT-4 Turbo judge prefers the model's answer to GPT-4-0314's,
ties counting half), ``rating_q025`` / ``rating_q975`` (the bootstrap 95% interval, same unit),
``CI`` (the same interval as text), ``avg_tokens`` (mean answer length) and ``date``.

One cell per model: the win rate against the baseline with its interval; the answer length is
kept as the cell's detail. The LMArena team runs every model: benchmark creator. Later versions
(v2.0, other judges, style control) are other benchmarks and other files, not this one.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._payloads import csv_table
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

FILE = "arena_hard_leaderboard_20240731.csv"
URL = f"https://raw.githubusercontent.com/lmarena/arena-hard-auto/main/leaderboard/{FILE}"
DATASET = "Arena-Hard-Auto v0.1"
COLUMNS = ("model", "score", "rating_q025", "rating_q975")
SETUP = {"grader_model": "gpt-4-1106-preview", "baseline_model": "gpt-4-0314"}

SOURCE = SourceSpec(
    key="arena-hard-auto",
    name="Arena-Hard-Auto leaderboard",
    kind="leaderboard",
    tier=2,
    organisation="LMArena (LMSYS)",
    homepage="https://github.com/lmarena/arena-hard-auto",
    default_urls=(URL,),
    cadence="monthly",
    parser_version="arena-hard-auto/1",
    collection="arena-hard-auto",
    description=(
        "Arena-Hard-Auto v0.1: win rate against GPT-4-0314 on 500 hard Chatbot Arena prompts, judged "
        "by GPT-4 Turbo, with its bootstrap 95% interval, per model."
    ),
    licence="Apache-2.0 (lmarena/arena-hard-auto)",
    verified_on=Recording(
        repository="lmarena/arena-hard-auto (the published leaderboard CSV)",
        commit="196f6b826783b3da7310e361a805fa36f0be83f3",
        recorded="2024-07-31",
        licence="Apache-2.0",
        files=(f"fixtures:arena-hard-auto/{FILE}",),
        replay=((URL, f"fixtures:arena-hard-auto/{FILE}"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "arena-hard-auto")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboard", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, rows = csv_table(body, "the Arena-Hard-Auto leaderboard CSV")
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise LayoutChanged(f"layout changed: the Arena-Hard-Auto leaderboard CSV has no column(s) {missing}")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the Arena-Hard-Auto leaderboard CSV has no rows")
    for i, row in enumerate(rows, start=2):
        yield from _row(row, f"line {i} {row.get('model') or '?'}", meta)


def _row(row: Mapping[str, Any], locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.lazy_payload(row)
    name = (row.get("model") or "").strip()
    if not name:
        yield ParseFailure(locator, "a row needs a 'model'", payload())
        return
    results = []
    try:
        score = common.parse_number(row["score"], "percent")
        lower = common.parse_number(row["rating_q025"], "percent")
        upper = common.parse_number(row["rating_q975"], "percent")
    except CellError as exc:
        yield ParseFailure(f"{locator}.score", str(exc), payload())
    else:
        details = {SOURCE_RECORD_ID: name}
        if (row.get("avg_tokens") or "").strip():
            details["avg_tokens"] = row["avg_tokens"].strip()
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=DATASET,
                result_id=f"{name}.score",
                metric_id="win_rate",
                metric_name="score",
                unit="percent",
                bounds=(0.0, 100.0),
                score=score,
                uncertainty=common.confidence_interval(lower, upper),
                details=details,
                setup=SETUP,
            )
        )
    date = (row.get("date") or "").strip()
    yield BOARD.record(
        meta,
        Model(id=name, name=name),
        results,
        (locator, payload),
        evaluation_timestamp=date or None,
    )
