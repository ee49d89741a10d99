"""Model-card evaluation claims: huggingface_hub's parsed results, made into EEE result dicts.

A card states results two ways: the README front matter's ``model-index`` (``EvalResult``) and
the newer ``.eval_results/*.yaml`` files (``EvalResultEntry``). Both are parsed with
huggingface_hub's own functions, one result at a time so that one malformed result is refused
alone, and turned into :class:`Claim` values that read the same whichever form they came from.

What a number *means* is decided here, never guessed from its magnitude alone:

* **who ran it** — a result whose ``source`` URL belongs to a declared evaluator (the Open LLM
  Leaderboard) is that evaluator's number; anything else is the repository's self-report;
* **its scale** — through the metric registry: a native-scale metric keeps its unit; a 0-1
  metric is read as a percent or a proportion from the evaluator's declared scale, else from
  the card's own values on that scale (one value above 1 means the card writes percentages);
  a lone value in [0, 1] with nothing else to tell is ambiguous and refused with the reason.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from huggingface_hub import EvalResult, EvalResultEntry, parse_eval_result_entries
from huggingface_hub.repocard_data import model_index_to_eval_results

from evalhouse.curation.registry import Metric, load_registry
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure

_SHOTS_RE = re.compile(r"\s*\(\s*\d+\s*-?\s*shots?\s*\)\s*$", re.IGNORECASE)
SELF_REPORT = "self-report"
SOURCE_KEY = "model-cards"


@dataclass(frozen=True)
class Evaluator:
    """A declared third party whose numbers cards carry (matched on the result's source URL)."""

    name: str
    url_prefixes: tuple[str, ...]
    evaluated_by: str
    eval_library: str = "unknown"
    scale: str | None = None  # "percent" | "proportion": what the evaluator publishes
    metric: str | None = None  # a metric every one of its results is, whatever the card calls it
    benchmarks: Mapping[str, str] = field(default_factory=dict)  # casefolded raw name -> the evaluator's own

    def matches(self, url: str | None) -> bool:
        return bool(url) and any(str(url).startswith(p) for p in self.url_prefixes)

    def benchmark(self, raw: str) -> str:
        """The evaluator's own name of a benchmark its results carry (the raw name otherwise)."""
        return self.benchmarks.get(raw.casefold(), raw)


@dataclass(frozen=True)
class Claim:
    """One value a card states, with everything needed to say what it measures."""

    locator: str
    model_name: str | None
    benchmark: str  # raw benchmark name (dataset name without the shot count, + config)
    value: Any
    metric_type: str | None = None
    metric_name: str | None = None
    dataset_id: str | None = None
    shots: int | None = None
    source_name: str | None = None
    source_url: str | None = None
    details: Mapping[str, str] = field(default_factory=dict)
    setup: Mapping[str, str] = field(default_factory=dict)


def evaluators(raw: Sequence[Mapping[str, Any]]) -> tuple[Evaluator, ...]:
    return tuple(
        Evaluator(
            name=e["name"],
            url_prefixes=tuple(e["url_prefixes"]),
            evaluated_by=e["evaluated_by"],
            eval_library=e.get("eval_library", "unknown"),
            scale=e.get("scale"),
            metric=e.get("metric"),
            benchmarks={str(k).casefold(): str(v) for k, v in (e.get("benchmarks") or {}).items()},
        )
        for e in raw
    )


def evaluator_of(claim: Claim, known: Sequence[Evaluator]) -> Evaluator | None:
    return next((e for e in known if e.matches(claim.source_url)), None)


# -- reading the two forms -------------------------------------------------------------------


def _text(value: Any) -> str | None:
    return None if value is None else str(value)


def benchmark_name(dataset_name: str | None, dataset_type: str | None, config: str | None, generic: set[str]) -> str:
    """The raw benchmark name of a model-index result, most specific form the registry knows.

    ``AI2 Reasoning Challenge (25-Shot)`` with config ``ARC-Challenge`` is tried as the config
    (``ARC-Challenge``), then ``AI2 Reasoning Challenge / ARC-Challenge``, then the name and the
    dataset type; the shot count is setup, not name. When the registry knows none of them, the
    name keeps its config (``<name> / <config>``) so two question sets never share a raw name.
    """
    base = _SHOTS_RE.sub("", str(dataset_name or dataset_type or "")).strip() or str(dataset_type or "")
    specific = (
        config is not None and str(config).casefold() not in generic and str(config).casefold() != base.casefold()
    )
    candidates = [str(config), f"{base} / {config}"] if specific else []
    candidates += [base, str(dataset_type or "")]
    registry = load_registry()
    for name in candidates:
        if name and registry.benchmark_for(name, SOURCE_KEY) is not None:
            return name
    return f"{base} / {config}" if specific else base


def _shots(args: Any) -> int | None:
    if not isinstance(args, Mapping):
        return None
    n = args.get("num_few_shot")
    return n if isinstance(n, int) and not isinstance(n, bool) else None


def _from_eval_result(locator: str, model: str | None, ev: EvalResult, generic: set[str]) -> Claim:
    details = {
        "hf_task_type": ev.task_type,
        "hf_dataset_type": ev.dataset_type,
        "hf_dataset_name": ev.dataset_name,
        "hf_dataset_config": ev.dataset_config,
        "hf_dataset_split": ev.dataset_split,
        "hf_dataset_revision": ev.dataset_revision,
        "hf_metric_config": ev.metric_config,
        "verified": "true" if ev.verified else None,
        "hf_source_name": ev.source_name,
    }
    shots = _shots(ev.dataset_args)
    return Claim(
        locator=locator,
        model_name=model,
        benchmark=benchmark_name(ev.dataset_name, ev.dataset_type, ev.dataset_config, generic),
        value=ev.metric_value,
        metric_type=ev.metric_type,
        metric_name=ev.metric_name,
        dataset_id=ev.dataset_type,
        shots=shots,
        source_name=ev.source_name,
        source_url=ev.source_url,
        details={k: str(v) for k, v in details.items() if v is not None},
        setup={"shots": str(shots)} if shots is not None else {},
    )


def model_index_claims(model_index: Any, generic: set[str], prefix: str) -> Iterator[Claim | ParseFailure]:
    """Every metric of every ``model-index`` result, each parsed by huggingface_hub on its own."""
    if not isinstance(model_index, list):
        yield ParseFailure(prefix, f"model-index is a {type(model_index).__name__}, not a list of models")
        return
    for i, elem in enumerate(model_index):
        name = elem.get("name") if isinstance(elem, Mapping) else None
        results = elem.get("results") if isinstance(elem, Mapping) else None
        if not isinstance(results, list):
            yield ParseFailure(
                f"{prefix}[{i}]", "model-index entry has no list of results", common.row_payload({"entry": elem})
            )
            continue
        for j, result in enumerate(results):
            where = f"{prefix}[{i}].results[{j}]"
            try:
                _name, parsed = model_index_to_eval_results([{"name": name, "results": [result]}])
            except (KeyError, TypeError, ValueError, AttributeError) as exc:
                reason = f"not a valid model-index result for huggingface_hub ({type(exc).__name__}: {exc})"
                yield ParseFailure(where, reason, common.row_payload({"result": result}))
                continue
            for k, ev in enumerate(parsed):
                yield _from_eval_result(f"{where}.metrics[{k}]", _text(name), ev, generic)


def _from_entry(locator: str, entry: EvalResultEntry) -> Claim:
    task = entry.task_id if entry.task_id and entry.task_id != "default" else None
    details = {
        "hf_dataset_id": entry.dataset_id,
        "hf_task_id": entry.task_id,
        "hf_dataset_revision": entry.dataset_revision,
        "eval_date": _text(entry.date),
        "verify_token_present": "true" if entry.verify_token else None,
        "notes": entry.notes,
        "hf_source_name": entry.source_name,
        "hf_source_user": entry.source_user,
        "hf_source_org": entry.source_org,
    }
    # ``notes`` is the file's description of the setup ("With tools"): two files that differ only
    # in it are different cells, so it is part of the setup, verbatim.
    return Claim(
        locator=locator,
        model_name=None,
        benchmark=task or entry.dataset_id,
        value=entry.value,
        metric_type=None,
        metric_name=None,
        dataset_id=entry.dataset_id,
        source_name=entry.source_name,
        source_url=entry.source_url,
        details={k: str(v) for k, v in details.items() if v is not None},
        setup={"prompting": entry.notes} if entry.notes else {},
    )


def eval_results_claims(items: Any, prefix: str) -> Iterator[Claim | ParseFailure]:
    """``.eval_results`` entries (file contents, or the API's ``evalResults``), one at a time."""
    if not isinstance(items, list):
        yield ParseFailure(prefix, f"eval results are a {type(items).__name__}, not a list of entries")
        return
    for i, item in enumerate(items):
        where = f"{prefix}[{i}]"
        if isinstance(item, Mapping) and "error" in item:
            reason = f"the Hub refused eval results file {item.get('filename')!r}: {item['error']}"
            yield ParseFailure(where, reason, common.row_payload(item))
            continue
        try:
            entries = parse_eval_result_entries([item])
        except (KeyError, TypeError, ValueError, AttributeError) as exc:
            reason = f"not a valid .eval_results entry for huggingface_hub ({type(exc).__name__}: {exc})"
            yield ParseFailure(where, reason, common.row_payload({"entry": item}))
            continue
        for entry in entries:
            yield _from_entry(where, entry)


# -- meaning: metric, scale, result dict ------------------------------------------------------


@dataclass(frozen=True)
class Scaled:
    metric: Metric
    metric_id: str
    unit: str
    bounds: tuple[float | str, float | str]
    value: float
    why: str


def _metric(claim: Claim, evaluator: Evaluator | None) -> Metric | None:
    registry = load_registry()
    if evaluator is not None and evaluator.metric:
        return registry.metric_for(evaluator.metric)
    if claim.metric_type is None and claim.metric_name is None:
        return registry.metric_for("score")  # an .eval_results value is its benchmark's headline score
    return registry.metric_for(claim.metric_type, claim.metric_name)


def _bound(value: float | None, default: str) -> float | str:
    return default if value is None or not math.isfinite(value) else value


def scale_group(claims: Sequence[Claim], evaluator: Evaluator | None) -> Iterator[tuple[Claim, Scaled | ParseFailure]]:
    """Decide unit and bounds for each claim of one group (one model, one evaluator)."""
    numbers: dict[int, float] = {}
    metrics: dict[int, Metric | None] = {}
    failures: dict[int, ParseFailure] = {}
    for i, claim in enumerate(claims):
        metrics[i] = _metric(claim, evaluator)
        try:
            numbers[i] = common.parse_number(claim.value, "unknown")
        except CellError as exc:
            failures[i] = ParseFailure(claim.locator, f"{exc} ({claim.benchmark})", common.row_payload(_payload(claim)))
    bounded = [numbers[i] for i, m in metrics.items() if i in numbers and m is not None and m.unit == "proportion"]
    for i, claim in enumerate(claims):
        if i in failures:
            yield claim, failures[i]
            continue
        metric = metrics[i]
        if metric is None:
            raw = claim.metric_type or claim.metric_name
            reason = (
                f"metric {raw!r} of {claim.benchmark!r} is not in the metric registry, so its scale cannot be "
                "decided; add it (or an alias) to evalhouse/curation/registries/metrics.yaml"
            )
            yield claim, ParseFailure(claim.locator, reason, common.row_payload(_payload(claim)))
            continue
        yield claim, _scaled(claim, metric, numbers[i], bounded, evaluator)


def _scaled(claim: Claim, metric: Metric, value: float, bounded: list[float], evaluator: Evaluator | None):
    metric_id = metric.id
    if metric.unit != "proportion":
        lo, hi = metric.bounds
        bounds = (_bound(lo, "-Infinity"), _bound(hi, "Infinity"))
        return Scaled(metric, metric_id, metric.unit, bounds, value, f"{metric.id} is on its own scale ({metric.unit})")
    if evaluator is not None and evaluator.scale:
        unit, why = evaluator.scale, f"{evaluator.name} publishes {evaluator.scale} values"
    elif any(v > 1 for v in bounded):
        unit, why = "percent", "the card writes this scale as percentages (a value above 1)"
    elif len(bounded) >= 2:
        unit, why = "proportion", f"all {len(bounded)} values the card gives on a 0-1 metric lie in [0, 1]"
    else:
        reason = (
            f"ambiguous scale: {claim.benchmark!r} {claim.metric_type or metric.id} = {value!r} could be a proportion "
            f"({value!r}) or a percent ({value / 100!r}); the card gives no other value on that scale and its "
            "source declares none"
        )
        return ParseFailure(claim.locator, reason, common.row_payload(_payload(claim)))
    bounds = (0.0, 100.0) if unit == "percent" else (0.0, 1.0)
    return Scaled(metric, metric_id, unit, bounds, value, why)


def _payload(claim: Claim) -> dict[str, Any]:
    return {
        "benchmark": claim.benchmark,
        "metric_type": claim.metric_type,
        "metric_name": claim.metric_name,
        "value": claim.value,
        "source_url": claim.source_url,
        **claim.details,
    }


def result_dict(
    source_key: str, claim: Claim, scaled: Scaled, url: str, evaluator: Evaluator | None = None
) -> dict[str, Any]:
    """The EEE ``evaluation_results`` entry of one scaled claim (named as its evaluator names it)."""
    return common.score_result(
        source_key=source_key,
        dataset_name=evaluator.benchmark(claim.benchmark) if evaluator is not None else claim.benchmark,
        url=claim.source_url or url,
        metric_id=scaled.metric_id,
        metric_name=claim.metric_type or claim.metric_name or scaled.metric_id,
        metric_kind=scaled.metric.kind,
        unit=scaled.unit,
        lower_is_better=scaled.metric.lower_is_better,
        bounds=scaled.bounds,
        score=scaled.value,
        details={**claim.details, "evalhouse.scale_decision": scaled.why},
        setup=claim.setup,
    )
