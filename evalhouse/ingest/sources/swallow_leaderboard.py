"""Swallow LLM Leaderboard (Institute of Science Tokyo / AIST): a static site crawled by scrapy.

The site has two English index pages (pre-trained and post-trained models), each loading a
JavaScript data file (``const g_models = {...}; const g_tasks = {...}``) and linking to one page
per model. The crawl (spider ``swallow``) starts at the index pages and follows what
:func:`follow` finds: the data file and every per-model page. The scores come from the data
files' object literals (read with chompjs): per model its release date, parameters, family,
base model (``pre_training``), reasoning mode and Hugging Face URL, and per task group
(``en_pre``, ``ja_pre``, ``en_post``, ``ja_post``, ``en_mtb``, ``ja_mtb``) proportions in
[0, 1]. Index and model pages are checked for their layout (a page whose table or title is gone
fails the run as "layout changed"); they carry no score the data files do not.

The Swallow team runs every evaluation itself, so its numbers are ``independent_evaluator``
runs - except for its own Swallow models (``tokyotech-llm/...``), where it is the developer.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

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
from evalhouse.ingest.sources import _pages as pages
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, ParseFailure, ParseItem

_MAPPING = common.load_mapping("swallow_leaderboard.yaml")
SITE: str = _MAPPING["site"]
START_URLS = tuple(SITE + page for page in _MAPPING["start_pages"])
FIELDS: Mapping[str, Mapping[str, Any]] = _MAPPING["fields"]
MT_BENCH: Mapping[str, str] = _MAPPING["mt_bench"]
OWN_ORG = "tokyotech-llm"
SPIDER = "swallow"
#: The built site's files recorded in ../shared (byte-exact, gh-pages @ c58a13a): the index pages,
#: their data files and six of the ~114 model pages (a replay lists the others as missing).
RECORDED_PAGES = (
    "index-pre.en.html",
    "index-post.en.html",
    "swallow_leaderboard_pre_en.js",
    "swallow_leaderboard_post_en.js",
    "Qwen_Qwen3-8B.en.html",
    "google_gemma-3-27b-it.en.html",
    "gpt-5-2025-08-07.en.html",
    "o3-2025-04-16.en.html",
    "tokyotech-llm_Llama-3.1-Swallow-8B-Instruct-v0.5.en.html",
)
_RECORDED = "shared:formats/swallow-leaderboard/site/"

SOURCE = SourceSpec(
    key="swallow-leaderboard",
    name="Swallow LLM Leaderboard",
    kind="leaderboard",
    tier=2,
    organisation="Institute of Science Tokyo / AIST (Swallow team)",
    homepage=SITE,
    default_urls=START_URLS,
    cadence="weekly",
    parser_version="swallow-leaderboard/1",
    collection="swallow-leaderboard",
    description=(
        "The Swallow team's own runs of Japanese and English task suites (pre-trained and "
        "post-trained models, Japanese and English MT-Bench judged by GPT-5.2), crawled from the "
        "static site: index pages -> JS data files and per-model pages."
    ),
    licence="leaderboard content CC BY 4.0; site code MIT",
    verified_on=Recording(
        repository="swallow-llm/leaderboard (branch gh-pages, the built site)",
        commit="c58a13a852eba061d639af7caf4ddbdff33b36e3",
        recorded="2026-05-08",
        licence="CC BY 4.0 (leaderboard content); MIT (site code)",
        files=tuple(_RECORDED + name for name in RECORDED_PAGES),
        replay=tuple((SITE + name, _RECORDED + name) for name in RECORDED_PAGES),
    ),
)


def plan(state: SourceState) -> list[FetchRequest]:
    """The two English index pages; the crawl finds the rest."""
    return [FetchRequest(url=url, label="index", **state.conditional(url)) for url in START_URLS]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """From an index page: its local ``<script src>`` data file and every linked model page."""
    if meta.label != "index":
        return []
    doc = pages.selector(body, f"the Swallow page {meta.url}")
    found: list[FetchRequest] = []
    for src in doc.css("script::attr(src)").getall():
        url = pages.same_site_link(meta.url, src)
        if url and url.endswith(".js"):
            found.append(FetchRequest(url=url, label="data"))
    for link in _model_links(doc, meta.url):
        found.append(FetchRequest(url=link, label="model"))
    return found


def _model_links(doc: Any, base: str) -> list[str]:
    links: list[str] = []
    for href in doc.css("table.table-sort tbody td a::attr(href)").getall():
        url = pages.same_site_link(base, href)
        if url and url.endswith(".en.html") and url not in links:
            links.append(url)
    return links


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """Records from a data file; layout checks only for index and model pages."""
    text = common.decode_text(body, f"the Swallow payload {meta.url}")
    if meta.label == "data" or meta.url.endswith(".js"):
        yield from _parse_data(text, meta)
        return
    doc = pages.selector(body, meta.url)
    if meta.label == "model":  # a 600 kB page whose one checked element is its title
        if not pages.text_of(doc.css("h2#title")[:1]):
            raise LayoutChanged(f"layout changed: no model title under h2#title in {meta.url}")
        return
    tables = doc.css("table.table-sort")
    if not tables:
        raise LayoutChanged(f"layout changed: no table.table-sort in {meta.url}")
    if not tables.css("tbody tr"):
        raise EmptyPlaceholder(f"empty placeholder: {len(tables)} table(s) in {meta.url} have no rows")
    if not _model_links(doc, meta.url):
        raise LayoutChanged(f"layout changed: no model links in the tables of {meta.url}")


def _parse_data(text: str, meta: FetchMeta) -> Iterator[ParseItem]:
    models = pages.js_object(text, "g_models", meta.url)
    tasks = pages.js_object(text, "g_tasks", meta.url)
    if not isinstance(models, dict) or not isinstance(tasks, dict):
        raise ParseError(f"g_models / g_tasks in {meta.url} are not objects")
    if not models:
        raise EmptyPlaceholder(f"empty placeholder: g_models in {meta.url} has no models")
    for key, model in models.items():
        locator = f"g_models[{key!r}]"
        if not isinstance(model, dict):
            yield ParseFailure(locator, f"expected a model object, got {type(model).__name__}")
            continue
        yield from _model_record(key, model, tasks, locator, meta)


def _model_record(
    key: str, model: Mapping[str, Any], tasks: Mapping[str, Any], locator: str, meta: FetchMeta
) -> Iterator[ParseItem]:
    payload = common.row_payload(model)
    results: list[dict[str, Any]] = []
    for group, scores in (model.get("results") or {}).items():
        if not isinstance(scores, dict):
            yield ParseFailure(f"{locator}.results.{group}", "task group is not an object", payload)
            continue
        taskdict = (tasks.get(group) or {}).get("taskdict") or {}
        for task, value in scores.items():
            where = f"{locator}.results.{group}.{task}"
            try:
                score = common.parse_number(value, "proportion")
            except CellError as exc:
                yield ParseFailure(where, str(exc), payload)
                continue
            results.append(_result(group, task, taskdict.get(task) or {}, score, meta))
    model_id = str(model.get("id") or key)
    developer = model_id.split("/", 1)[0] if "/" in model_id else None
    details = {
        "deployment_type": "unknown",
        "model_availability": "open_weights" if developer else "closed_weights",
        "display_name": str(model.get("name") or model_id),
    }
    for name in ("family", "pre_training", "reasoning", "url", "params", "active_params"):
        if (value := common.fact_text(model.get(name))) is not None and value not in ("\uff0d", "-"):
            details[{"params": "params_billions", "active_params": "active_params_billions"}.get(name, name)] = value
    try:
        details.update(common.date_details(str(model.get("date") or "")))
    except CellError as exc:
        yield ParseFailure(f"{locator}.date", str(exc), payload)
    info: dict[str, Any] = {"name": model_id, "id": model_id, "additional_details": details}
    if developer:
        info["developer"] = developer
    yield common.build_record(
        meta=meta,
        source_metadata=common.source_metadata(
            name=SOURCE.name,
            organisation=SOURCE.organisation,
            organisation_url=SITE,
            evaluated_by="model_developer" if developer == OWN_ORG else "independent_evaluator",
            details={ORIGINAL_SOURCE: SOURCE.name, ORIGINAL_SOURCE_URL: meta.url},
        ),
        eval_library={"name": "swallow-evaluation", "version": "unknown"},
        model_info=info,
        results=results,
        locator=locator,
        payload=payload,
    )


def _result(group: str, task: str, spec: Mapping[str, Any], score: float, meta: FetchMeta) -> dict[str, Any]:
    field_name = str(spec.get("field") or f"{group}.{task}")
    details = {"task_group": group, "task": task, "field": field_name}
    if group in MT_BENCH:
        benchmark = MT_BENCH[group]
        metric = "score" if task == "avg" else f"score.{task}"
        setup: dict[str, str] = {}
    else:
        mapped = FIELDS.get(f"{field_name}@post" if group.endswith("_post") else field_name) or FIELDS.get(
            field_name, {}
        )
        benchmark = mapped.get("benchmark", field_name)
        metric = mapped.get("metric", "score")
        setup = {k: str(mapped[k]).lower() for k in ("shots", "cot") if k in mapped}
    if spec.get("input"):
        details["input"] = str(spec["input"])
    return common.score_result(
        source_key=SOURCE.key,
        dataset_name=benchmark,
        url=meta.url,
        metric_id=metric,
        metric_name=str(spec.get("metric") or metric),
        metric_kind=metric.split(".")[0],
        unit="proportion",
        lower_is_better=False,
        bounds=(0.0, 1.0),
        score=score,
        details=details,
        setup=setup,
    )
