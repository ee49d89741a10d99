"""Vals.ai benchmark pages: embedded Astro props (``<astro-island ... BenchmarkView>``), via httpx.

``/benchmarks`` links to ``/benchmarks/<slug>``; each benchmark page carries its data as the
HTML-escaped ``props`` attribute of the ``astro-island`` whose ``component-url`` contains
``BenchmarkView``, in Astro's serialisation (every value ``[tag, payload]``: 0 a plain value or
object, 1 an array; a one-element ``[n]`` is *undefined*). Decoded, ``benchmarkView`` holds
``metadata`` and ``tasks{task: {vals model id: {accuracy (percent), stderr, latency,
cost_per_test, temperature, ...}}}`` (source-formats.md §C.11). The parser also reads that
decoded form as JSON (the EEE adapter's normalised payload). One record per (benchmark, model).
Vals runs every model on its own (often private) datasets: independent.
"""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources import _pages as pages
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

INDEX = "https://www.vals.ai/benchmarks/"  # the index; /benchmarks/<slug> are the pages
NAMESPACE_ALIASES = {"grok": "xai", "kimi": "moonshotai", "meta-llama": "meta", "togethercomputer": "together"}
DETAILS = ("latency", "cost_per_test", "temperature", "top_p", "max_output_tokens", "reasoning_effort", "provider")

SOURCE = SourceSpec(
    key="vals-ai",
    name="Vals.ai benchmarks",
    kind="leaderboard",
    tier=2,
    organisation="Vals AI",
    homepage="https://www.vals.ai",
    default_urls=(INDEX,),
    cadence="daily",
    parser_version="vals-ai/1",
    collection="vals-ai",
    description="Vals AI's own runs on industry benchmarks (finance, legal, tax, ...), per task, with standard errors.",
    licence="Vals AI site terms",
)
BOARD = Board(SOURCE, "independent_evaluator", "vals")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=INDEX, label="index")]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    if meta.label != "index":
        return []
    doc = pages.soup(body, "the Vals.ai index")
    found: list[FetchRequest] = []
    for a in doc.find_all("a", href=True):
        url = pages.same_site_link(meta.url, a["href"])
        is_page = url and url.rstrip("/").rsplit("/", 2)[-2:-1] == ["benchmarks"] and url != INDEX
        if is_page and all(r.url != url for r in found):
            found.append(FetchRequest(url=url, label="benchmark"))
    return found


def decode_astro(value: Any) -> Any:
    """Astro's ``[tag, payload]`` serialisation back to plain JSON (``[n]`` alone: undefined)."""
    if isinstance(value, list) and len(value) == 2 and value[0] in (0, 1):
        tag, payload = value
        if tag == 1:
            return [decode_astro(v) for v in payload]
        if isinstance(payload, dict):
            return {k: decode_astro(v) for k, v in payload.items() if not _undefined(v)}
        return payload
    return value


def _undefined(value: Any) -> bool:
    return isinstance(value, list) and len(value) == 1 and isinstance(value[0], int)


def _views(body: bytes, meta: FetchMeta) -> list[Mapping[str, Any]]:
    text = common.decode_text(body, "the Vals.ai payload")
    if text.lstrip().startswith("{"):
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ParseError(f"the Vals.ai payload is not JSON: {exc}") from exc
        if not isinstance(doc, dict):
            raise LayoutChanged("layout changed: the Vals.ai payload is not a JSON object")
        return list(doc.get("benchmarks") or [doc])
    doc = pages.soup(body, "the Vals.ai page")
    islands = [i for i in doc.find_all("astro-island") if "BenchmarkView" in (i.get("component-url") or "")]
    if not islands:
        if meta.label == "index":
            if not follow(body, meta=meta):
                raise LayoutChanged("layout changed: no /benchmarks/<slug> links on the Vals.ai index")
            return []
        raise LayoutChanged(f"layout changed: no astro-island BenchmarkView on {meta.url}")
    try:
        props = {k: decode_astro(v) for k, v in json.loads(islands[0]["props"]).items()}
    except (json.JSONDecodeError, RecursionError, KeyError) as exc:
        raise ParseError(f"the BenchmarkView props on {meta.url} are not Astro JSON: {exc}") from exc
    view = props.get("benchmarkView") or {}
    view = view.get("default", view) if isinstance(view, dict) else {}
    return [view]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    for view in _views(body, meta):
        if "metadata" not in view or "tasks" not in view:
            raise LayoutChanged(f"layout changed: the benchmark view on {meta.url} lacks metadata/tasks")
        if not view["tasks"]:
            raise EmptyPlaceholder(f"empty placeholder: the benchmark view on {meta.url} has no tasks")
        yield from _benchmark(view, meta)


def _benchmark(view: Mapping[str, Any], meta: FetchMeta) -> Iterator[ParseItem]:
    info = view["metadata"]
    slug = str(info.get("slug") or info.get("benchmark_id"))
    names = info.get("tasks") or {}
    by_model: dict[str, list[dict[str, Any]]] = {}
    rows: dict[str, Mapping[str, Any]] = {}
    url = str(view.get("source_url") or meta.url)
    for task, models in view["tasks"].items():
        for model_id, cell in (models or {}).items():
            where = f"{slug}.{task}.{model_id}"
            try:
                score = common.parse_number(cell.get("accuracy"), "percent")
            except CellError as exc:
                yield ParseFailure(where, str(exc), common.row_payload(cell))
                continue
            stderr = cell.get("stderr")
            by_model.setdefault(model_id, []).append(
                BOARD.result(
                    url,
                    dataset_name=f"Vals: {info.get('benchmark') or slug} / {names.get(task, task)}",
                    metric_id="accuracy",
                    unit="percent",
                    bounds=(0.0, 100.0),
                    score=score,
                    uncertainty=common.standard_error(float(stderr)) if isinstance(stderr, int | float) else None,
                    details={k: str(cell[k]) for k in DETAILS if cell.get(k) is not None},
                )
            )
            rows[model_id] = cell
    for model_id, results in by_model.items():
        namespace, _, rest = model_id.rpartition("/")
        developer = NAMESPACE_ALIASES.get(namespace, namespace) or common.slugify(
            str(rows[model_id].get("provider") or "")
        )
        yield BOARD.record(
            meta,
            Model(
                id=f"{developer}/{rest}" if developer else rest,
                name=model_id,
                developer=developer or None,
                details={"vals_model_id": model_id, "benchmark_updated": common.fact_text(info.get("updated"))},
                deployment_type="externally_managed",
            ),
            results,
            (f"{slug}:{model_id}", common.row_payload({"model": model_id})),
        )
