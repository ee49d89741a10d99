"""Aider polyglot leaderboard: ``polyglot_leaderboard.yml`` from the aider repository.

A YAML list, one entry per benchmark run: ``dirname`` (the run's unique directory), ``model``,
``edit_format``, ``pass_rate_1`` / ``pass_rate_2`` (percent solved on the first try / after
one retry with test feedback), ``percent_cases_well_formed``, ``total_cost`` (USD),
``seconds_per_case``, ``test_cases``, ``date``, ``versions``, ``command``; some runs add
``reasoning_effort`` (``high``), ``thinking_tokens`` (a thinking budget, ``32000``) and, in
architect mode, ``editor_model`` / ``editor_edit_format``. The headline is ``pass_rate_2``.

What the run's model string says in words ("(no think)", "(32k thinking)", "diff, no think,
Alibaba API") is the model name's business (model-name resolution); the fields themselves travel
beside it: the edit format is part of the cell (setup ``prompting``, as Epoch's copy of the board
states it, so both meet), so are an architect run's editor model and format; the reasoning effort
and thinking budget are facts of the model configuration (``model_info.additional_details``). The
aider project runs the benchmark itself: benchmark creator.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import yaml

from evalhouse.common.yamls import load_yaml
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

URL = "https://raw.githubusercontent.com/Aider-AI/aider/main/aider/website/_data/polyglot_leaderboard.yml"
#: field -> (metric id, unit, bounds)
CELLS: Mapping[str, tuple[str, str, tuple[float | str, float | str]]] = {
    "pass_rate_2": ("pass_rate", "percent", (0.0, 100.0)),
    "pass_rate_1": ("pass_rate.first_try", "percent", (0.0, 100.0)),
    "percent_cases_well_formed": ("format_compliance", "percent", (0.0, 100.0)),
    "total_cost": ("cost", "usd", (0.0, "Infinity")),
    "seconds_per_case": ("latency", "seconds", (0.0, "Infinity")),
}
#: Run fields that define the measurement (setup), and model-configuration facts (details).
SETUP = {"editor_model": "editor_model", "editor_edit_format": "editor_edit_format"}
FACTS = ("reasoning_effort", "thinking_tokens", "versions", "command")

SOURCE = SourceSpec(
    key="aider-polyglot",
    name="Aider polyglot leaderboard",
    kind="leaderboard",
    tier=1,
    organisation="Aider",
    homepage="https://aider.chat/docs/leaderboards/",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="aider-polyglot/2",
    collection="aider-polyglot",
    description="Aider's own runs of its 225-exercise polyglot coding benchmark: pass rates, edit format, cost, dates.",
    licence="Apache-2.0 (aider repository)",
    verified_on=Recording(
        repository="Aider-AI/aider (aider/website/_data/polyglot_leaderboard.yml)",
        commit="5dc9490bb35f9729ef2c95d00a19ccd30c26339c",
        recorded="2025-10-04",
        licence="Apache-2.0",
        files=(
            "shared:datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml",
            "fixtures:aider-polyglot/polyglot_leaderboard_2024-12-21.yml",
        ),
        replay=((URL, "shared:datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml"),),
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "aider")


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="polyglot", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        runs = load_yaml(common.decode_text(body, "the aider polyglot YAML"))
    except (yaml.YAMLError, RecursionError) as exc:
        raise ParseError(f"the aider polyglot leaderboard is not YAML: {exc}") from exc
    if not isinstance(runs, list):
        raise LayoutChanged("layout changed: the aider polyglot leaderboard is not a YAML list of runs")
    if not runs:
        raise EmptyPlaceholder("empty placeholder: the aider polyglot leaderboard lists no runs")
    for i, run in enumerate(runs):
        yield from _run(run, f"[{i}] {run.get('dirname', '?') if isinstance(run, dict) else '?'}", meta)


def _run(run: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(run if isinstance(run, dict) else {"value": run})
    if not isinstance(run, dict) or not run.get("model") or not run.get("dirname"):
        yield ParseFailure(locator, "a run needs 'model' and 'dirname'", payload)
        return
    results = []
    for key, (metric, unit, bounds) in CELLS.items():
        if run.get(key) is None:
            continue
        try:
            score = common.parse_number(run[key], unit)
        except CellError as exc:
            yield ParseFailure(f"{locator}.{key}", str(exc), payload)
            continue
        cases = run.get("test_cases")  # a count only when it is one (YAML may give text, a float, a bool)
        counted = isinstance(cases, int) and not isinstance(cases, bool) and cases > 0
        uncertainty = {"num_samples": cases} if key.startswith("pass_rate") and counted else None
        results.append(
            BOARD.result(
                meta.url,
                dataset_name="Aider Polyglot",
                metric_id=metric,
                metric_name=key,
                unit=unit,
                bounds=bounds,
                lower_is_better=metric in ("cost", "latency"),
                score=score,
                uncertainty=uncertainty,
                details={SOURCE_RECORD_ID: str(run["dirname"])},
                setup={
                    "prompting": str(run.get("edit_format") or "unknown"),
                    **{k: text for field, k in SETUP.items() if (text := _fact(run.get(field)))},
                },
            )
        )
    model = str(run["model"])
    facts = {("aider_version" if k == "versions" else k): _fact(run.get(k)) for k in FACTS}
    date = run.get("date")
    yield BOARD.record(
        meta,
        Model(id=model, name=model, details=facts, deployment_type="externally_managed"),
        results,
        (locator, payload),
        evaluation_timestamp=str(date) if date else None,
    )


def _fact(value: Any) -> str | None:
    """A run field as text: a whole number as written (``32000``, not ``32000.0``)."""
    if isinstance(value, int) and not isinstance(value, bool):
        return str(value)
    return common.fact_text(value)
