"""Hugging Face Open LLM Leaderboard v2: the Space's formatted contents API (frozen upstream).

``GET /api/leaderboard/formatted`` returns a JSON list, one row per submitted (model,
precision): ``model{name, precision, architecture, type, weight_type, sha}``,
``evaluations{ifeval, bbh, math, gpqa, musr, mmlu_pro}`` each with the raw ``value`` (a
proportion) and the leaderboard's ``normalized_score`` (random baseline removed, 0-100),
``features{is_merged, is_moe, is_flagged, ...}`` and ``metadata{params_billions, base_model,
hub_license, submission_date, ...}`` (source-formats.md §C.3). The six v2 benchmarks are their
own registry entries (``open_llm_leaderboard_v2.*``): their harness settings differ from other
runs of IFEval, BBH, MATH, GPQA, MuSR or MMLU-Pro, and v1's columns (ARC, HellaSwag, ...) are
never joined with them. HF ran every evaluation itself (lm-evaluation-harness): independent.
"""

from __future__ import annotations

import json
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
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = "https://open-llm-leaderboard-open-llm-leaderboard.hf.space/api/leaderboard/formatted"
#: evaluation key -> (raw benchmark name, raw metric of ``value``)
BENCHMARKS: Mapping[str, tuple[str, str]] = {
    "ifeval": ("Open LLM Leaderboard v2: IFEval", "accuracy"),
    "bbh": ("Open LLM Leaderboard v2: BBH", "normalized_accuracy"),
    "math": ("Open LLM Leaderboard v2: MATH Lvl 5", "exact_match"),
    "gpqa": ("Open LLM Leaderboard v2: GPQA", "normalized_accuracy"),
    "musr": ("Open LLM Leaderboard v2: MuSR", "normalized_accuracy"),
    "mmlu_pro": ("Open LLM Leaderboard v2: MMLU-Pro", "accuracy"),
}
FEATURES = ("is_merged", "is_moe", "is_flagged", "is_not_available_on_hub", "is_official_provider")
METADATA = (
    "params_billions",
    "base_model",
    "hub_license",
    "hub_hearts",
    "submission_date",
    "upload_date",
    "generation",
    "co2_cost",
)
_ROW = "shared:datasets/real-payloads-2026-12/open-llm-leaderboard/formatted_one_row_from_eee_create_data.json"

SOURCE = SourceSpec(
    key="open-llm-leaderboard",
    name="Open LLM Leaderboard v2",
    kind="api",
    tier=2,
    organisation="Hugging Face",
    homepage="https://huggingface.co/spaces/open-llm-leaderboard/open_llm_leaderboard",
    default_urls=(URL,),
    cadence="monthly",
    parser_version="open-llm-leaderboard/2",
    collection="hfopenllm_v2",
    description=(
        "Hugging Face's own lm-evaluation-harness runs of open models on the v2 suite (IFEval, BBH, "
        "MATH Lvl 5, GPQA, MuSR, MMLU-Pro): raw and normalised scores, precision, parameters, "
        "base model and flags. Frozen upstream."
    ),
    licence="Open LLM Leaderboard contents (Apache-2.0 dataset card); scores by Hugging Face",
    verified_on=Recording(
        repository=(
            "evaleval/every_eval_ever (scripts/hfopenllm_v2/create_data.py: one verbatim row of the formatted API,"
            " kept as JSON in ../shared)"
        ),
        commit="d616d9757aa4f7194700a5246327924560d23d98",
        recorded="2026-01-15",
        licence="MIT (the EEE repository); scores by Hugging Face",
        files=(_ROW,),
        replay=((URL, _ROW),),
    ),
)
BOARD = Board(SOURCE, "independent_evaluator", "lm-evaluation-harness", "https://huggingface.co")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, headers={"accept": "application/json"}, label="contents", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        rows = json.loads(common.decode_text(body, "the Open LLM Leaderboard contents"))
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"the Open LLM Leaderboard contents are not JSON: {exc}") from exc
    if isinstance(rows, dict):
        rows = rows.get("rows", rows.get("data"))
    if not isinstance(rows, list):
        raise LayoutChanged("layout changed: the Open LLM Leaderboard contents are not a JSON list of rows")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the Open LLM Leaderboard contents list no rows")
    for i, row in enumerate(rows):
        yield from _row(row, f"[{i}]", meta)


def _row(row: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row if isinstance(row, dict) else {"value": row})
    model = row.get("model") if isinstance(row, dict) else None
    name = str((model or {}).get("name") or "")
    if "/" not in name:
        yield ParseFailure(locator, f"model name {name!r} is not an org/model id", payload)
        return
    precision = str(model.get("precision") or "unknown")
    row_id = str(row.get("id") or f"{name}_{precision}")
    results: list[dict[str, Any]] = []
    for key, cell in (row.get("evaluations") or {}).items():
        if key not in BENCHMARKS or not isinstance(cell, dict):
            yield ParseFailure(f"{locator}.evaluations.{key}", f"unknown evaluation key {key!r}", payload)
            continue
        bench, metric = BENCHMARKS[key]
        try:
            value = common.parse_number(cell.get("value"), "proportion")
            normalised = common.parse_number(cell.get("normalized_score"), "percent")
        except CellError as exc:
            yield ParseFailure(f"{locator}.evaluations.{key}", str(exc), payload)
            continue
        details = {SOURCE_RECORD_ID: row_id}
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=bench,
                metric_id=metric,
                unit="proportion",
                bounds=(0.0, 1.0),
                score=value,
                details=details,
            )
        )
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=bench,
                metric_id="score.normalised",
                metric_name="normalized_score (random baseline removed)",
                unit="percent",
                bounds=(0.0, 100.0),
                score=normalised,
                details=details,
            )
        )
    facts = {"precision": precision}
    for key in ("architecture", "type", "weight_type", "sha", "has_chat_template"):
        facts[key] = common.fact_text(model.get(key))
    for group, keys in (("features", FEATURES), ("metadata", METADATA)):
        for key in keys:
            facts[key] = common.fact_text((row.get(group) or {}).get(key))
    yield BOARD.record(
        meta,
        Model(id=name, name=name, developer=name.split("/", maxsplit=1)[0], details=facts, availability="open_weights"),
        results,
        (locator, payload),
    )
