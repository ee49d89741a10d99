"""Stanford CRFM HELM leaderboards (Capabilities, Lite, Classic): the release JSON tables.

Three hops, each a pure function of the previous payload (:func:`follow`):
``project_metadata.json`` (the latest release of each project) -> ``groups.json`` (the main
group of that release) -> ``groups/<group>.json``, a list of tabs ``{title, header, rows}``.
The "Accuracy" tab carries the scores: cell 0 is the model (its run specs name the HELM model
id, ``model=openai_gpt-4o-2024-05-13``), each other column is ``"<dataset> - <metric>"``.
HELM runs every model itself: independent. Each leaderboard's numbers stay apart
(``benchmark_version = helm_<leaderboard>``): HELM's MMLU is five subjects with HELM's prompts,
not another harness's MMLU. Bounds are the metric's own (the adapter's observed column bounds
of source-formats.md §D.3 are not used, so one model moving does not change every record).
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

_MAPPING = common.load_mapping("helm.yaml")
METADATA_URL: str = _MAPPING["project_metadata"]
STORAGE: str = _MAPPING["storage"]
LEADERBOARDS: Mapping[str, str] = _MAPPING["leaderboards"]
DATASETS: Mapping[str, str] = _MAPPING["datasets"]
METRICS: Mapping[str, str] = _MAPPING["metrics"]
_RUN_MODEL = re.compile(r"(?:^|[,:])model=([^,]+)")

SOURCE = SourceSpec(
    key="helm",
    name="HELM leaderboards",
    kind="api",
    tier=1,
    organisation="Stanford CRFM",
    homepage="https://crfm.stanford.edu/helm/",
    default_urls=(METADATA_URL,),
    cadence="weekly",
    parser_version="helm/1",
    collection="helm",
    description=(
        "Stanford CRFM's own HELM runs: the Capabilities, Lite and Classic leaderboards' accuracy "
        "tables from each project's latest release (groups/<main group>.json)."
    ),
    licence="HELM results, Apache-2.0 (crfm-helm)",
)
BOARD = Board(SOURCE, "independent_evaluator", "helm")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=METADATA_URL, label="project_metadata")]


def _json(body: bytes, what: str) -> Any:
    try:
        return json.loads(common.decode_text(body, what))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"{what} is not JSON: {exc}") from exc


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """project_metadata -> each leaderboard's groups.json -> its main group's table."""
    doc = _json(body, meta.url)
    if meta.label == "project_metadata":
        found = []
        for project in doc if isinstance(doc, list) else []:
            if isinstance(project, dict) and project.get("id") in LEADERBOARDS and project.get("releases"):
                base = f"{STORAGE}/{project['id']}/benchmark_output/releases/{project['releases'][0]}"
                found.append(FetchRequest(url=f"{base}/groups.json", label=f"groups:{project['id']}"))
        return found
    if meta.label and meta.label.startswith("groups:"):
        try:
            href = doc[0]["rows"][0][0]["href"]
        except (KeyError, IndexError, TypeError):
            return []
        group = str(href).split("group=", 1)[-1].split("&", 1)[0]
        base = meta.url.rsplit("/", 1)[0]
        return [FetchRequest(url=f"{base}/groups/{group}.json", label=f"table:{meta.label.split(':', 1)[1]}")]
    return []


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = _json(body, meta.url)
    if not (meta.label or "").startswith("table:"):
        if not isinstance(doc, list) or not doc:
            raise LayoutChanged(f"layout changed: {meta.url} is not a non-empty JSON list")
        return
    leaderboard = meta.label.split(":", 1)[1]
    tabs = [t for t in doc if isinstance(t, dict) and t.get("title") == "Accuracy"] if isinstance(doc, list) else []
    if not tabs:
        raise LayoutChanged(f"layout changed: no 'Accuracy' tab in {meta.url}")
    tab = tabs[0]
    header, rows = tab.get("header") or [], tab.get("rows") or []
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: the Accuracy tab of {meta.url} has no rows")
    for i, row in enumerate(rows):
        yield from _row(leaderboard, header, row, f"{leaderboard} Accuracy row {i}", meta)


def _row(leaderboard: str, header: list[Any], row: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload({"row": row})
    if not isinstance(row, list) or not row or not isinstance(row[0], dict):
        yield ParseFailure(locator, "row is not a list of cells starting with the model", payload)
        return
    display = str(row[0].get("value") or "")
    specs = row[0].get("run_spec_names") or []
    helm_id = next((m[1] for s in specs if (m := _RUN_MODEL.search(str(s)))), None)
    model_id = helm_id.replace("_", "/", 1) if helm_id else display
    results = []
    for column, cell in zip(header[1:], row[1:], strict=False):
        text = str(column.get("value") or "")
        dataset, _, metric_text = text.partition(" - ")
        metric = METRICS.get(metric_text or dataset)
        bench = f"{LEADERBOARDS[leaderboard]}: {dataset}" if metric_text == "" else DATASETS.get(dataset, text)
        value = cell.get("value") if isinstance(cell, dict) else None
        if value is None:
            continue
        try:
            score = common.parse_number(value, "proportion")
        except CellError as exc:
            yield ParseFailure(f"{locator} column {text!r}", str(exc), payload)
            continue
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=bench,
                metric_id=metric or metric_text or "score",
                metric_name=text,
                unit="proportion",
                bounds=(0.0, 1.0),
                lower_is_better=bool(column.get("lower_is_better", False)),
                score=score,
                details={"column": text},
                setup={"benchmark_version": f"helm_{leaderboard}"},
            )
        )
    yield BOARD.record(
        meta,
        Model(
            id=model_id,
            name=model_id,
            developer=model_id.split("/")[0] if helm_id else None,
            details={"display_name": display, "helm_leaderboard": leaderboard},
        ),
        results,
        (locator, payload),
    )
