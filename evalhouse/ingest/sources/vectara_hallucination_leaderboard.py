"""Vectara hallucination leaderboard (HHEM): the ``vectara/results`` dataset at a pinned commit.

The file list comes from the Hugging Face tree API (``?recursive=true&limit=1000``; a listing
of 1000 entries may be truncated - there is no cursor - so the run fails rather than convert
part of it). Each file ``<developer>/<model>/results_<timestamp>.json`` holds ``results``
(hallucination rate, factual consistency rate, answer rate, average summary length; each
nested one level under its own key), ``category_results`` and ``text_complexity_results``
(source-formats.md §C.14): 40 results per model. Rates are percents; the hallucination rate is
lower-is-better; summary length is in words. The category and complexity breakdowns are
``subset`` setups of one benchmark. Vectara runs its HHEM judge over every model: benchmark
creator.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any
from urllib.parse import quote, unquote

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

COMMIT = "7c104699e98ade53dd719f79ae9f7eb281c8107d"
TREE = f"https://huggingface.co/api/datasets/vectara/results/tree/{COMMIT}"
FILES = f"https://huggingface.co/datasets/vectara/results/resolve/{COMMIT}/"
TREE_LIMIT = 1000
BENCHMARK = "Vectara Hallucination Leaderboard"
#: key -> (metric id, unit, bounds, lower is better)
METRICS: Mapping[str, tuple[str, str, tuple[float | str, float | str], bool]] = {
    "hallucination_rate": ("hallucination_rate", "percent", (0.0, 100.0), True),
    "factual_consistency_rate": ("score.factual_consistency", "percent", (0.0, 100.0), False),
    "answer_rate": ("score.answer_rate", "percent", (0.0, 100.0), False),
    "average_summary_length": ("count.summary_words", "count", (0.0, "Infinity"), False),
}
ACCESS = {"open": "open_weights", "commercial": "closed_weights"}

SOURCE = SourceSpec(
    key="vectara-hallucination-leaderboard",
    name="Vectara hallucination leaderboard",
    kind="api",
    tier=1,
    organisation="Vectara",
    homepage="https://github.com/vectara/hallucination-leaderboard",
    default_urls=(TREE,),
    cadence="weekly",
    parser_version="vectara-hallucination-leaderboard/1",
    collection="vectara-hallucination-leaderboard",
    description=(
        "Vectara's HHEM-judged summarisation runs: hallucination, factual consistency and answer rates, per category."
    ),
    licence="Apache-2.0 (vectara/results dataset)",
)
BOARD = Board(SOURCE, "benchmark_creator", "hhem")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=TREE, params={"recursive": "true", "limit": str(TREE_LIMIT)}, label="tree")]


def _json(body: bytes, what: str) -> Any:
    try:
        return json.loads(common.decode_text(body, what))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{what} is not JSON: {exc}") from exc


def _paths(doc: Any) -> list[str]:
    if not isinstance(doc, list):
        raise LayoutChanged("layout changed: the vectara/results tree is not a JSON list")
    if len(doc) >= TREE_LIMIT:
        raise ParseError(f"the vectara/results tree lists {len(doc)} entries (the limit): it may be truncated")
    return [
        e["path"]
        for e in doc
        if isinstance(e, dict)
        and e.get("type") == "file"
        and str(e.get("path", "")).count("/") == 2
        and str(e["path"]).rsplit("/", 1)[-1].startswith("results_")
    ]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    if meta.label != "tree":
        return []
    return [FetchRequest(url=FILES + quote(p), label="results") for p in _paths(_json(body, "the vectara tree"))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = _json(body, f"the Vectara payload {meta.url}")
    if meta.label == "tree":
        if not _paths(doc):
            raise EmptyPlaceholder("empty placeholder: the vectara/results tree lists no results files")
        return
    path = (
        unquote(meta.url.removeprefix(FILES))
        if meta.url.startswith(FILES)
        else unquote(
            meta.url.rsplit("/", 3)[-3] + "/" + meta.url.rsplit("/", 3)[-2] + "/" + meta.url.rsplit("/", 1)[-1]
        )
    )
    yield from parse_file(path, doc, meta)


def parse_file(path: str, doc: Any, meta: FetchMeta) -> Iterator[ParseItem]:
    """One ``<developer>/<model>/results_<timestamp>.json`` file -> one record."""
    payload = common.row_payload({"path": path})
    parts = path.split("/")
    if len(parts) != 3 or not isinstance(doc, dict) or not isinstance(doc.get("results"), dict):
        yield ParseFailure(path, "expected <developer>/<model>/results_<ts>.json with a 'results' object", payload)
        return
    results: list[dict[str, Any]] = []
    cells = [(None, k, (v or {}).get(k) if isinstance(v, dict) else v) for k, v in doc["results"].items()]
    for group in ("category_results", "text_complexity_results"):
        for subset, values in (doc.get(group) or {}).items():
            cells += [(subset, k, v) for k, v in (values or {}).items()]
    for subset, key, value in cells:
        if key not in METRICS or value is None:
            continue
        metric, unit, bounds, lib = METRICS[key]
        try:
            score = common.parse_number(value, unit)
        except CellError as exc:
            yield ParseFailure(f"{path}:{subset or 'overall'}.{key}", str(exc), payload)
            continue
        result = BOARD.result(
            meta.url,
            dataset_name=BENCHMARK,
            metric_id=metric,
            metric_name=key,
            unit=unit,
            bounds=bounds,
            lower_is_better=lib,
            score=score,
            setup={"subset": subset} if subset else None,
        )
        result["evaluation_result_id"] += f".{subset or 'overall'}"
        results.append(result)
    developer, model, filename = parts
    notes = doc.get("model_annotations") or {}
    config = doc.get("config") or {}
    yield BOARD.record(
        meta,
        Model(
            id=f"{developer}/{model}",
            name=f"{developer}/{model}",
            developer=developer,
            details={
                "model_dtype": common.fact_text(config.get("model_dtype")),
                "model_size": common.fact_text(notes.get("model_size")),
            },
            availability=ACCESS.get(str(notes.get("accessibility")), "unknown"),
        ),
        results,
        (path, payload),
        evaluation_timestamp=filename.removeprefix("results_").removesuffix(".json"),
    )
