"""AlpacaEval 2.0 leaderboard: the CSV the alpaca_eval repository publishes for its default judge.

``src/alpaca_eval/leaderboards/data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv``
is the leaderboard the AlpacaEval site shows: an unnamed first column (the model), ``win_rate``
and ``standard_error`` (percent preferred over the baseline, GPT-4 Turbo's outputs, by the
weighted GPT-4 Turbo annotator), ``n_wins``, ``n_wins_base``, ``n_draws``, ``n_total`` (805
instructions), ``discrete_win_rate``, ``mode``, ``avg_length`` (characters), and
``length_controlled_winrate`` with ``lc_standard_error`` (empty for older rows).

Three cells per model: the length-controlled win rate (the headline), the raw win rate and the
discrete win rate, each with its standard error where given and ``n_total`` as the sample size;
the win/draw counts and the average length are kept as the cells' details. Who measured depends
on ``mode``: ``verified`` and ``minimal`` rows were computed by the AlpacaEval team (benchmark
creator), ``community`` rows were contributed (community), ``dev`` rows are unlabelled (unknown).
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
from evalhouse.ingest.sources._payloads import csv_table
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = (
    "https://raw.githubusercontent.com/tatsu-lab/alpaca_eval/main/src/alpaca_eval/leaderboards/"
    "data_AlpacaEval_2/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"
)
DATASET = "AlpacaEval 2.0"
ANNOTATOR = "weighted_alpaca_eval_gpt4_turbo"
#: column -> (metric id, standard-error column)
CELLS: Mapping[str, tuple[str, str | None]] = {
    "length_controlled_winrate": ("win_rate.length_controlled", "lc_standard_error"),
    "win_rate": ("win_rate", "standard_error"),
    "discrete_win_rate": ("win_rate.discrete", None),
}
DETAILS = ("n_wins", "n_wins_base", "n_draws", "avg_length")
MODES: Mapping[str, str] = {
    "verified": "benchmark_creator",
    "minimal": "benchmark_creator",
    "community": "community",
    "dev": "unknown",
}
#: the annotator config and the judge model it calls (GPT-4 Turbo, also the baseline)
SETUP = {"annotator": ANNOTATOR, "grader_model": "gpt-4-1106-preview"}

SOURCE = SourceSpec(
    key="alpaca-eval",
    name="AlpacaEval 2.0 leaderboard",
    kind="leaderboard",
    tier=2,
    organisation="Stanford Tatsu Lab (AlpacaEval)",
    homepage="https://tatsu-lab.github.io/alpaca_eval/",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="alpaca-eval/1",
    collection="alpaca-eval",
    description=(
        "AlpacaEval 2.0: length-controlled, raw and discrete win rates against GPT-4 Turbo judged by "
        "GPT-4 Turbo, per model, from the repository's published leaderboard CSV."
    ),
    licence="Apache-2.0 (tatsu-lab/alpaca_eval)",
    verified_on=Recording(
        repository="tatsu-lab/alpaca_eval (the published leaderboard CSV)",
        commit="cd543a149df89434d8a54582c0151c0b945c3d20",
        recorded="2024-12-27",
        licence="Apache-2.0",
        files=("fixtures:alpaca-eval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv",),
        replay=((URL, "fixtures:alpaca-eval/weighted_alpaca_eval_gpt4_turbo_leaderboard.csv"),),
    ),
)
BOARDS = {role: Board(SOURCE, role, "alpaca_eval") for role in set(MODES.values())}


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboard", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    header, rows = csv_table(body, "the AlpacaEval leaderboard CSV")
    missing = [c for c in ("", *CELLS, "n_total", "mode") if c not in header]
    if missing:
        raise LayoutChanged(f"layout changed: the AlpacaEval leaderboard CSV has no column(s) {missing}")
    if not rows:
        raise EmptyPlaceholder("empty placeholder: the AlpacaEval leaderboard CSV has no rows")
    for i, row in enumerate(rows, start=2):
        yield from _row(row, f"line {i} {row.get('') or '?'}", meta)


def _row(row: Mapping[str, Any], locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.lazy_payload(row)
    name = (row.get("") or "").strip()
    mode = (row.get("mode") or "").strip()
    if not name or mode not in MODES:
        yield ParseFailure(locator, f"a row needs a model name and a mode in {sorted(MODES)} (got {mode!r})", payload())
        return
    try:
        n_total = int(common.parse_number(row["n_total"], "count"))
    except CellError as exc:
        yield ParseFailure(f"{locator}.n_total", str(exc), payload())
        n_total = 0
    details = {SOURCE_RECORD_ID: name, **{k: row[k].strip() for k in DETAILS if (row.get(k) or "").strip()}}
    results = []
    for column, (metric, stderr_column) in CELLS.items():
        text = (row.get(column) or "").strip()
        if not text:
            continue
        try:
            score = common.parse_number(text, "percent")
            stderr_text = (row.get(stderr_column) or "").strip() if stderr_column else ""
            stderr = common.parse_number(stderr_text, "percent") if stderr_text else None
        except CellError as exc:
            yield ParseFailure(f"{locator}.{column}", str(exc), payload())
            continue
        uncertainty: dict[str, Any] = {}
        if stderr is not None:
            uncertainty.update(common.standard_error(stderr))
        if n_total > 0:
            uncertainty["num_samples"] = n_total
        results.append(
            BOARDS[MODES[mode]].result(
                meta.url,
                dataset_name=DATASET,
                result_id=f"{name}.{column}",
                metric_id=metric,
                metric_name=column,
                unit="percent",
                bounds=(0.0, 100.0),
                score=score,
                uncertainty=uncertainty or None,
                details=details,
                setup=SETUP,
            )
        )
    yield BOARDS[MODES[mode]].record(
        meta,
        Model(id=name, name=name, details={"alpaca_eval_mode": mode}),
        results,
        (locator, payload),
    )
