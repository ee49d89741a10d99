"""MT-Bench as the LMSYS Chatbot Arena leaderboard publishes it: the Space's ``leaderboard_table`` CSV.

The LMArena (formerly LMSYS) Hugging Face Space publishes, beside its rating pickles, a table
``leaderboard_table_<YYYYMMDD>.csv``: ``key`` (LMSYS's model key), ``Model`` (display name),
``MT-bench (score)``, ``MMLU``, ``Knowledge cutoff date``, ``License``, ``Organization``, ``Link``;
``-`` marks an empty cell. The Space's own description of these columns (FastChat
``fastchat/serve/monitor/monitor.py``): "The MT-bench scores (single-answer grading on a scale of 10)
are computed by fastchat.llm_judge" with GPT-4 as the judge, and "MMLU (5-shot) … The MMLU scores
are mostly computed by InstructEval".

Two kinds of cell, so two records per row, each with who measured it:

* ``MT-bench (score)`` → MT-Bench, metric ``rating_10`` (0-10), setup ``grader_model=gpt-4``; LMSYS
  built MT-Bench and graded every model: benchmark creator.
* ``MMLU`` → MMLU, ``accuracy`` (a proportion), setup ``shots=5``; "mostly" computed by LMSYS, so who
  measured a given number is not stated: ``unknown``.

A row with neither value is arena metadata only (no MT-Bench or MMLU cell) and yields nothing; a cell
that is neither ``-`` nor a number is quarantined. The table stopped growing when the Space was
retired (2025); the file read is the last one recorded, named by its date.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._payloads import csv_table
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

FILE = "leaderboard_table_20250506.csv"
URL = f"https://huggingface.co/spaces/lmarena-ai/arena-leaderboard/resolve/main/{FILE}"
EMPTY = "-"
COLUMNS = ("key", "Model", "MT-bench (score)", "MMLU", "Knowledge cutoff date", "License", "Organization", "Link")
#: column -> (dataset, metric id, unit, bounds, setup, who measured)
CELLS: Mapping[str, tuple[str, str, str, tuple[float, float], Mapping[str, str], str]] = {
    "MT-bench (score)": (
        "MT-Bench",
        "rating_10",
        "points",
        (0.0, 10.0),
        {"grader_model": "gpt-4"},
        "benchmark_creator",
    ),
    "MMLU": ("MMLU", "accuracy", "proportion", (0.0, 1.0), {"shots": "5"}, "unknown"),
}

SOURCE = SourceSpec(
    key="mt-bench",
    name="MT-Bench (LMSYS leaderboard table)",
    kind="leaderboard",
    tier=2,
    organisation="LMArena (LMSYS)",
    homepage="https://huggingface.co/spaces/lmarena-ai/arena-leaderboard",
    default_urls=(URL,),
    cadence="monthly",
    parser_version="mt-bench/1",
    collection="mt-bench",
    description=(
        "MT-Bench scores (GPT-4 single-answer grading, 0-10) and the MMLU numbers the LMSYS Chatbot Arena "
        "leaderboard lists beside them, per model, from the Space's published leaderboard table."
    ),
    licence="Apache-2.0 (the Space card)",
    verified_on=Recording(
        repository="utterstep/chatbot-arena-leaderbord-vis (a byte-for-byte copy of the Space's leaderboard tables)",
        commit="930b1070b4d6bc3a510e194b4227c178737b6f1f",
        recorded="2025-05-06",
        licence="Apache-2.0",
        files=(f"fixtures:mt-bench/{FILE}",),
        replay=((URL, f"fixtures:mt-bench/{FILE}"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "fastchat.llm_judge")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboard", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, rows = csv_table(body, "the LMSYS leaderboard table")
    missing = [c for c in COLUMNS if c not in header]
    unknown = [c for c in header if c not in COLUMNS]
    if missing or unknown:
        raise LayoutChanged(f"layout changed: the LMSYS leaderboard table's columns are {header} (missing {missing})")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the LMSYS leaderboard table has a header and no rows")
    for i, row in enumerate(rows, start=2):
        for column in CELLS:
            if (row.get(column) or "").strip() not in ("", EMPTY):
                yield _record(row, column, f"line {i} {row.get('key') or '?'} ({column})", meta)


def _record(row: Mapping[str, Any], column: str, locator: str, meta: FetchMeta) -> ParseItem:
    payload = common.row_payload(row)
    key = (row.get("key") or "").strip()
    if not key:
        return ParseFailure(locator, "a row needs a 'key'", payload)
    dataset, metric, unit, bounds, setup, evaluated_by = CELLS[column]
    try:
        score = common.parse_number(row[column], unit)
    except CellError as exc:
        return ParseFailure(locator, str(exc), payload)
    licence = (row.get("License") or "").strip()
    folded = licence.casefold()
    return BOARD.record(
        meta,
        Model(
            id=key,
            name=(row.get("Model") or "").strip() or key,
            developer=(row.get("Organization") or "").strip() or None,
            details={
                "licence": licence or None,
                "knowledge_cutoff": (row.get("Knowledge cutoff date") or "").strip() or None,
                "url": (row.get("Link") or "").strip() or None,
            },
            availability="closed_weights"
            if folded.startswith("proprietary")
            else "open_weights"
            if folded
            else "unknown",
        ),
        [
            BOARD.result(
                meta.url,
                dataset_name=dataset,
                result_id=f"{key}.{column}",
                metric_id=metric,
                metric_name=column,
                unit=unit,
                bounds=bounds,
                score=score,
                details={SOURCE_RECORD_ID: key},
                setup=setup,
            )
        ],
        (locator, payload),
        evaluated_by=evaluated_by,
    )
