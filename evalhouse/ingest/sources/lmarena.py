"""LMArena (Chatbot Arena) leaderboards: Arena Scores, 95% CIs and votes per arena, from published CSVs.

LMArena's own Space never published its ratings as a table: its ``leaderboard_table_YYYYMMDD.csv``
holds model metadata only, and the ratings live in ``elo_results_YYYYMMDD.pkl`` pickles, which
evalhouse never loads (unpickling runs whatever code the file names; a pickle served here is refused
as a whole payload). The ratings are read instead from the public mirror that publishes the Space's
leaderboard tables as CSV, one per arena (fboulnois/llm-leaderboard-csv, ``csv/lmarena_<arena>.csv``):

``rank, rank_stylectrl, model, arena_score, 95_pct_ci, votes, organization, license,
knowledge_cutoff, url``

* ``arena_score``: the Bradley-Terry rating on the Elo scale, as the mirror writes it (whole points:
  it truncates the Space's rating to an integer); ``95_pct_ci``: ``+up/-down`` around it, whole
  points too, kept as the interval ``[score - down, score + up]``; ``votes``: the battles behind it;
* ``rank``: the row's position in the mirror's table (not LMArena's upper-bound rank);
  ``rank_stylectrl``: LMArena's style-controlled rank (the style-controlled score is not published);
* one arena per file: ``text`` (LMArena Text), ``vision``, ``image`` (text-to-image).

LMArena computes the ratings from its own crowd battles: independent evaluator.
"""

from __future__ import annotations

import csv
import io
import re
from collections.abc import Iterator, Mapping

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    ParseError,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

MIRROR = "https://raw.githubusercontent.com/fboulnois/llm-leaderboard-csv/main/csv/"
#: arena -> the benchmark it scores (registry names)
ARENAS: Mapping[str, str] = {"text": "LMArena Text", "vision": "LMArena Vision", "image": "LMArena Text-to-Image"}
COLUMNS = ("model", "arena_score", "95_pct_ci", "votes", "organization")
_CI = re.compile(r"^\s*\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)\s*$")
_PICKLE_MAGIC = (b"\x80\x02", b"\x80\x03", b"\x80\x04", b"\x80\x05")
_COMMIT = "44db9588e2b0d12fff17d6e607066746f0fa84d5"

SOURCE = SourceSpec(
    key="lmarena",
    name="LMArena leaderboards",
    kind="leaderboard",
    tier=1,
    organisation="LMArena",
    homepage="https://lmarena.ai/leaderboard",
    default_urls=tuple(f"{MIRROR}lmarena_{arena}.csv" for arena in ARENAS),
    cadence="weekly",
    parser_version="lmarena/2",
    collection="lmarena",
    description=(
        "LMArena's Arena Scores (Bradley-Terry ratings on the Elo scale) from crowd battles, with 95% CIs "
        "and vote counts, for the text, vision and text-to-image arenas (the Space's published tables)."
    ),
    licence="LMArena leaderboard data (CC BY 4.0 per the Space); CSV mirror MPL-2.0",
    verified_on=Recording(
        repository="fboulnois/llm-leaderboard-csv (csv/lmarena_text.csv, lmarena_vision.csv, lmarena_image.csv)",
        commit=_COMMIT,
        recorded="2025-08-06",
        licence="MPL-2.0 (repository); the tables are LMArena's published leaderboard",
        files=tuple(f"fixtures:lmarena/lmarena_{arena}.csv" for arena in ARENAS),
        replay=tuple((f"{MIRROR}lmarena_{arena}.csv", f"fixtures:lmarena/lmarena_{arena}.csv") for arena in ARENAS),
    ),
)
BOARD = Board(SOURCE, "independent_evaluator", "lmarena")


def plan(state: SourceState) -> list[FetchRequest]:
    return [
        FetchRequest(url=url, label=f"arena:{arena}", **state.conditional(url))
        for arena in ARENAS
        for url in (f"{MIRROR}lmarena_{arena}.csv",)
    ]


def _arena(meta: FetchMeta) -> str:
    if meta.label and meta.label.startswith("arena:"):
        arena = meta.label.split(":", 1)[1]
    else:
        match = re.search(r"lmarena_([a-z]+)\.csv$", meta.url)
        arena = match[1] if match else ""
    if arena not in ARENAS:
        raise LayoutChanged(f"layout changed: {meta.url} names no known arena (expected one of {list(ARENAS)})")
    return arena


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    if body.startswith(_PICKLE_MAGIC) or meta.url.endswith(".pkl"):
        raise ParseError("refusing to unpickle an LMArena .pkl payload (it could run arbitrary code); read a CSV")
    arena = _arena(meta)
    text = common.decode_text(body, f"the LMArena {arena} CSV")
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(f"the LMArena {arena} CSV is not readable CSV: {exc}") from exc
    header = list(rows[0]) if rows else next(csv.reader(io.StringIO(text)), [])
    missing = [c for c in COLUMNS if c not in header]
    if missing:
        raise LayoutChanged(f"layout changed: the LMArena {arena} CSV lacks columns {missing}; header {header}")
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: the LMArena {arena} CSV has a header and no rows")
    for n, row in enumerate(rows, start=1):
        yield from _row(row, arena, f"lmarena_{arena}.csv row {n}", meta)


def _row(row: Mapping[str, str], arena: str, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.lazy_payload(row)
    try:
        score = common.parse_number(row.get("arena_score") or "", "elo")
        votes = int(common.parse_number((row.get("votes") or "").replace(",", ""), "count"))
    except CellError as exc:
        yield ParseFailure(locator, str(exc), payload())
        return
    ci_text = (row.get("95_pct_ci") or "").strip()
    ci = _CI.match(ci_text)
    if ci_text and ci is None:
        yield ParseFailure(locator, f"95% CI {ci_text!r} is not '+up/-down'", payload())
        return
    uncertainty = {"num_samples": votes}
    if ci:
        uncertainty.update(common.confidence_interval(score - float(ci[2]), score + float(ci[1])))
    result = BOARD.result(
        meta.url,
        dataset_name=ARENAS[arena],
        metric_id="elo",
        metric_name="Arena Score",
        unit="elo",
        bounds=("-Infinity", "Infinity"),
        score=score,
        uncertainty=uncertainty,
        details={
            "rank": (row.get("rank") or "").strip(),
            "rank_stylectrl": (row.get("rank_stylectrl") or "").strip(),
            "ci_text": ci_text,
        },
    )
    name = row["model"].strip()
    licence = (row.get("license") or "").strip()
    facts = {
        "licence": licence or None,
        "knowledge_cutoff": (row.get("knowledge_cutoff") or "").strip() or None,
        "url": (row.get("url") or "").strip() or None,
    }
    folded = licence.casefold()
    availability = "closed_weights" if folded.startswith("proprietary") else "open_weights" if folded else "unknown"
    yield BOARD.record(
        meta,
        Model(
            id=name,
            name=name,
            developer=(row.get("organization") or "").strip() or None,
            details=facts,
            availability=availability,
        ),
        [result],
        (locator, payload),
    )
