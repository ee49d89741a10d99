"""EvalPlus leaderboard: ``results.json`` of the evalplus.github.io site.

The leaderboard page loads ``results.json``: ``{model name: {"link", "open-data", "pass@1":
{"humaneval", "humaneval+", "mbpp", "mbpp+"}, "prompted", "size"}}``. Values are greedy pass@1 in
percent; ``null`` where a model was not run on that set. ``humaneval`` is the original HumanEval
(164 problems, its own tests); ``humaneval+`` the same problems under EvalPlus's 80x more tests;
``mbpp`` and ``mbpp+`` are EvalPlus's sanitised MBPP subset (378 problems) under the base and the
extended tests — not the original MBPP test split, so kept apart from it.

The EvalPlus team runs every model: on HumanEval, an independent evaluator of OpenAI's benchmark;
on its own HumanEval+, MBPP and MBPP+ sets, the benchmark creator. Each model therefore gives two
records, one per role, so a vendor's or another evaluator's HumanEval number meets this one as
what it is.
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

URL = "https://evalplus.github.io/results.json"
#: pass@1 key -> (dataset name, who ran it)
SETS: Mapping[str, tuple[str, str]] = {
    "humaneval": ("HumanEval", "independent_evaluator"),
    "humaneval+": ("HumanEval+", "benchmark_creator"),
    "mbpp": ("MBPP (EvalPlus base tests)", "benchmark_creator"),
    "mbpp+": ("MBPP+", "benchmark_creator"),
}

SOURCE = SourceSpec(
    key="evalplus",
    name="EvalPlus leaderboard",
    kind="leaderboard",
    tier=2,
    organisation="EvalPlus team (UIUC)",
    homepage="https://evalplus.github.io/leaderboard.html",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="evalplus/1",
    collection="evalplus",
    description=(
        "The EvalPlus team's greedy pass@1 runs of code models on HumanEval, HumanEval+, MBPP "
        "(EvalPlus subset) and MBPP+."
    ),
    licence="Apache-2.0 (evalplus/evalplus.github.io)",
    verified_on=Recording(
        repository="evalplus/evalplus.github.io (the leaderboard site)",
        commit="87418456d3a8c2bc6265f24ff91d2dd0e7993f4b",
        recorded="2024-12-26",
        licence="Apache-2.0",
        files=("fixtures:evalplus/results.json",),
        replay=((URL, "fixtures:evalplus/results.json"),),
    ),
)
BOARDS = {role: Board(SOURCE, role, "evalplus") for role in ("independent_evaluator", "benchmark_creator")}


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="results", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = json_document(body, "the EvalPlus results JSON")
    if not isinstance(doc, dict) or not all(isinstance(v, dict) and "pass@1" in v for v in doc.values()):
        raise LayoutChanged("layout changed: the EvalPlus results file is not {model: {'pass@1': {...}}}")
    if not doc:
        raise EmptyPlaceholder("empty placeholder: the EvalPlus results file lists no model")
    for name, entry in doc.items():
        yield from _model(str(name), entry, meta)


def _model(name: str, entry: Mapping[str, Any], meta: FetchMeta) -> Iterator[ParseItem]:
    locator = f"[{name!r}]"
    payload = common.row_payload({name: entry})
    scores = entry.get("pass@1")
    if not isinstance(scores, dict):
        yield ParseFailure(f"{locator}.pass@1", "'pass@1' is not an object", payload)
        return
    unknown = sorted(set(scores) - set(SETS))
    for key in unknown:
        yield ParseFailure(f"{locator}.pass@1.{key}", f"unknown set {key!r} (known: {sorted(SETS)})", payload)
    by_role: dict[str, list[dict[str, Any]]] = {}
    for key, (dataset, role) in SETS.items():
        if scores.get(key) is None:
            continue
        try:
            score = common.parse_number(scores[key], "percent")
        except CellError as exc:
            yield ParseFailure(f"{locator}.pass@1.{key}", str(exc), payload)
            continue
        by_role.setdefault(role, []).append(
            BOARDS[role].result(
                meta.url,
                dataset_name=dataset,
                result_id=f"{name}.{key}",
                metric_id="pass_rate",
                metric_name="pass@1",
                unit="percent",
                bounds=(0.0, 100.0),
                score=score,
                details={SOURCE_RECORD_ID: name},
            )
        )
    facts = {
        "link": common.fact_text(entry.get("link")),
        "open_data": common.fact_text(entry.get("open-data")),
        "prompted": common.fact_text(entry.get("prompted")),
        "params_billions": common.fact_text(entry.get("size")),
    }
    for role, results in by_role.items():
        yield BOARDS[role].record(
            meta,
            Model(id=name, name=name, details=facts),
            results,
            (f"{locator} ({role})", payload),
        )
