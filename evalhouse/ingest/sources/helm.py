"""Stanford CRFM HELM leaderboards: each project's latest release, its main group's score table.

Three hops, each a pure function of the payload before it (:func:`follow`), as HELM's own site
reads them: ``project_metadata.json`` (every project and its releases, newest first) ->
``<project>/benchmark_output/releases/<release>/groups.json`` (its first tab's first row links the
main group, ``?group=safety_scenarios``) -> ``groups/<main group>.json``, a list of tabs
``{title, header, rows}``. The ``Accuracy`` tab holds the scores (the other tabs hold efficiency and
run facts); its header cells name each column's run group and metric
(``metadata{run_group, metric}``; ``"<run group> - <metric>"`` when absent), and every score cell
lists the run specs it comes from (``run_spec_names: ["harm_bench:model=meta_llama-3-70b-chat"]``).

**Models** are named by HELM's model id, read from those run specs (``model=meta_llama-3-70b-chat``
is HELM's ``meta/llama-3-70b-chat``); the row's first cell is only a display name ("Llama 3
Instruct (70B)"), kept as a detail. A row whose score cells name no model, or two, is refused.

**Benchmarks**: a run group ``helm.yaml`` maps is that registry benchmark; any other is declared by
HELM itself (``records.DECLARED_BENCHMARK``, with the header's description) and named
``"<leaderboard>: <run group>"`` (``HELM Safety: HarmBench``), so the registry registers it as a new
benchmark with a recorded decision, never merged with another source's HarmBench. Each
leaderboard's numbers stay apart (setup ``benchmark_version = helm_<project>``). Bounds are the
metric's own. HELM runs every model itself: independent evaluator.

**Projects**: ``helm.yaml`` ``default`` (Safety: the one whose group tables evalhouse was verified on)
unless ``EVALHOUSE_HELM_PROJECTS`` names others (``lite,classic``: the same table format, not yet
verified on real bytes).
"""

from __future__ import annotations

import json
import re
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
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import DECLARED_BENCHMARK, ParseFailure, ParseItem

_MAPPING = common.load_mapping("helm.yaml")
METADATA_URL: str = _MAPPING["project_metadata"]
STORAGE: str = _MAPPING["storage"]
LEADERBOARDS: Mapping[str, str] = _MAPPING["leaderboards"]
DEFAULT_PROJECTS: tuple[str, ...] = tuple(_MAPPING["default"])
DATASETS: Mapping[str, str] = _MAPPING["datasets"]
METRICS: Mapping[str, str] = _MAPPING["metrics"]
PROJECTS_ENV = "EVALHOUSE_HELM_PROJECTS"
_RUN_MODEL = re.compile(r"(?:^|[,:])model=([^,]+)")
_GROUP = re.compile(r"[?&]group=([^&]+)")

_SHARED = "shared:datasets/real-payloads-2026-12/helm/"
_SAFETY = f"{STORAGE}/safety/benchmark_output/releases/v1.2.0"

SOURCE = SourceSpec(
    key="helm",
    name="HELM leaderboards",
    kind="api",
    tier=1,
    organisation="Stanford CRFM",
    homepage="https://crfm.stanford.edu/helm/",
    default_urls=(METADATA_URL,),
    cadence="weekly",
    parser_version="helm/2",
    collection="helm",
    description=(
        "Stanford CRFM's own HELM runs: each project's latest release, the Accuracy tab of its main group "
        "(HELM Safety by default; Lite, Classic and others with EVALHOUSE_HELM_PROJECTS)."
    ),
    optional_env=(PROJECTS_ENV,),
    licence="HELM results, Apache-2.0 (crfm-helm)",
    declares_benchmarks=True,
    verified_on=Recording(
        repository=(
            "stanford-crfm/helm (helm-frontend/project_metadata.json; benchmark_output_TRUE_latest/runs/v4/"
            "groups.json and groups/safety_scenarios.json, a committed helm-summarize output of the Safety suite)"
        ),
        commit="865aaae70bbd4acd49cc67eaf022eb57404a71c6",
        recorded="2024-07-22",
        licence="Apache-2.0",
        files=(
            f"{_SHARED}project_metadata_2025-05-30.json",
            f"{_SHARED}safety_v4_groups.json",
            f"{_SHARED}safety_v4_groups_safety_scenarios.json",
            "fixtures:helm/project_metadata.json",
            "fixtures:helm/safety_v3_groups.json",
            "fixtures:helm/safety_v3_groups_safety_scenarios.json",
        ),
        replay=(
            (METADATA_URL, f"{_SHARED}project_metadata_2025-05-30.json"),
            (f"{_SAFETY}/groups.json", f"{_SHARED}safety_v4_groups.json"),
            (f"{_SAFETY}/groups/safety_scenarios.json", f"{_SHARED}safety_v4_groups_safety_scenarios.json"),
        ),
    ),
)
BOARD = Board(SOURCE, "independent_evaluator", "helm")


def projects(env: Mapping[str, str]) -> tuple[str, ...]:
    """The projects to read: ``$EVALHOUSE_HELM_PROJECTS`` (comma-separated) or the verified default
    (checked against ``project_metadata.json`` when it is parsed)."""
    named = tuple(p.strip() for p in (env.get(PROJECTS_ENV) or "").split(",") if p.strip())
    return named or DEFAULT_PROJECTS


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=METADATA_URL, label="project_metadata:" + ",".join(projects(state.env)))]


def _wanted(doc: Any, arg: str) -> list[dict[str, Any]]:
    """The chosen projects of ``project_metadata.json``; one evalhouse cannot read, or the file
    does not list, fails the run (a typo in ``$EVALHOUSE_HELM_PROJECTS`` is never silent)."""
    listed = {p["id"]: p for p in _projects(doc)}
    wanted = [p for p in arg.split(",") if p] or list(DEFAULT_PROJECTS)
    unknown = [p for p in wanted if p not in LEADERBOARDS]
    if unknown:
        raise ParseError(
            f"{PROJECTS_ENV} names HELM project(s) {unknown} evalhouse does not read: {sorted(LEADERBOARDS)}"
        )
    absent = [p for p in wanted if not listed.get(p, {}).get("releases")]
    if absent:
        raise ParseError(
            f"project_metadata.json lists no release of HELM project(s) {absent} (it lists {sorted(listed)})"
        )
    return [listed[p] for p in wanted]


def _json(body: bytes, what: str) -> Any:
    try:
        return json.loads(common.decode_text(body, what))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{what} is not JSON: {exc}") from exc


def _kind(meta: FetchMeta) -> tuple[str, str]:
    """``(kind, argument)`` from the label (``table:safety``), else from the URL's path (a payload
    ingested or replayed without its label): ``.../<project>/benchmark_output/releases/<r>/groups/x.json``."""
    kind, _, arg = (meta.label or "").partition(":")
    if kind in ("project_metadata", "groups", "table"):
        return kind, arg
    path = meta.url.split("?", 1)[0]
    if path.endswith("/project_metadata.json"):
        return "project_metadata", ""
    match = re.search(r"/([^/]+)/benchmark_output/releases/[^/]+/(groups\.json|groups/[^/]+\.json)$", path)
    if match is None:
        return "", ""
    return ("groups" if match[2] == "groups.json" else "table"), match[1]


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """project_metadata -> each chosen project's latest groups.json -> its main group's table."""
    kind, arg = _kind(meta)
    doc = _json(body, meta.url)
    if kind == "project_metadata":
        found = []
        for project in _wanted(doc, arg):
            base = f"{STORAGE}/{project['id']}/benchmark_output/releases/{project['releases'][0]}"
            found.append(FetchRequest(url=f"{base}/groups.json", label=f"groups:{project['id']}"))
        return found
    if kind == "groups":
        group = _main_group(doc, meta.url)
        base = meta.url.rsplit("/", 1)[0]
        return [FetchRequest(url=f"{base}/groups/{group}.json", label=f"table:{arg}")]
    return []


def _projects(doc: Any) -> list[dict[str, Any]]:
    if not isinstance(doc, list) or not all(isinstance(p, dict) and "id" in p for p in doc):
        raise LayoutChanged("layout changed: project_metadata.json is not a list of {id, releases, ...}")
    return doc


def _main_group(doc: Any, url: str) -> str:
    try:
        href = str(doc[0]["rows"][0][0]["href"])
    except (KeyError, IndexError, TypeError):
        raise LayoutChanged(f"layout changed: {url}'s first tab does not link a main group") from None
    match = _GROUP.search(href)
    if match is None:
        raise LayoutChanged(f"layout changed: {url}'s first link {href!r} names no group")
    return match[1]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    kind, project = _kind(meta)
    doc = _json(body, meta.url)
    if kind == "project_metadata":
        _wanted(doc, project)
        return
    if kind == "groups":
        _main_group(doc, meta.url)
        return
    if kind != "table" or project not in LEADERBOARDS:
        raise LayoutChanged(f"layout changed: {meta.url} (label {meta.label!r}) is no HELM payload evalhouse reads")
    tabs = [t for t in doc if isinstance(t, dict) and t.get("title") == "Accuracy"] if isinstance(doc, list) else []
    if not tabs:
        raise LayoutChanged(f"layout changed: no 'Accuracy' tab in {meta.url}")
    header, rows = tabs[0].get("header") or [], tabs[0].get("rows") or []
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: the Accuracy tab of {meta.url} has no rows")
    columns = [_column(project, h) for h in header[1:]]
    for i, row in enumerate(rows):
        yield from _row(project, columns, row, f"{project} Accuracy row {i}", meta)


def _column(project: str, header: Any) -> dict[str, Any]:
    """What one header cell says: the benchmark (registry name or declared), the metric, direction."""
    header = header if isinstance(header, dict) else {}
    text = str(header.get("value") or "")
    info = header.get("metadata") or {}
    group = str(info.get("run_group") or text.partition(" - ")[0])
    metric_text = str(info.get("metric") or text.partition(" - ")[2] or text)
    metric_text = metric_text.removeprefix(f"{group} - ")
    if not info.get("run_group") and " - " not in text:  # a leaderboard composite ("Mean win rate")
        group, metric_text = text, text
    mapped = DATASETS.get(group)
    return {
        "text": text,
        "dataset": mapped or f"{LEADERBOARDS[project]}: {group}",
        "declared": None if mapped else f"{LEADERBOARDS[project]} column {text!r}: {header.get('description') or text}",
        "metric": METRICS.get(metric_text, metric_text),
        "lower_is_better": bool(header.get("lower_is_better", False)),
    }


def _models(cells: list[Any]) -> set[str]:
    return {
        m[1]
        for c in cells
        if isinstance(c, dict)
        for s in c.get("run_spec_names") or []
        if (m := _RUN_MODEL.search(str(s)))
    }


def _row(project: str, columns: list[dict[str, Any]], row: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload({"row": row})
    if not isinstance(row, list) or not row or not isinstance(row[0], dict):
        yield ParseFailure(locator, "row is not a list of cells starting with the model", payload)
        return
    display = str(row[0].get("value") or "")
    helm_ids = _models(row[1:])
    if len(helm_ids) != 1:
        why = (
            "no score cell names the HELM model (run_spec_names)" if not helm_ids else f"cells name {sorted(helm_ids)}"
        )
        yield ParseFailure(locator, f"{display!r}: {why}", payload)
        return
    (helm_id,) = helm_ids
    results = []
    for column, cell in zip(columns, row[1:], strict=False):
        value = cell.get("value") if isinstance(cell, dict) else None
        if value is None:
            continue
        try:
            score = common.parse_number(value, "proportion")
        except CellError as exc:
            yield ParseFailure(f"{locator} column {column['text']!r}", str(exc), payload)
            continue
        result = BOARD.result(
            meta.url,
            dataset_name=column["dataset"],
            metric_id=column["metric"],
            metric_name=column["text"],
            unit="proportion",
            bounds=(0.0, 1.0),
            lower_is_better=column["lower_is_better"],
            score=score,
            details={"column": column["text"], "run_specs": ";".join(cell.get("run_spec_names") or [])},
            setup={"benchmark_version": f"helm_{project}"},
        )
        if column["declared"]:
            result["source_data"]["additional_details"] = {DECLARED_BENCHMARK: column["declared"]}
        results.append(result)
    model_id = helm_id.replace("_", "/", 1)
    yield BOARD.record(
        meta,
        Model(
            id=model_id,
            name=model_id,
            developer=model_id.split("/", 1)[0] if "/" in model_id else None,
            details={"display_name": display, "helm_model_id": helm_id, "helm_leaderboard": project},
        ),
        results,
        (locator, payload),
    )
