"""LMArena (Chatbot Arena) text leaderboard: Elo-scale Arena Scores with 95% CIs from the CSV.

The leaderboard Space publishes a CSV per snapshot (``Rank (UB), Model, Arena Score, 95% CI,
Votes, Organization, License, Knowledge Cutoff``; the CI as ``+5/-4`` around the score). Its
``elo_results_*.pkl`` files hold the same ratings as Python pickles, which evalhouse never
loads: unpickling runs whatever code the file names. A pickle served at the CSV's URL is
refused as a whole payload. LMArena computes the ratings from its own battles: independent.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

URL = "https://huggingface.co/spaces/lmarena-ai/chatbot-arena-leaderboard/resolve/main/leaderboard_table_text.csv"
COLUMNS = ("Model", "Arena Score", "95% CI", "Votes", "Organization")
_CI = re.compile(r"^\s*\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)\s*$")
_PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")

SOURCE = SourceSpec(
    key="lmarena",
    name="LMArena text leaderboard",
    kind="leaderboard",
    tier=1,
    organisation="LMArena",
    homepage="https://lmarena.ai/leaderboard",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="lmarena/1",
    collection="lmarena",
    description="LMArena's Arena Scores (Bradley-Terry ratings on the Elo scale) from crowd battles, with 95% CIs.",
    licence="LMArena leaderboard data (CC BY 4.0 per the Space)",
)
BOARD = Board(SOURCE, "independent_evaluator", "lmarena")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="text", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    if body.startswith(_PICKLE_MAGIC) or meta.url.endswith(".pkl"):
        raise ParseError("refusing to unpickle an LMArena .pkl payload (it could run arbitrary code); use the CSV")
    text = common.decode_text(body, "the LMArena CSV")
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(f"the LMArena CSV is not readable CSV: {exc}") from exc
    header = list(rows[0]) if rows else next(csv.reader(io.StringIO(text)), [])
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise LayoutChanged(f"layout changed: the LMArena CSV lacks columns {missing}; header {header}")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the LMArena CSV has a header and no rows")
    for n, row in enumerate(rows, start=1):
        yield from _row(row, f"row {n}", meta)


def _row(row: Mapping[str, str], locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row)
    try:
        score = common.parse_number(row.get("Arena Score") or "", "elo")
        votes = int(common.parse_number((row.get("Votes") or "").replace(",", ""), "count"))
    except CellError as exc:
        yield ParseFailure(locator, str(exc), payload)
        return
    ci = _CI.match(row.get("95% CI") or "")
    uncertainty = {"num_samples": votes}
    if ci:
        uncertainty.update(common.confidence_interval(score - float(ci[2]), score + float(ci[1])))
    result = BOARD.result(
        meta.url,
        dataset_name="LMArena Text",
        metric_id="elo",
        metric_name="Arena Score",
        unit="elo",
        bounds=("-Infinity", "Infinity"),
        score=score,
        uncertainty=uncertainty,
        details={"rank_ub": row.get("Rank (UB)") or "", "ci_text": row.get("95% CI") or ""},
    )
    name = row["Model"].strip()
    facts = {"licence": row.get("License") or None, "knowledge_cutoff": row.get("Knowledge Cutoff") or None}
    licence = (row.get("License") or "").casefold()
    availability = "closed_weights" if licence.startswith("proprietary") else "open_weights" if licence else "unknown"
    yield BOARD.record(
        meta,
        Model(id=name, name=name, developer=row.get("Organization") or None, details=facts, availability=availability),
        [result],
        (locator, payload),
    )
