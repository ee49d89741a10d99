"""LLM Stats: an aggregator of model benchmark claims, through its keyed API.

``GET /v1/models``, ``/leaderboard/benchmarks`` and ``/v1/scores`` with ``Authorization:
Bearer <key>`` and ``x-api-key: <key>`` (env ``EVALHOUSE_LLM_STATS_API_KEY``); each collection
may be a bare list or a list under ``data``/``items``/``results``/its own name
(source-formats.md §C.2). Scores carry the model, the benchmark, the value with the
benchmark's ``max_score``, and whether the number is the developer's own claim
(``self_reported``) with the URL it came from. LLM Stats runs nothing itself: a self-reported
score is the model developer's claim (``model_developer``), any other one is a third party's
(``independent_evaluator``), and the original URL is kept, so a vendor's claim is never
averaged with an independent run. One record per (model, claim kind).
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

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


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        doc = json.loads(common.decode_text(body, "the llm-stats payload"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the llm-stats {meta.label} payload is not JSON: {exc}") from exc
    name = meta.label or "scores"
    rows = _collection(doc, name)
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: the llm-stats {name} list is empty")
    if name != "scores":
        return
    groups: dict[tuple[str, str], list[tuple[int, Mapping[str, Any]]]] = {}
    for i, row in enumerate(rows):
        if not isinstance(row, dict) or not first(row, "model_id", "modelId", "model"):
            yield ParseFailure(f"scores[{i}]", "a score row needs a model id", common.row_payload({"row": row}))
            continue
        own = str(first(row, "self_reported", "selfReported")).casefold() in ("true", "1", "yes")
        groups.setdefault(
            (str(first(row, "model_id", "modelId", "model")), "model_developer" if own else "independent_evaluator"), []
        ).append((i, row))
    for (model_id, relationship), members in groups.items():
        yield from _record(model_id, relationship, members, meta)


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
