"""What the harness-log parsers share to turn a log's aggregate into EEE records and scores.

A harness log (an lm-eval results file, an Inspect log, a HELM run directory) holds the harness's
own aggregate per task: metric values, their standard errors, how many samples they cover, and
the setup (shots, epochs, split). Each task of one model becomes one EEE record, built with the
same board helpers as every other source (:mod:`._board`, :mod:`._common`), whose
``evaluation_id`` is the harness run's ``eval_run_id``: the scores of a record join the log's item
rows (``item_response.eval_run_id``) when the log kept its samples.

Who ran a harness is not written in its log, so ``evaluated_by`` is ``unknown``; the records are
``evaluation_run`` records (a harness's own output). A metric whose unit and bounds are not
declared in ``harness_metrics.yaml`` is a quarantined cell naming that file, never a guess.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, replace
from functools import cache
from typing import Any

from evalhouse.ingest.source import FetchMeta, SourceSpec
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.schema.records import ParsedRecord, ParseFailure

METRICS_FILE = "evalhouse/ingest/sources/harness_metrics.yaml"


@dataclass(frozen=True)
class MetricSpec:
    """A harness metric as declared: the registry metric it names, its unit, bounds and direction."""

    metric_id: str
    unit: str
    bounds: tuple[float | str, float | str]
    lower_is_better: bool


@cache
def _declared() -> dict[str, dict[str, Any]]:
    return common.load_mapping("harness_metrics.yaml")


def metric_spec(source_key: str, name: str) -> MetricSpec | None:
    """The declared unit and bounds of ``name`` as ``source_key``'s harness writes it, else None."""
    entry = (_declared().get(source_key) or {}).get(name)
    if entry is None:
        return None
    lo, hi = entry["bounds"]
    return MetricSpec(
        metric_id=entry.get("metric") or name,
        unit=entry["unit"],
        bounds=(common.bound(lo), common.bound(hi)),
        lower_is_better=bool(entry.get("lower_is_better", False)),
    )


def run_facts(source_key: str) -> frozenset[str]:
    """Names ``source_key``'s harness reports that describe the run, not score the model."""
    return frozenset(_declared().get(f"{source_key}-facts") or ())


def undeclared(source_key: str, name: str) -> str:
    """The quarantine reason of a metric ``harness_metrics.yaml`` does not declare."""
    return (
        f"undeclared metric {name!r}: its unit and bounds are not in {METRICS_FILE} ({source_key}); "
        "add them there and reparse, the value is never read by its magnitude"
    )


def number(value: Any) -> float | None:
    """A finite number the log wrote (a JSON number, not a boolean or a string such as ``"N/A"``)."""
    try:
        return common.parse_number(value, "as written") if isinstance(value, int | float) else None
    except common.CellError:
        return None


def uncertainty(
    *, stderr: Any = None, n: Any = None, std: Any = None, stderr_method: str | None = None
) -> dict[str, Any] | None:
    """EEE ``uncertainty`` from what the log gives (a missing or non-numeric part is left out)."""
    out: dict[str, Any] = {}
    se = number(stderr)
    if se is not None:
        out["standard_error"] = {"value": se, **({"method": stderr_method} if stderr_method else {})}
    sd = number(std)
    if sd is not None:
        out["standard_deviation"] = sd
    if isinstance(n, int) and not isinstance(n, bool) and n >= 0:
        out["num_samples"] = n
    return out or None


def dataset_url(path: Any, fallback: str) -> str:
    """A Hugging Face dataset's page for an ``org/name`` path, else ``fallback`` (the harness's
    homepage): a log's local file paths never enter a record, so one log read from two folders
    is one record."""
    text = str(path or "")
    parts = text.split("/")
    if len(parts) == 2 and all(parts) and not text.startswith((".", "~")) and ":" not in text:
        return f"https://huggingface.co/datasets/{text}"
    return fallback


def setup_text(value: Any) -> str | None:
    """A setup value as a string (JSON booleans lower-case, whole numbers without ``.0``)."""
    if value is None or (isinstance(value, str | dict | list) and not value):
        return None
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float | str):
        return str(value)
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False, default=str)


@dataclass(frozen=True)
class Task:
    """One task of one model as a harness logged it: what its record is made of."""

    eval_run_id: str
    model: Model
    locator: str
    results: list[dict[str, Any]]
    evaluation_timestamp: str | None = None
    library_version: str | None = None
    samples_sha256: str | None = None


def board(spec: SourceSpec, library: str) -> Board:
    return Board(spec, "unknown", library, source_type="evaluation_run")


def record(b: Board, meta: FetchMeta, task: Task, payload: str) -> ParsedRecord | ParseFailure:
    """The task's validated EEE record, its ``evaluation_id`` the harness run's id."""
    built = b.record(
        meta,
        task.model,
        task.results,
        (task.locator, payload),
        evaluation_timestamp=task.evaluation_timestamp,
        eval_library_version=task.library_version,
    )
    if isinstance(built, ParseFailure):
        return built
    built.record["evaluation_id"] = task.eval_run_id  # not part of the fingerprint: no re-check needed
    return replace(built, samples_sha256=task.samples_sha256)
