"""EvalPerf leaderboard: ``results/evalperf/COMBINED-RESULTS.json`` of the evalplus.github.io site.

EvalPerf measures the efficiency of LLM-written code on 118 performance-exercising tasks. The
page (``evalperf.html``) loads ``COMBINED-RESULTS.json``: ``{model id: {"dps", "dps_norm",
"pass@1", "model_win_rate", "task_win_rate"}}`` plus one ``"heatmap_data"`` entry, the pairwise
DPS of every two models on their common passing tasks. ``dps`` (Differential Performance Score,
0-100: "DPS=80" means the solutions beat 80% of the reference solutions) and ``dps_norm`` are
percentiles; ``pass@1`` is percent correct (sampled at temperature 1.0); the two win rates are
proportions of pairwise races won (against models or per task) and depend on which models are
listed. A model id is ``org--name`` for Hugging Face models (the page links them as ``org/name``,
and so does this parser); a trailing ``(⏩)`` marks a run with the performance-encouraging
prompt, which is the cell's setup, not part of the model's name.

Five cells per model. The pairwise heatmap is not a per-model measurement and is not loaded (its
entry is recognised by name; any other non-model entry is refused). The EvalPlus team runs every
model: benchmark creator.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._payloads import json_document
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = "https://evalplus.github.io/results/evalperf/COMBINED-RESULTS.json"
DATASET = "EvalPerf"
PAIRWISE = "heatmap_data"
FAST_PROMPT = "(⏩)"
#: field -> (metric id, unit, bounds)
CELLS: Mapping[str, tuple[str, str, tuple[float, float]]] = {
    "dps": ("dps", "percent", (0.0, 100.0)),
    "dps_norm": ("dps.normalised", "percent", (0.0, 100.0)),
    "pass@1": ("pass_rate", "percent", (0.0, 100.0)),
    "model_win_rate": ("win_rate.model", "proportion", (0.0, 1.0)),
    "task_win_rate": ("win_rate.task", "proportion", (0.0, 1.0)),
}

SOURCE = SourceSpec(
    key="evalperf",
    name="EvalPerf leaderboard",
    kind="leaderboard",
    tier=2,
    organisation="EvalPlus team (UIUC)",
    homepage="https://evalplus.github.io/evalperf.html",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="evalperf/1",
    collection="evalperf",
    description=(
        "The EvalPlus team's EvalPerf runs: code-efficiency DPS and normalised DPS, pass@1, and "
        "model- and task-wise win rates per model and prompt."
    ),
    licence="Apache-2.0 (evalplus/evalplus.github.io)",
    verified_on=Recording(
        repository="evalplus/evalplus.github.io (the leaderboard site)",
        commit="87418456d3a8c2bc6265f24ff91d2dd0e7993f4b",
        recorded="2024-12-26",
        licence="Apache-2.0",
        files=("fixtures:evalperf/COMBINED-RESULTS.json",),
        replay=((URL, "fixtures:evalperf/COMBINED-RESULTS.json"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "evalplus")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="combined", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = json_document(body, "the EvalPerf results JSON")
    if not isinstance(doc, dict):
        raise LayoutChanged("layout changed: the EvalPerf results file is not an object of models")
    models = {k: v for k, v in doc.items() if k != PAIRWISE}
    if not models:
        raise EmptyPlaceholder("empty placeholder: the EvalPerf results file lists no model")
    for key, entry in models.items():
        yield from _model(str(key), entry, meta)


def _model(key: str, entry: Any, meta: FetchMeta) -> Iterator[ParseItem]:
    locator = f"[{key!r}]"
    payload = common.row_payload({key: entry})
    if not isinstance(entry, dict) or not set(entry) <= set(CELLS):
        yield ParseFailure(locator, f"not a model entry with fields {sorted(CELLS)}", payload)
        return
    name = key.removesuffix(FAST_PROMPT).strip()
    setup = {"prompt": "performance-encouraging" if key.endswith(FAST_PROMPT) else "default"}
    model_id = name.replace("--", "/", 1) if "--" in name else name
    results = []
    for field, (metric, unit, bounds) in CELLS.items():
        if entry.get(field) is None:
            continue
        try:
            score = common.parse_number(entry[field], unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.{field}", str(exc), payload)
            continue
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=DATASET,
                result_id=f"{key}.{field}",
                metric_id=metric,
                metric_name=field,
                unit=unit,
                bounds=bounds,
                score=score,
                details={SOURCE_RECORD_ID: key},
                setup=setup,
            )
        )
    yield BOARD.record(meta, Model(id=model_id, name=model_id), results, (locator, payload))
