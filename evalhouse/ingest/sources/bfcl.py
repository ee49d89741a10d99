"""Berkeley Function-Calling Leaderboard (BFCL): ``data_overall.csv`` from the leaderboard's site.

The site (gorilla.cs.berkeley.edu, the ``gh-pages`` branch of ShishirPatil/gorilla) renders its
table from ``data_overall.csv``: one row per model and calling mode, ``Rank``, ``Overall Acc``,
``Model`` (the mode in brackets: ``(FC)``, ``(Prompt)``, ``(FC thinking)``…), ``Model Link``,
``Total Cost ($)``, three latency columns (seconds), the category accuracies of BFCL v4
(Non-Live and Live AST, Multi Turn, Web Search, Memory, each with its sub-columns, Relevance and
Irrelevance Detection), two format-sensitivity columns (percentage points; ``N/A`` where the
model was not run with format variants), ``Organization`` and ``License``. Accuracies are
written with a ``%`` sign.

Every accuracy column is one cell of benchmark BFCL v4: the overall accuracy unnarrowed, each
category as its subset (``BFCL v4 - Live Simple AST``). The calling mode in brackets is part
of the cell's setup (``prompting``). ``Rank`` is an ordering, not a measurement, and is not
loaded. The Gorilla team runs every model itself: benchmark creator.
"""

from __future__ import annotations

import re
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

URL = "https://gorilla.cs.berkeley.edu/data_overall.csv"
DATASET = "BFCL v4"
ABSENT = "N/A"
#: Columns that are not measurements (besides Model, which names the row).
FACTS = ("Rank", "Model Link", "Organization", "License")
#: column -> (metric id, unit, bounds, lower is better); accuracy columns are matched by their
#: suffix or listed in CATEGORY_COLUMNS.
OTHER_CELLS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    "Total Cost ($)": ("cost", "usd", (0.0, "Infinity"), True),
    "Latency Mean (s)": ("latency.mean", "seconds", (0.0, "Infinity"), True),
    "Latency Standard Deviation (s)": ("latency.std", "seconds", (0.0, "Infinity"), True),
    "Latency 95th Percentile (s)": ("latency.p95", "seconds", (0.0, "Infinity"), True),
    "Format Sensitivity Max Delta": ("format_sensitivity.max_delta", "points", (0.0, 100.0), True),
    "Format Sensitivity Standard Deviation": ("format_sensitivity.std", "points", (0.0, 100.0), True),
}
#: Columns the layout must have: v4's own categories (a v3 table lacks Web Search and Memory).
REQUIRED = ("Model", "Overall Acc", "Web Search Acc", "Memory Acc", "Total Cost ($)")
_MODE = re.compile(r"\s*\(([^()]+)\)\s*$")

SOURCE = SourceSpec(
    key="bfcl",
    name="Berkeley Function-Calling Leaderboard",
    kind="leaderboard",
    tier=1,
    organisation="UC Berkeley Gorilla team",
    homepage="https://gorilla.cs.berkeley.edu/leaderboard.html",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="bfcl/1",
    collection="bfcl",
    description=(
        "The Gorilla team's own BFCL v4 runs: overall and per-category function-calling accuracy "
        "(AST, live, multi-turn, web search, memory, relevance), cost, latency and format sensitivity, "
        "per model and calling mode (FC / Prompt)."
    ),
    licence="Apache-2.0 (ShishirPatil/gorilla)",
    verified_on=Recording(
        repository="ShishirPatil/gorilla (branch gh-pages, the leaderboard site)",
        commit="8c24bd7cd50499b601783bd6e6b0a921017da10a",
        recorded="2026-04-12",
        licence="Apache-2.0",
        files=("fixtures:bfcl/data_overall.csv",),
        replay=((URL, "fixtures:bfcl/data_overall.csv"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "bfcl")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="overall", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, rows = csv_table(body, "the BFCL CSV")
    missing = [c for c in REQUIRED if c not in header]
    if missing:
        raise LayoutChanged(f"layout changed: the BFCL CSV has no column(s) {missing} (header {header[:8]}…)")
    unknown = [c for c in header if c not in FACTS and c != "Model" and _cell_kind(c) is None]
    if unknown:
        raise LayoutChanged(f"layout changed: the BFCL CSV has column(s) this parser does not know: {unknown}")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the BFCL CSV has a header and no rows")
    for i, row in enumerate(rows, start=2):
        yield from _row(row, f"line {i} {row.get('Model') or '?'}", header, meta)


def _cell_kind(column: str) -> tuple[str, str, tuple[float | str, float | str], bool, str | None] | None:
    """``(metric, unit, bounds, lower is better, subset)`` of a measurement column, else None."""
    if column in OTHER_CELLS:
        return (*OTHER_CELLS[column], None)
    if column == "Overall Acc":
        return ("accuracy", "percent", (0.0, 100.0), False, None)
    if (
        column.endswith((" Acc", " AST"))
        or column.startswith("Multi Turn ")
        or column.startswith(("Web Search ", "Memory ", "Relevance ", "Irrelevance "))
    ):
        return ("accuracy", "percent", (0.0, 100.0), False, column.removesuffix(" Acc"))
    return None


def _number(text: str, unit: str) -> float:
    text = text.strip()
    if unit == "percent" and text.endswith("%"):
        text = text[:-1]
    return common.parse_number(text, unit)


def _row(row: Mapping[str, Any], locator: str, header: list[str], meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.lazy_payload(row)
    name = (row.get("Model") or "").strip()
    if not name:
        yield ParseFailure(locator, "a row needs a 'Model'", payload())
        return
    mode = _MODE.search(name)
    setup = {"prompting": mode.group(1)} if mode else {}
    results = []
    for column in header:
        kind = _cell_kind(column)
        text = (row.get(column) or "").strip()
        if kind is None or text in ("", ABSENT):
            continue
        metric, unit, bounds, lower, subset = kind
        try:
            score = _number(text, unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.{column}", str(exc), payload())
            continue
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=DATASET,
                evaluation_name=f"{DATASET} - {subset}" if subset else DATASET,
                result_id=f"{DATASET}.{column}",
                metric_id=metric,
                metric_name=column,
                unit=unit,
                bounds=bounds,
                lower_is_better=lower,
                score=score,
                details={SOURCE_RECORD_ID: name},
                setup=setup,
            )
        )
    organisation = (row.get("Organization") or "").strip() or None
    licence = (row.get("License") or "").strip()
    facts = {"model_link": common.fact_text(row.get("Model Link")), "license": licence or None}
    yield BOARD.record(
        meta,
        Model(
            id=name,
            name=name,
            developer=organisation,
            details=facts,
            availability="closed_weights" if licence.casefold() == "proprietary" else "open_weights",
        ),
        results,
        (locator, payload),
    )
