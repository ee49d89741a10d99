"""Canonicalisation of one EEE evaluation result: benchmark, subset, metric, unit, direction, bounds.

Each score keeps its raw value and raw unit and gains a canonical value, unit and direction.
Nothing is clamped and nothing is guessed from magnitudes: a proportion of 1.7, a percent of 250
or a negative accuracy is refused with the reason, and so is a result whose benchmark or metric
cannot be named.

**Benchmark.** The result's ``evaluation_name`` is tried first, then its dataset name; a name that
narrows what matched (an MMLU subject, a language, a GAIA level) becomes the cell's *subset*.
Records from an EEE datastore describe their own benchmarks, so for those only aliases the registry
scopes to that collection apply; anything else becomes a *provisional* benchmark scoped to the
collection (``helm_lite.mmlu``), with the registry benchmark its name matches kept as a candidate
link, never merged. A generic word ("Math", "Safety") never matches a registry benchmark globally.
A source that publishes its own benchmark list (``declared``: LiveBench's categories, HELM's group
headers) is matched through the registry as usual; a result whose benchmark the registry does not
know but the source declares (:data:`~evalhouse.schema.records.DECLARED_BENCHMARK`) becomes such a
provisional benchmark too, described by the source's own words, instead of being refused.

**Metric.** Named by ``metric_id``, ``metric_kind`` or ``metric_name``; failing those, by the
``evaluation_description`` ("Accuracy on IFEval", "EM on Anatomy", "Fraction of tasks solved") or
the ``evaluation_name`` ("Mean win rate"); failing those, a result bounded [0, 1] is a generic
``score`` (proportion). Only a result none of these names is refused, with the texts tried.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any

from evalhouse.common.naming import slug
from evalhouse.curation.benchmark_links import Link
from evalhouse.curation.cells import subset_of
from evalhouse.curation.registry import Benchmark, Metric, Registry, scale
from evalhouse.schema.records import DECLARED_BENCHMARK

EPSILON = 1e-9
#: A value the source writes for "not computed" (HELM writes -1.0 under bounds [0, 1]).
PLACEHOLDER = -1.0


@dataclass(frozen=True)
class CanonicalScore:
    benchmark_id: str
    benchmark_raw: str
    subset: str | None
    metric_id: str
    metric_raw: str | None
    raw_value: float
    raw_unit: str | None
    value: float
    unit: str
    lower_is_better: bool
    factor: float
    steps: tuple[str, ...]
    provisional_benchmark: Benchmark | None = None
    provisional_metric: Metric | None = None
    candidate_benchmark: str | None = None  # a registry benchmark a provisional one may be


@dataclass(frozen=True)
class Rejection:
    reason: str
    benchmark_raw: str | None = None
    metric_raw: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def _bound(value: Any) -> float | None:
    if value is None:
        return None
    if value == "Infinity":
        return math.inf
    if value == "-Infinity":
        return -math.inf
    return float(value)


@dataclass(frozen=True)
class _Group:
    """Everything about a result that does not depend on its value, resolved once per group.

    A refresh has 10^4-10^5 results but only a few thousand distinct (source, names, metric, unit,
    bounds) combinations, so registry lookups, alias normalisation and unit resolution run per
    combination; per result only a multiply and two comparisons remain.
    """

    benchmark: Benchmark | None = None
    subset: str | None = None
    metric: Metric | None = None
    raw_unit: str | None = None
    factor: float = 1.0
    declared_bounds: tuple[float | None, float | None] = (None, None)
    steps: tuple[str, ...] = ()
    provisional_benchmark: Benchmark | None = None
    provisional_metric: Metric | None = None
    candidate_benchmark: str | None = None
    linked_from: str | None = None  # the namespaced benchmark benchmark_links.yaml linked to this one
    stated_metric: str | None = None  # the metric as the record names it, when a link renamed it
    rejection: str | None = None


@dataclass(frozen=True)
class _Names:
    """What a result calls its benchmark and metric."""

    evaluation_name: str | None
    dataset_name: str | None
    description: str | None
    declared: str | None = None  # what the source says of a benchmark it declares

    @classmethod
    def of(cls, result: dict[str, Any]) -> _Names:
        data = result.get("source_data") or {}
        return cls(
            result.get("evaluation_name"),
            data.get("dataset_name"),
            (result.get("metric_config") or {}).get("evaluation_description"),
            _declared(data),
        )

    @property
    def raw(self) -> str:
        return self.dataset_name or self.evaluation_name or ""


def _declared(source_data: dict[str, Any]) -> str | None:
    details = source_data.get("additional_details")
    text = details.get(DECLARED_BENCHMARK) if isinstance(details, dict) else None
    return text if isinstance(text, str) and text.strip() else None


def group_key(result: dict[str, Any]) -> tuple[Any, ...]:
    """What decides a result's canonical group (everything but its value), as a hashable key."""
    config = result.get("metric_config") or {}
    data = result.get("source_data") or {}
    return (
        result.get("evaluation_name"),
        data.get("dataset_name"),
        _declared(data),
        config.get("evaluation_description"),
        config.get("metric_id"),
        config.get("metric_kind"),
        config.get("metric_name"),
        config.get("metric_unit"),
        config.get("min_score"),
        config.get("max_score"),
        config.get("lower_is_better"),
    )


@dataclass(frozen=True)
class Scaling:
    """``scale(value, factor)`` decided once for a factor: divide by an integer or multiply."""

    factor: float
    divisor: int | None

    @classmethod
    def of(cls, factor: float) -> Scaling:
        inverse = 1 / factor if factor else 0
        if factor and abs(inverse - round(inverse)) < 1e-9 and abs(inverse) > 1:
            return cls(factor, round(inverse))
        return cls(factor, None)

    def __call__(self, value: float) -> float:
        return value / self.divisor if self.divisor is not None else value * self.factor


@dataclass(frozen=True)
class CanonicalGroup:
    """A canonical group resolved for bulk loading: what every result of it shares, and the checks
    its values must pass, precomputed so a value costs a scale and four comparisons.

    :meth:`value` accepts exactly the values :meth:`Canonicaliser.canonicalise` accepts and gives
    the same canonical value; for one it refuses, ``canonicalise`` words the reason.
    """

    rejection: str | None
    benchmark_raw: str
    metric_raw: str | None
    benchmark_id: str = ""
    subset: str | None = None
    metric_id: str = ""
    raw_unit: str | None = None
    unit: str = ""
    lower_is_better: bool = False
    steps: tuple[str, ...] = ()
    scaling: Scaling = Scaling(1.0, None)
    declared: tuple[float, float] = (-math.inf, math.inf)  # the record's bounds, widened by EPSILON
    bounds: tuple[float, float] = (-math.inf, math.inf)  # the metric's, widened by EPSILON
    provisional_benchmark: Benchmark | None = None
    provisional_metric: Metric | None = None
    candidate_benchmark: str | None = None
    linked_from: str | None = None

    def value(self, raw_value: float) -> float | None:
        """The canonical value of ``raw_value``, or None when it is refused."""
        if self.rejection is not None or not self.declared[0] <= raw_value <= self.declared[1]:
            return None
        value = self.scaling(raw_value)
        return value if self.bounds[0] <= value <= self.bounds[1] else None


def _score_of(result: dict[str, Any]) -> float | None:
    """The result's score as a float, or None when it has none readable (then
    :meth:`Canonicaliser.canonicalise` decides what to say of it, as it always did)."""
    try:
        return float(result["score_details"]["score"])
    except (KeyError, TypeError, ValueError):
        return None


def _widened(lo: float | None, hi: float | None) -> tuple[float, float]:
    return (-math.inf if lo is None else lo - EPSILON, math.inf if hi is None else hi + EPSILON)


class Canonicaliser:
    """Maps results through a :class:`Registry`; ``allow_provisional`` for self-describing imports,
    ``declared`` for a source that publishes its own benchmark list (see the module doc).

    With ``allow_provisional`` only the registry's aliases scoped to the collection name a
    benchmark (an EEE collection describes its own); ``global_aliases`` lets the global aliases
    name it too, a provisional benchmark being the fallback (a harness log names a task by the
    harness's id, ``arc_easy``, which the registry documents as the benchmark it is).
    """

    def __init__(
        self,
        registry: Registry,
        *,
        allow_provisional: bool = False,
        global_aliases: bool = False,
        declared: bool = False,
    ) -> None:
        self.registry = registry
        self.allow_provisional = allow_provisional
        self.global_aliases = global_aliases
        self.declared = declared
        self._groups: dict[tuple[Any, ...], _Group] = {}
        self._bulk: dict[tuple[Any, ...], CanonicalGroup] = {}

    def group(self, result: dict[str, Any], *, source_key: str, collection: str | None = None) -> CanonicalGroup:
        """The result's :class:`CanonicalGroup` (resolved once per distinct group of a source)."""
        key = (source_key, collection, *group_key(result))
        found = self._bulk.get(key)
        if found is None:
            found = self._bulk[key] = self._bulk_group(result, source_key, collection)
        return found

    def _bulk_group(self, result: dict[str, Any], source_key: str, collection: str | None) -> CanonicalGroup:
        config = result.get("metric_config") or {}
        names = _Names.of(result)
        group = self._resolve(names, config, source_key, collection)
        metric_raw = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        metric = group.metric
        if group.rejection is not None or metric is None or group.benchmark is None:
            return CanonicalGroup(group.rejection or "unresolved", names.raw, metric_raw)
        return CanonicalGroup(
            rejection=None,
            benchmark_raw=names.raw,
            metric_raw=metric_raw or group.stated_metric or metric.id,
            benchmark_id=group.benchmark.id,
            subset=group.subset,
            metric_id=metric.id,
            raw_unit=group.raw_unit,
            unit=metric.unit,
            lower_is_better=metric.lower_is_better,
            steps=group.steps,
            scaling=Scaling.of(group.factor),
            declared=_widened(*group.declared_bounds),
            bounds=_widened(*metric.bounds),
            provisional_benchmark=group.provisional_benchmark,
            provisional_metric=group.provisional_metric,
            candidate_benchmark=group.candidate_benchmark,
            linked_from=group.linked_from,
        )

    def rejection(self, result: dict[str, Any], *, source_key: str, collection: str | None = None) -> Rejection | None:
        """Why :meth:`canonicalise` would refuse ``result``, or None when it would accept it: the
        bulk path (:meth:`group`, then :meth:`CanonicalGroup.value`) for an accepted value, which
        builds no :class:`CanonicalScore`; ``canonicalise`` words a refusal."""
        group = self.group(result, source_key=source_key, collection=collection)
        score = _score_of(result)
        if group.rejection is None and score is not None and group.value(score) is not None:
            return None
        outcome = self.canonicalise(result, source_key=source_key, collection=collection)
        return outcome if isinstance(outcome, Rejection) else None

    def canonicalise(
        self, result: dict[str, Any], *, source_key: str, collection: str | None = None
    ) -> CanonicalScore | Rejection:
        config = result.get("metric_config") or {}
        names = _Names.of(result)
        key = (source_key, collection, *group_key(result))
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = self._resolve(names, config, source_key, collection)
        metric_raw = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        if group.rejection is not None:
            return Rejection(group.rejection, names.raw, metric_raw)
        raw_value = float(result["score_details"]["score"])
        refused = self._refuse_value(raw_value, group, config)
        if refused is not None:
            return Rejection(refused, names.raw, metric_raw, {"value": raw_value})
        metric = group.metric
        assert metric is not None and group.benchmark is not None
        value = scale(raw_value, group.factor)
        lo, hi = metric.bounds
        if (lo is not None and value < lo - EPSILON) or (hi is not None and value > hi + EPSILON):
            return Rejection(
                f"impossible value: {raw_value!r} {group.raw_unit} is {value!r} {metric.unit}, outside "
                f"{metric.id}'s bounds [{lo}, {hi}]; not clamped",
                names.raw,
                metric_raw,
                {"value": raw_value, "canonical": value},
            )
        return CanonicalScore(
            benchmark_id=group.benchmark.id,
            benchmark_raw=names.raw,
            subset=group.subset,
            metric_id=metric.id,
            metric_raw=metric_raw or group.stated_metric or metric.id,
            raw_value=raw_value,
            raw_unit=group.raw_unit,
            value=value,
            unit=metric.unit,
            lower_is_better=metric.lower_is_better,
            factor=group.factor,
            steps=group.steps,
            provisional_benchmark=group.provisional_benchmark,
            provisional_metric=group.provisional_metric,
            candidate_benchmark=group.candidate_benchmark,
        )

    @staticmethod
    def _refuse_value(raw_value: float, group: _Group, config: dict[str, Any]) -> str | None:
        lo_decl, hi_decl = group.declared_bounds
        below = lo_decl is not None and raw_value < lo_decl - EPSILON
        above = hi_decl is not None and raw_value > hi_decl + EPSILON
        if below and raw_value == PLACEHOLDER and lo_decl is not None and lo_decl >= 0:
            return (
                f"placeholder {raw_value!r}: the source writes -1.0 for 'not computed' (bounds "
                f"[{config.get('min_score')}, {config.get('max_score')}]); no value was measured"
            )
        if below or above:
            return (
                f"value {raw_value!r} lies outside the record's own bounds [{config.get('min_score')}, "
                f"{config.get('max_score')}]"
            )
        return None

    # -- resolution, once per group -------------------------------------------------------------

    def _resolve(self, names: _Names, config: dict[str, Any], source_key: str, collection: str | None) -> _Group:
        found = self._benchmark(names, source_key, collection)
        if found is None:
            return _Group(
                rejection=(
                    f"unmapped benchmark {names.raw!r} from source {source_key}: add it (or an alias) "
                    "to evalhouse/curation/registries/benchmarks.yaml"
                )
            )
        bench, subset, provisional, candidate, step, link = found
        steps = [step]
        metric, provisional_metric, metric_step = self._metric(names, config, collection or source_key)
        if metric is None:
            return _Group(rejection=metric_step)
        stated = None
        if link is not None and metric.id in link.metrics:
            meant = self.registry.metrics[link.metrics[metric.id]]
            metric_step += f"; {metric.id} -> {meant.id} (benchmark_links.yaml: {link.benchmark} states {link.metric})"
            stated, metric, provisional_metric = metric.id, meant, None
        steps.append(metric_step)
        declared_lib = config.get("lower_is_better")
        if declared_lib is not None and bool(declared_lib) != metric.lower_is_better:
            return _Group(
                rejection=(
                    f"direction conflict: the record says lower_is_better={declared_lib} but metric "
                    f"{metric.id} is {'lower' if metric.lower_is_better else 'higher'}-is-better"
                )
            )
        raw_unit, why = self._raw_unit(config, metric)
        if raw_unit is None:
            return _Group(rejection=why)
        steps.append(why)
        factor = self.registry.convert(1.0, raw_unit, metric.unit)
        if factor is None:
            return _Group(
                rejection=(
                    f"no conversion from unit {raw_unit!r} to {metric.unit!r} for metric {metric.id}; "
                    "native-scale metrics are never rescaled"
                )
            )
        if raw_unit != metric.unit:
            steps.append(f"{raw_unit} -> {metric.unit}: x{factor:g}")
        lo, hi = metric.bounds
        steps.append(
            f"within bounds [{lo}, {hi}] {metric.unit}; {'lower' if metric.lower_is_better else 'higher'} is better"
        )
        return _Group(
            benchmark=bench,
            subset=subset,
            metric=metric,
            raw_unit=raw_unit,
            factor=factor,
            declared_bounds=(_bound(config.get("min_score")), _bound(config.get("max_score"))),
            steps=tuple(steps),
            provisional_benchmark=provisional,
            provisional_metric=provisional_metric,
            candidate_benchmark=candidate,
            linked_from=link.benchmark if link is not None else None,
            stated_metric=stated,
        )

    def _benchmark(
        self, names: _Names, source_key: str, collection: str | None
    ) -> tuple[Benchmark, str | None, Benchmark | None, str | None, str, Link | None] | None:
        """``(benchmark, subset, provisional?, candidate, step, link)``; None when nothing names it.
        A namespaced benchmark that ``benchmark_links.yaml`` says is a registry benchmark is that
        benchmark, the link named in its step."""
        scoped_only = self.allow_provisional and not self.global_aliases
        for name in (names.evaluation_name, names.dataset_name):
            bench = self.registry.benchmark_for(name, source_key, scoped_only=scoped_only)
            if bench is not None:
                subset = None if name == names.evaluation_name else subset_of(names.evaluation_name, name, bench.name)
                return bench, subset, None, None, _bench_step(name, bench.id, subset, provisional=False), None
        declared = self.declared and names.declared is not None
        if not (self.allow_provisional or declared) or not names.raw:
            return None
        scope = collection or source_key
        base = names.dataset_name or names.evaluation_name or ""
        description = (
            f"Declared by source {source_key}, not in the registry: {names.declared}"
            if declared
            else f"Provisional: named {base!r} in EEE collection {scope!r}; not in the registry."
        )
        provisional = Benchmark(
            id=f"{slug(scope, sep='_', default='unnamed')}.{slug(base, sep='_', default='unnamed')}",
            name=base,
            description=description,
        )
        subset = subset_of(names.evaluation_name, base)
        links = self.registry.benchmark_links
        link = links.same(provisional.id) if links is not None else None
        if link is not None:
            target = self.registry.benchmarks[link.target]
            step = _bench_step(base, provisional.id, subset, provisional=True).replace(" (provisional)", "")
            step += f"; linked to registry benchmark {target.id} by benchmark_links.yaml: {link.why()}"
            return target, subset, None, None, step, link
        candidate = self.registry.global_benchmark_for(base)
        if subset is None and candidate is None:
            candidate = self.registry.global_benchmark_for(names.evaluation_name)
        step = _bench_step(base, provisional.id, subset, provisional=True)
        if candidate is not None:
            step += f"; its name matches registry benchmark {candidate.id} (a candidate link, not merged)"
        return provisional, subset, provisional, candidate.id if candidate else None, step, None

    def _metric(self, names: _Names, config: dict[str, Any], scope: str) -> tuple[Metric | None, Metric | None, str]:
        """``(metric, provisional metric, step or rejection reason)``."""
        named = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        metric = self.registry.metric_for(config.get("metric_id"), config.get("metric_kind"), config.get("metric_name"))
        if metric is not None:
            return metric, None, f"metric {named!r} -> {metric.id} ({metric.kind}, {metric.unit})"
        if named and self.allow_provisional:
            provisional = self._provisional_metric(config, scope)
            if provisional is not None:
                return provisional, provisional, f"metric {named!r} -> {provisional.id} (provisional)"
        if named:
            return (
                None,
                None,
                (
                    f"unmapped metric {named!r} (kind {config.get('metric_kind')!r}): add an alias to "
                    "evalhouse/curation/registries/metrics.yaml"
                ),
            )
        return self._metric_from_text(names, config)

    def _metric_from_text(self, names: _Names, config: dict[str, Any]) -> tuple[Metric | None, None, str]:
        """No metric named: read it from the description or the evaluation name, else the bounds."""
        described = self.registry.metric_from_description(names.description)
        if described is not None:
            return described, None, f"metric not named; description {names.description!r} -> {described.id}"
        by_name = self.registry.metric_for(names.evaluation_name)
        if by_name is not None:
            return by_name, None, f"metric not named; evaluation name {names.evaluation_name!r} -> {by_name.id}"
        lo, hi = _bound(config.get("min_score")), _bound(config.get("max_score"))
        if lo == 0 and hi == 1 and config.get("score_type", "continuous") == "continuous":
            score = self.registry.metrics["score"]
            return score, None, "metric not named; a continuous result bounded [0, 1] -> score (proportion)"
        tried = [t for t in (names.description, names.evaluation_name) if t]
        return (
            None,
            None,
            (
                f"no metric named: metric_id, metric_name and metric_kind are empty and neither "
                f"{' nor '.join(repr(t) for t in tried) or 'any text'} names a registry metric "
                f"(bounds [{config.get('min_score')}, {config.get('max_score')}])"
            ),
        )

    def _provisional_metric(self, config: dict[str, Any], scope: str) -> Metric | None:
        unit = self.registry.unit_for(config.get("metric_unit"))
        if unit is None or unit.startswith("per:") or config.get("lower_is_better") is None:
            return None
        name = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        lo, hi = _bound(config.get("min_score")), _bound(config.get("max_score"))

        def finite(b: float | None) -> float | None:
            return b if b is not None and math.isfinite(b) else None

        return Metric(
            id=f"{slug(scope, sep='_', default='unnamed')}.{slug(str(name), sep='_', default='unnamed')}",
            kind=config.get("metric_kind") or "provisional",
            unit=unit,
            bounds=(finite(lo), finite(hi)),
            lower_is_better=bool(config["lower_is_better"]),
            description=f"Provisional: declared by EEE collection {scope!r}.",
        )

    def _raw_unit(self, config: dict[str, Any], metric: Metric) -> tuple[str | None, str]:
        declared = config.get("metric_unit")
        if declared:
            unit = self.registry.unit_for(declared)
            if unit is None:
                return None, f"unknown unit {declared!r}: add it to evalhouse/curation/registries/units.yaml"
            return unit, f"unit {declared!r} -> {unit}"
        # No unit: the record's declared bounds (metadata, not the value's magnitude) decide.
        lo, hi = _bound(config.get("min_score")), _bound(config.get("max_score"))
        if lo == 0 and hi == 1:
            return "proportion", "unit not declared; bounds [0, 1] -> proportion"
        if lo == 0 and hi == 100:
            return "percent", "unit not declared; bounds [0, 100] -> percent"
        if self.registry.units[metric.unit].native:
            return metric.unit, f"unit not declared; {metric.id} is native-scale ({metric.unit})"
        return None, (
            f"unit not declared and bounds [{config.get('min_score')}, {config.get('max_score')}] do not "
            f"say whether {metric.id} is a proportion or a percent; refusing to guess from the value"
        )


def _bench_step(name: str, bench_id: str, subset: str | None, *, provisional: bool) -> str:
    kind = " (provisional)" if provisional else ""
    narrowed = f", subset {subset!r}" if subset else ""
    return f"benchmark {name!r} -> {bench_id}{kind}{narrowed}"
