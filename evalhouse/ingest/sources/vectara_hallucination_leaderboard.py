"""Vectara hallucination leaderboard (HHEM): the table the leaderboard's repository publishes.

``README.md`` of vectara/hallucination-leaderboard carries the board between the markers
``<!-- LEADERBOARD_START -->`` and ``<!-- LEADERBOARD_END -->``: a line "Last updated on
<Month D, YYYY>" and a Markdown table ``|Model|Hallucination Rate|Factual Consistency Rate|Answer
Rate|Average Summary Length (Words)|``, one row per model (``openai/gpt-4.1-2025-04-14``), rates
written as percents (``5.6 %``), the summary length in words. The README's "Model" section names
the judge that scores the board ("This leaderboard uses HHEM-2.3"); it is part of every cell's
setup (``grader_model``), so numbers of another HHEM version never meet these.

One record per row, four cells: hallucination rate (lower is better), factual consistency rate,
answer rate, and average summary length. The update date is the evaluation time. Vectara runs its
HHEM judge over every model: benchmark creator.

A column this parser does not know, a missing column, a missing marker or a README that no longer
names its HHEM version is a layout change; a row whose cell is not a number is quarantined and its
neighbours load.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from datetime import datetime

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model, org_of
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = "https://raw.githubusercontent.com/vectara/hallucination-leaderboard/main/README.md"
BENCHMARK = "Vectara Hallucination Leaderboard"
START, END = "<!-- LEADERBOARD_START -->", "<!-- LEADERBOARD_END -->"
MODEL = "Model"
#: column -> (metric id, unit, bounds, lower is better)
COLUMNS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    "Hallucination Rate": ("hallucination_rate", "percent", (0.0, 100.0), True),
    "Factual Consistency Rate": ("score.factual_consistency", "percent", (0.0, 100.0), False),
    "Answer Rate": ("score.answer_rate", "percent", (0.0, 100.0), False),
    "Average Summary Length (Words)": ("count.summary_words", "count", (0.0, "Infinity"), False),
}
_UPDATED = re.compile(r"Last updated on ([A-Z][a-z]+ \d{1,2}, \d{4})")
_JUDGE = re.compile(r"This leaderboard uses (HHEM-\d+(?:\.\d+)*)")
_SEPARATOR = re.compile(r"^\|(\s*:?-+:?\s*\|)+$")
_LINK = re.compile(r"^\[([^\]]+)\]\([^)]*\)$")

SOURCE = SourceSpec(
    key="vectara-hallucination-leaderboard",
    name="Vectara hallucination leaderboard",
    kind="leaderboard",
    tier=1,
    organisation="Vectara",
    homepage="https://github.com/vectara/hallucination-leaderboard",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="vectara-hallucination-leaderboard/2",
    collection="vectara-hallucination-leaderboard",
    description=(
        "Vectara's HHEM-judged summarisation runs as its leaderboard publishes them: hallucination, "
        "factual consistency and answer rates and average summary length, per model."
    ),
    licence="Apache-2.0 (vectara/hallucination-leaderboard)",
    verified_on=Recording(
        repository="vectara/hallucination-leaderboard (README.md, the published leaderboard table)",
        commit="2e0985929addf7fd52451854fd899161edea0aa4",
        recorded="2026-03-10",
        licence="Apache-2.0",
        files=("fixtures:vectara-hallucination-leaderboard/README.md",),
        replay=((URL, "fixtures:vectara-hallucination-leaderboard/README.md"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "hhem")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboard", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    text = common.decode_text(body, "the Vectara leaderboard README")
    if START not in text or END not in text.split(START, 1)[1]:
        raise LayoutChanged(f"layout changed: the Vectara README has no {START} … {END} block")
    block = text.split(START, 1)[1].split(END, 1)[0]
    judge = _JUDGE.search(text.split(END, 1)[1])
    if judge is None:
        raise LayoutChanged("layout changed: the Vectara README no longer says which HHEM version scores the board")
    updated = _UPDATED.search(block)
    when = datetime.strptime(updated.group(1), "%B %d, %Y").date().isoformat() if updated else None
    lines = [line.strip() for line in block.splitlines() if line.strip().startswith("|")]
    if len(lines) < 2 or not _SEPARATOR.match(lines[1]):
        raise LayoutChanged("layout changed: the Vectara README's leaderboard block holds no Markdown table")
    header = _cells(lines[0])
    missing = [c for c in (MODEL, *COLUMNS) if c not in header]
    unknown = [c for c in header if c != MODEL and c not in COLUMNS]
    if missing or unknown:
        raise LayoutChanged(
            f"layout changed: the Vectara table's columns are {header} (missing {missing}, unknown {unknown})"
        )
    if len(lines) == 2:
        raise EmptyPlaceholder("empty placeholder: the Vectara leaderboard table has a header and no rows")
    setup = {"grader_model": judge.group(1)}
    for number, line in enumerate(lines[2:], start=1):
        cells = _cells(line)
        row = dict(zip(header, cells, strict=False))
        locator = f"table row {number} {row.get(MODEL) or '?'}"
        if len(cells) != len(header):
            yield ParseFailure(
                locator, f"a row has {len(cells)} cells, the header {len(header)}", common.row_payload(row)
            )
            continue
        yield from _row(row, locator, meta, setup, when)


def _cells(line: str) -> list[str]:
    return [cell.strip() for cell in line.strip().strip("|").split("|")]


def _row(
    row: Mapping[str, str], locator: str, meta: FetchMeta, setup: Mapping[str, str], when: str | None
) -> Iterator[ParseItem]:
    payload = common.row_payload(row)
    link = _LINK.match(row[MODEL])
    name = link.group(1).strip() if link else row[MODEL]
    if not name:
        yield ParseFailure(locator, "a row needs a model", payload)
        return
    results = []
    for column, (metric, unit, bounds, lower_is_better) in COLUMNS.items():
        text = row[column]
        try:
            score = common.parse_number(text.removesuffix("%").strip() if unit == "percent" else text, unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.{column}", str(exc), payload)
            continue
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=BENCHMARK,
                result_id=f"{name}.{column}",
                metric_id=metric,
                metric_name=column,
                unit=unit,
                bounds=bounds,
                lower_is_better=lower_is_better,
                score=score,
                details={SOURCE_RECORD_ID: name},
                setup=setup,
            )
        )
    yield BOARD.record(
        meta, Model(id=name, name=name, developer=org_of(name)), results, (locator, payload), evaluation_timestamp=when
    )
