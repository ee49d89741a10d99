"""LLM Stats: an aggregator of model benchmark claims, through its keyed API.

``GET /v1/models``, ``/leaderboard/benchmarks`` and ``/v1/scores`` with ``Authorization:
Bearer <key>`` and ``x-api-key: <key>`` (env ``EVALHOUSE_LLM_STATS_API_KEY``); each collection
may be a bare list or a list under ``data``/``items``/``results``/its own name
(source-formats.md §C.2). ``/v1/scores`` is paginated by cursor: a page names the next one in
``next_cursor`` (top level or under ``pagination``), fetched as ``/v1/scores?cursor=<it>`` until it
is null; a page left unfetched fails the run (``DRIFT["pagination"]``).

Score rows carry the model, the benchmark, the value with the benchmark's ``max_score``, and
``is_self_reported``: whether the number is the developer's own claim, with the URL it came from.
LLM Stats runs nothing itself: a self-reported score is the model developer's claim
(``model_developer``), any other one is a third party's (``independent_evaluator``), and the
original URL is kept, so a vendor's claim is never averaged with an independent run. One record
per (model, claim kind). The flag is never defaulted: a page whose rows all lack it is a layout
change (the run fails), a row without it (or with a non-boolean) is quarantined.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import parse_qsl, urlencode, urlsplit

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._pages import first
from evalhouse.schema.records import ParseFailure, ParseItem

BASE = "https://api.llm-stats.com"
KEY_ENV = "EVALHOUSE_LLM_STATS_API_KEY"
ENDPOINTS = {"models": "/v1/models", "benchmarks": "/leaderboard/benchmarks", "scores": "/v1/scores"}
#: The score row's claim flag: read as it is spelled, never defaulted when absent.
SELF_REPORTED = "is_self_reported"
#: Fields every score row of a page carries; a page where every row lacks one changed layout.
SCORE_FIELDS = ("model_id", "benchmark_id", "score", SELF_REPORTED)
#: ``/v1/scores`` is a cursor-paginated listing: every page follow() finds continues it.
DRIFT = {"pagination": True}

SOURCE = SourceSpec(
    key="llm-stats",
    name="LLM Stats",
    kind="api",
    tier=3,
    organisation="LLM Stats",
    homepage="https://llm-stats.com",
    default_urls=tuple(BASE + p for p in ENDPOINTS.values()),
    cadence="daily",
    parser_version="llm-stats/1",
    collection="llm-stats",
    description=(
        "LLM Stats' collection of benchmark scores: developers' self-reported claims and third-party "
        "numbers, with source URLs."
    ),
    required_env=(KEY_ENV,),
    licence="LLM Stats API terms (attribution required)",
)
BOARD = Board(SOURCE, "aggregator", "llm-stats")


def scores_page_url(cursor: str | None = None) -> str:
    """The ``/v1/scores`` page a cursor names (the first page has none)."""
    base = BASE + ENDPOINTS["scores"]
    return f"{base}?{urlencode({'cursor': cursor})}" if cursor else base


def plan(state: SourceState) -> list[FetchRequest]:
    key = state.env.get(KEY_ENV, "")
    return [
        FetchRequest(
            url=BASE + path,
            headers={"Authorization": f"Bearer {key}", "x-api-key": key},
            secret_headers=frozenset({"authorization", "x-api-key"}),
            label=name,
        )
        for name, path in ENDPOINTS.items()
    ]


def _collection(doc: Any, name: str) -> list[Any]:
    if isinstance(doc, list):
        return doc
    if isinstance(doc, dict):
        for key in (name, "data", "items", "results"):
            if isinstance(doc.get(key), list):
                return doc[key]
        if doc and all(isinstance(v, dict) for v in doc.values()):
            return [{"id": k, **v} for k, v in doc.items()]
    raise LayoutChanged(f"layout changed: the llm-stats {name} payload holds no list")


def _document(body: bytes, meta: FetchMeta) -> Any:
    try:
        return json.loads(common.decode_text(body, "the llm-stats payload"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the llm-stats {meta.label} payload is not JSON: {exc}") from exc


def next_cursor(doc: Any, meta: FetchMeta) -> str | None:
    """The cursor of the scores page after this one, or ``None`` on the last page.

    A cursor that is not a string, or that names the page just fetched (a listing that would
    loop), is a layout change: the listing could not be followed to its end."""
    if not isinstance(doc, dict):
        return None
    pagination = doc.get("pagination") if isinstance(doc.get("pagination"), dict) else {}
    cursor = doc["next_cursor"] if "next_cursor" in doc else pagination.get("next_cursor")
    if cursor in (None, ""):
        return None
    if not isinstance(cursor, str):
        raise LayoutChanged(f"layout changed: the llm-stats scores next_cursor is {cursor!r}, not a string")
    if cursor == dict(parse_qsl(urlsplit(meta.url).query)).get("cursor"):
        raise LayoutChanged(f"layout changed: the llm-stats scores page {meta.url} names itself as the next page")
    return cursor


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """The next ``/v1/scores`` page while the fetched one names a ``next_cursor``."""
    if (meta.label or "scores") != "scores":
        return []
    cursor = next_cursor(_document(body, meta), meta)
    return [FetchRequest(url=scores_page_url(cursor), label="scores")] if cursor else []


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = _document(body, meta)
    name = meta.label or "scores"
    rows = _collection(doc, name)
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: the llm-stats {name} list is empty")
    if name != "scores":
        return
    next_cursor(doc, meta)  # a page that cannot be followed is refused before anything loads
    _check_layout(rows)
    groups: dict[tuple[str, str], list[tuple[int, Mapping[str, Any]]]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not first(row, "model_id", "modelId", "model"):
            yield ParseFailure(f"scores[{i}]", "a score row needs a model id", common.row_payload({"row": row}))
            continue
        own = row.get(SELF_REPORTED)
        if not isinstance(own, bool):
            reason = (
                f"score row has no {SELF_REPORTED!r}: whose claim it is is unknown"
                if own is None
                else f"{SELF_REPORTED} is {own!r}, not true or false"
            )
            yield ParseFailure(f"scores[{i}]", reason, common.row_payload(row))
            continue
        groups.setdefault(
            (str(first(row, "model_id", "modelId", "model")), "model_developer" if own else "independent_evaluator"), []
        ).append((i, row))
    for (model_id, relationship), members in groups.items():
        yield from _record(model_id, relationship, members, meta)


def _check_layout(rows: list[Any]) -> None:
    """A field every score row carries, absent from every row of the page: the layout changed
    (renamed or dropped), and reading on would default it silently."""
    objects = [r for r in rows if isinstance(r, dict)]
    missing = [f for f in SCORE_FIELDS if objects and not any(f in r for r in objects)]
    if missing:
        seen = sorted({k for r in objects for k in r})[:20]
        raise LayoutChanged(
            f"layout changed: no llm-stats score row carries {', '.join(map(repr, missing))} "
            f"({len(objects)} rows; their fields: {', '.join(seen)})"
        )


def _unit(score: float, max_score: Any) -> tuple[str, tuple[float, float]] | None:
    top = float(max_score) if isinstance(max_score, int | float) and not isinstance(max_score, bool) else None
    if top == 1 and score <= 1:
        return "proportion", (0.0, 1.0)
    if top == 100 or (top == 1 and 1 < score <= 100) or (top is None and 1 < score <= 100):
        return "percent", (0.0, 100.0)
    if top is None and 0 <= score <= 1:
        return "proportion", (0.0, 1.0)
    return None


def _record(
    model_id: str, relationship: str, members: list[tuple[int, Mapping[str, Any]]], meta: FetchMeta
) -> Iterator[ParseItem]:
    results, urls = [], []
    sample = members[0][1]
    for i, row in members:
        payload = common.row_payload(row)
        try:
            score = common.parse_number(
                str(first(row, "score", "value", "normalized_score")).rstrip("%").replace(",", ""), "score"
            )
        except CellError as exc:
            yield ParseFailure(f"scores[{i}]", str(exc), payload)
            continue
        unit = _unit(score, first(row, "max_score", "maxScore"))
        if unit is None:
            yield ParseFailure(
                f"scores[{i}]", f"score {score} does not fit max_score {first(row, 'max_score')!r}", payload
            )
            continue
        url = str(first(row, "source_url", "self_reported_source", "sourceUrl") or "")
        urls.append(url)
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=str(first(row, "benchmark_name", "benchmark_id", "benchmark")),
                metric_id="score"
                if unit[0] != "percent" or "accuracy" not in str(row.get("metric", ""))
                else "accuracy",
                unit=unit[0],
                bounds=unit[1],
                score=score,
                details={"source_url": url, "benchmark_id": str(first(row, "benchmark_id", "benchmark") or "")},
            )
        )
    developer = common.slugify(str(first(sample, "organization", "provider", "developer") or "")) or None
    name = str(first(sample, "model_name", "name") or model_id)
    yield BOARD.record(
        meta,
        Model(
            id=model_id if "/" in model_id or not developer else f"{developer}/{model_id}",
            name=name,
            developer=developer,
            details={"llm_stats_model_id": model_id},
        ),
        results,
        (f"model={model_id} {relationship}", common.row_payload({"model": model_id, "relationship": relationship})),
        evaluated_by=relationship,
        original_source="model developer (self-reported)" if relationship == "model_developer" else "third party",
        original_source_url=next((u for u in urls if u), None),
    )
