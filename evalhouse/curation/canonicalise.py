"""Canonicalisation of one EEE evaluation result: benchmark, metric, unit, direction, bounds.

Each score keeps its raw value and raw unit and gains a canonical value, unit and direction.
Nothing is clamped and nothing is guessed from magnitudes: a proportion of 1.7, a percent of 250
or a negative accuracy is refused with the reason, and so is a result whose benchmark or metric
the registry does not know. Records from an EEE datastore describe their own metric (unit,
bounds, direction), so for those an unknown benchmark or metric becomes a *provisional* registry
entry scoped to its collection instead of a refusal; every provisional entry is written to
``curation_decision`` so a curator can promote or alias it.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

from evalhouse.curation.registry import Benchmark, Metric, Registry, normalise_alias, scale

#: ``generation_config.additional_details`` keys that change what a score measures. Two scores
#: that differ in one of these are different cells; the harness is *not* one of them (a harness
#: difference between two sources is a source disagreement, resolved by the conflict policy).
SETUP_KEYS = (
    "shots",
    "cot",
    "agent",
    "scaffold",
    "prompting",
    "tools",
    "subset",
    "benchmark_version",
)
EPSILON = 1e-9


@dataclass(frozen=True)
class CanonicalScore:
    benchmark_id: str
    benchmark_raw: str
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


@dataclass(frozen=True)
class Rejection:
    reason: str
    benchmark_raw: str | None = None
    metric_raw: str | None = None
    details: dict[str, Any] = field(default_factory=dict)


def _slug(text: str) -> str:
    return re.sub(r"[^a-z0-9]+", "_", normalise_alias(text)).strip("_") or "unnamed"


def _bound(value: Any) -> float | None:
    if value is None:
        return None
    if value == "Infinity":
        return math.inf
    if value == "-Infinity":
        return -math.inf
    return float(value)


def benchmark_names(result: dict[str, Any]) -> list[str]:
    """Names a result may be known by, most specific first."""
    names = [result.get("source_data", {}).get("dataset_name"), result.get("evaluation_name")]
    return [n for n in names if n]


def setup_of(result: dict[str, Any]) -> dict[str, str]:
    details = (result.get("generation_config") or {}).get("additional_details") or {}
    return {k: str(details[k]) for k in SETUP_KEYS if details.get(k) not in (None, "")}


def setup_key(setup: dict[str, str]) -> str:
    return ";".join(f"{k}={setup[k]}" for k in sorted(setup))


@dataclass(frozen=True)
class _Group:
    """Everything about a result that does not depend on its value, resolved once per group.

    A nightly refresh has 10^4-10^5 results but only a few hundred distinct (source, benchmark
    name, metric, unit, bounds) combinations, so the registry lookups, alias normalisation and
    unit resolution run per combination; per result only a multiply and two comparisons remain.
    """

    benchmark: Benchmark | None = None
    metric: Metric | None = None
    raw_unit: str | None = None
    factor: float = 1.0
    declared_bounds: tuple[float | None, float | None] = (None, None)
    steps: tuple[str, ...] = ()
    provisional_benchmark: Benchmark | None = None
    provisional_metric: Metric | None = None
    rejection: str | None = None


class Canonicaliser:
    """Maps results through a :class:`Registry`; ``allow_provisional`` for self-describing imports."""

    def __init__(self, registry: Registry, *, allow_provisional: bool = False) -> None:
        self.registry = registry
        self.allow_provisional = allow_provisional
        self._groups: dict[tuple[Any, ...], _Group] = {}

    def canonicalise(
        self, result: dict[str, Any], *, source_key: str, collection: str | None = None
    ) -> CanonicalScore | Rejection:
        source_data = result.get("source_data") or {}
        config = result.get("metric_config") or {}
        names = tuple(n for n in (source_data.get("dataset_name"), result.get("evaluation_name")) if n)
        key = (
            source_key,
            collection,
            names,
            config.get("metric_id"),
            config.get("metric_kind"),
            config.get("metric_name"),
            config.get("metric_unit"),
            config.get("min_score"),
            config.get("max_score"),
            config.get("lower_is_better"),
        )
        group = self._groups.get(key)
        if group is None:
            group = self._groups[key] = self._resolve(names, config, source_key, collection)
        benchmark_raw = names[0] if names else ""
        metric_raw = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        if group.rejection is not None:
            return Rejection(group.rejection, benchmark_raw, metric_raw)
        raw_value = float(result["score_details"]["score"])
        lo_decl, hi_decl = group.declared_bounds
        if (lo_decl is not None and raw_value < lo_decl - EPSILON) or (
            hi_decl is not None and raw_value > hi_decl + EPSILON
        ):
            return Rejection(
                f"value {raw_value!r} lies outside the record's own bounds [{config.get('min_score')}, "
                f"{config.get('max_score')}]",
                benchmark_raw,
                metric_raw,
                {"value": raw_value},
            )
        metric = group.metric
        value = scale(raw_value, group.factor)
        lo, hi = metric.bounds
        if (lo is not None and value < lo - EPSILON) or (hi is not None and value > hi + EPSILON):
            return Rejection(
                f"impossible value: {raw_value!r} {group.raw_unit} is {value!r} {metric.unit}, outside "
                f"{metric.id}'s bounds [{lo}, {hi}]; not clamped",
                benchmark_raw,
                metric_raw,
                {"value": raw_value, "canonical": value},
            )
        return CanonicalScore(
            benchmark_id=group.benchmark.id,
            benchmark_raw=benchmark_raw,
            metric_id=metric.id,
            metric_raw=metric_raw,
            raw_value=raw_value,
            raw_unit=group.raw_unit,
            value=value,
            unit=metric.unit,
            lower_is_better=metric.lower_is_better,
            factor=group.factor,
            steps=group.steps,
            provisional_benchmark=group.provisional_benchmark,
            provisional_metric=group.provisional_metric,
        )

    def _resolve(
        self, names: tuple[str, ...], config: dict[str, Any], source_key: str, collection: str | None
    ) -> _Group:
        benchmark_raw = names[0] if names else ""
        metric_raw = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        bench, provisional_bench = self._benchmark(list(names), source_key, collection)
        if bench is None:
            return _Group(
                rejection=(
                    f"unmapped benchmark {benchmark_raw!r} from source {source_key}: add it (or an alias) "
                    "to evalhouse/curation/registries/benchmarks.yaml"
                )
            )
        steps = [f"benchmark {benchmark_raw!r} -> {bench.id}" + (" (provisional)" if provisional_bench else "")]
        metric = self.registry.metric_for(config.get("metric_id"), config.get("metric_kind"), config.get("metric_name"))
        provisional_metric = None
        if metric is None and self.allow_provisional:
            metric = provisional_metric = self._provisional_metric(config, collection or source_key)
        if metric is None:
            return _Group(
                rejection=(
                    f"unmapped metric {metric_raw!r} (kind {config.get('metric_kind')!r}) from source "
                    f"{source_key}: add an alias to evalhouse/curation/registries/metrics.yaml"
                )
            )
        steps.append(f"metric {metric_raw!r} -> {metric.id} ({metric.kind}, {metric.unit})")
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
            metric=metric,
            raw_unit=raw_unit,
            factor=factor,
            declared_bounds=(_bound(config.get("min_score")), _bound(config.get("max_score"))),
            steps=tuple(steps),
            provisional_benchmark=provisional_bench,
            provisional_metric=provisional_metric,
        )

    # -- pieces -----------------------------------------------------------------------------

    def _benchmark(
        self, names: list[str], source_key: str, collection: str | None
    ) -> tuple[Benchmark | None, Benchmark | None]:
        for name in names:
            bench = self.registry.benchmark_for(name, source_key)
            if bench is not None:
                return bench, None
        if not self.allow_provisional or not names:
            return None, None
        scope = collection or source_key
        provisional = Benchmark(
            id=f"{_slug(scope)}.{_slug(names[0])}",
            name=names[0],
            description=f"Provisional: named {names[0]!r} in EEE collection {scope!r}; not in the registry.",
        )
        return provisional, provisional

    def _provisional_metric(self, config: dict[str, Any], scope: str) -> Metric | None:
        unit = self.registry.unit_for(config.get("metric_unit"))
        if unit is None or unit.startswith("per:") or config.get("lower_is_better") is None:
            return None
        name = config.get("metric_id") or config.get("metric_name") or config.get("metric_kind")
        if not name:
            return None
        lo, hi = _bound(config.get("min_score")), _bound(config.get("max_score"))
        finite = lambda b: b if b is not None and math.isfinite(b) else None  # noqa: E731
        return Metric(
            id=f"{_slug(scope)}.{_slug(name)}",
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
                return (
                    None,
                    f"unknown unit {declared!r}: add it to evalhouse/curation/registries/units.yaml",
                )
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
