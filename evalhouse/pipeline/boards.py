"""What a source's board held at one run, read again from the run's stored payloads, and how two
boards differ: models and benchmarks that came or went, values that moved.

A board is every value the run's payloads state, keyed by what the source row measured: the model
as the source names it, the benchmark and evaluation, the metric and its parameters, the setup, the
reference the row cites and the source's own row id (the warehouse's source row key, in the
source's own words rather than canonical ids). Nothing is read from the warehouse's scores: those
are deduplicated by fingerprint, so a value seen on two nights is one row, and a reparse replaces
them. The raw store keeps every payload's bytes, so both boards are parsed by the current parser
and a parser change between two nights is never reported as a change of the board.

A key a board holds several times (Epoch cites one paper's row for one model twice) keeps each
value: the values are sorted and paired in order, and what is left over on one side counts as
new or vanished.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC
from functools import cache
from typing import TYPE_CHECKING, Any

from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule
from evalhouse.pipeline.source_run import parse_payload
from evalhouse.schema.records import ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, SOURCE_RECORD_ID, ParsedRecord, ParseItem
from evalhouse.warehouse import history
from evalhouse.warehouse.raw.store import RawStoreError

if TYPE_CHECKING:
    import duckdb

    from evalhouse.curation.setup_policy import SetupPolicy
    from evalhouse.warehouse.raw.store import RawStore

#: A value moved when ``|new - old| > tolerance × max(|old|, |new|)``: 0.1% of its magnitude.
DEFAULT_TOLERANCE = 0.001


@dataclass(frozen=True, order=True)
class Cell:
    """What one value measured, in the source's words (the parts after ``benchmark`` tell apart
    two values of one model on one benchmark)."""

    model: str
    benchmark: str
    evaluation: str
    metric: str
    setup: str = ""
    rest: tuple[str, ...] = ()  # metric parameters, cited reference and URL, row id, result id

    def as_dict(self) -> dict[str, Any]:
        from evalhouse.curation.cells import subset_of  # noqa: PLC0415 - the registries load only when a board is read

        return {
            "model": self.model,
            "benchmark": self.benchmark,
            # the evaluation's name where it narrows the benchmark (a subject, a language), else None
            "evaluation": self.evaluation if subset_of(self.evaluation, self.benchmark) else None,
            "metric": self.metric,
            "setup": self.setup or None,
        }


@dataclass
class Board:
    """Every value a run's payloads state, and the models they name."""

    models: dict[str, str | None] = field(default_factory=dict)  # source model id -> its name
    values: dict[tuple[Cell, int], float] = field(default_factory=dict)  # (cell, n-th value of it) -> value
    payloads: int = 0
    unreadable: list[str] = field(default_factory=list)  # "<url>: <why>" of payloads that no longer parse

    @property
    def benchmarks(self) -> set[str]:
        return {cell.benchmark for cell, _ in self.values}

    def values_of(self, model: str) -> int:
        return sum(1 for cell, _ in self.values if cell.model == model)


def _text(value: Any) -> str:
    return "" if value is None else str(value)


def _score(result: Mapping[str, Any]) -> float | None:
    details = result.get("score_details")
    score = details.get("score") if isinstance(details, Mapping) else None
    if isinstance(score, bool) or not isinstance(score, int | float) or not math.isfinite(score):
        return None
    return float(score)


def cells_of(record: Mapping[str, Any]) -> Iterable[tuple[Cell, float]]:
    """``(cell, value)`` of every numeric result of one EEE record."""
    from evalhouse.curation.cells import metric_params_of, setup_of  # noqa: PLC0415 - the registries load only when a board is read

    info = record.get("model_info") or {}
    model = _text(info.get("id") or info.get("name"))
    cited = (record.get("source_metadata") or {}).get("additional_details") or {}
    harness = (record.get("eval_library") or {}).get("name")
    for result in record.get("evaluation_results") or []:
        if not isinstance(result, dict) or (value := _score(result)) is None:
            continue
        config = result.get("metric_config") or {}
        evaluation = _text(result.get("evaluation_name"))
        benchmark = _text((result.get("source_data") or {}).get("dataset_name")) or evaluation
        inner = (result.get("score_details") or {}).get("details") or {}
        rest = (
            metric_params_of(result)[1],
            _text(cited.get(ORIGINAL_SOURCE)),
            _text(cited.get(ORIGINAL_SOURCE_URL)),
            _text(inner.get(SOURCE_RECORD_ID)) if isinstance(inner, dict) else "",
            _text(result.get("evaluation_result_id")),
        )
        metric = _text(config.get("metric_id") or config.get("metric_name") or config.get("metric_unit"))
        setup = setup_of(result, harness, _policy())  # the whole setup: a board's row, not a cell
        yield (
            Cell(model, benchmark, evaluation, metric, ";".join(f"{k}={setup[k]}" for k in sorted(setup)), rest),
            value,
        )


@cache
def _policy() -> SetupPolicy:
    from evalhouse.curation.setup_policy import SetupPolicy, packaged_doc  # noqa: PLC0415 - with the board's first read

    return SetupPolicy.from_doc(packaged_doc())


def board_from(records: Iterable[Mapping[str, Any]]) -> Board:
    """The board of ``records`` (EEE aggregate records as dicts)."""
    board = Board()
    found: dict[Cell, list[float]] = defaultdict(list)
    for record in records:
        info = record.get("model_info") or {}
        model = _text(info.get("id") or info.get("name"))
        if model:
            board.models.setdefault(model, info.get("name"))
        for cell, value in cells_of(record):
            found[cell].append(value)
    for cell, values in found.items():
        for n, value in enumerate(sorted(values)):
            board.values[(cell, n)] = value
    return board


def parsed_board(pages: Iterable[tuple[str, list[ParseItem], Exception | None]]) -> Board:
    """The board of payloads a run parsed just now, as ``(url, items, parse error)``: what
    :func:`run_board` reads again from the run's stored payloads, without parsing them again."""
    records: list[Mapping[str, Any]] = []
    unreadable: list[str] = []
    payloads = 0
    for url, items, error in pages:
        payloads += 1
        if error is not None:
            unreadable.append(f"{url}: {error}")
        records += [i.record for i in items if isinstance(i, ParsedRecord)]
    board = board_from(records)
    board.payloads, board.unreadable = payloads, unreadable
    return board


def run_board(con: duckdb.DuckDBPyConnection, store: RawStore, module: SourceModule, run_id: str) -> Board:
    """The board of one run: every payload the run stored, parsed again with ``module``'s parser."""
    return parsed_board(_reparsed(con, store, module, run_id))


def _reparsed(
    con: duckdb.DuckDBPyConnection, store: RawStore, module: SourceModule, run_id: str
) -> Iterator[tuple[str, list[ParseItem], Exception | None]]:
    """``(url, items, why not)`` of each payload the run stored, parsed again (one at a time)."""
    key = module.SOURCE.key
    for sha, url, retrieved_at, content_type, label in history.run_payloads(con, run_id):
        meta = FetchMeta(key, url, sha, retrieved_at.replace(tzinfo=UTC), content_type, label)
        try:
            yield url, parse_payload(module, store.get(sha), meta, sha), None
        except (ParseError, RawStoreError) as exc:
            yield url, [], exc


@dataclass(frozen=True)
class BoardReader:
    """Where a report reads a run's board: from ``known`` (by run id: a refresh's own boards,
    parsed from the same stored payloads moments before) or else from the run's stored payloads."""

    store: RawStore
    known: Mapping[str, Board] = field(default_factory=dict)

    def board(self, con: duckdb.DuckDBPyConnection, module: SourceModule, run_id: str) -> Board:
        known = self.known.get(run_id)
        return known if known is not None else run_board(con, self.store, module, run_id)


def moved(old: float, new: float, tolerance: float) -> bool:
    """Whether ``old → new`` is a move beyond ``tolerance`` (relative to the larger magnitude)."""
    return abs(new - old) > tolerance * max(abs(old), abs(new))


def _model(board: Board, model: str, *, values: bool = False) -> dict[str, Any]:
    shown: dict[str, Any] = {"id": model, "name": board.models.get(model)}
    if values:
        shown["values"] = board.values_of(model)
    return shown


def compare(before: Board, after: Board, tolerance: float = DEFAULT_TOLERANCE) -> dict[str, Any]:
    """What changed from ``before`` to ``after``: models, benchmarks, and the values of the
    models on both boards (new, vanished, moved beyond ``tolerance``)."""
    new_models = sorted(set(after.models) - set(before.models))
    gone_models = sorted(set(before.models) - set(after.models))
    both = set(before.models) & set(after.models)
    moves = []
    for key in sorted(set(before.values) & set(after.values)):
        old, new = before.values[key], after.values[key]
        if moved(old, new, tolerance):
            moves.append({**key[0].as_dict(), "old": old, "new": new, "change": new - old})
    kept = lambda board: {k for k in board.values if k[0].model in both}  # noqa: E731
    return {
        "models": {
            "before": len(before.models),
            "after": len(after.models),
            "new": [_model(after, m, values=True) for m in new_models],
            "vanished": [_model(before, m, values=True) for m in gone_models],
        },
        "benchmarks": {
            "before": len(before.benchmarks),
            "after": len(after.benchmarks),
            "new": sorted(after.benchmarks - before.benchmarks),
            "vanished": sorted(before.benchmarks - after.benchmarks),
        },
        "values": {
            "before": len(before.values),
            "after": len(after.values),
            "compared": len(set(before.values) & set(after.values)),
            "moved": moves,
            # values of models on both boards that one board has and the other has not
            "new": len(kept(after) - set(before.values)),
            "vanished": len(kept(before) - set(after.values)),
        },
    }
