"""The curation registries: metrics, units and benchmarks as versioned data files.

They are loaded and validated once (``load_registry()``), and their versions are recorded with
every ingest run and snapshot, so a canonical value can always be traced to the registry that
produced it. Editing a YAML file without bumping its ``version`` still changes the content hash
in :attr:`Registry.version`, so a silent edit is visible too.
"""

from __future__ import annotations

import hashlib
import re
from functools import cache
from importlib import resources
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from evalhouse.errors import InputError

FILES = ("metrics.yaml", "units.yaml", "benchmarks.yaml", "developers.yaml", "evidence_kinds.yaml")
DENOMINATOR_RE = re.compile(r"^(?:x\s*/\s*|out of\s+|/\s*)(\d+(?:\.\d+)?)$")


class RegistryError(InputError):
    """A registry file is malformed or contradicts another one."""


def normalise_alias(text: str) -> str:
    """Case- and whitespace-insensitive key: ``" GPQA  Diamond "`` → ``"gpqa diamond"``."""
    return " ".join(str(text).replace("\u00a0", " ").split()).casefold()


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class Unit(_Strict):
    id: str
    native: bool = False
    aliases: tuple[str, ...] = ()


class Conversion(_Strict):
    from_: str = Field(alias="from")
    to: str
    factor: float


class Metric(_Strict):
    id: str
    kind: str
    unit: str
    bounds: tuple[float | None, float | None]
    lower_is_better: bool
    description: str | None = None
    aliases: tuple[str, ...] = ()


class Family(_Strict):
    id: str
    name: str
    description: str | None = None


class Benchmark(_Strict):
    id: str
    name: str
    family: str | None = None
    version: str | None = None
    derived_from: str | None = None
    modality: Literal["text", "image", "audio", "video", "multimodal", "agentic"] = "text"
    language: str = "en"
    subjects: tuple[str, ...] = ()
    is_composite: bool = False
    description: str | None = None
    paraphrase: str | None = None
    aliases: tuple[str, ...] = ()
    source_aliases: dict[str, tuple[str, ...]] = Field(default_factory=dict)
    canonical_metric: str | None = None

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.]*", value):
            raise ValueError(f"benchmark id {value!r} must match [a-z0-9][a-z0-9_.]*")
        return value


class Developer(_Strict):
    id: str
    name: str
    aliases: tuple[str, ...] = ()


class EvidenceKind(_Strict):
    kind: str
    rank: int
    lower_bound: bool
    description: str


class _EvidenceFile(_Strict):
    version: int
    kinds: tuple[EvidenceKind, ...]


class NamePattern(_Strict):
    pattern: str
    developer: str


class _DevelopersFile(_Strict):
    version: int
    developers: tuple[Developer, ...]
    name_patterns: tuple[NamePattern, ...] = ()


class _MetricsFile(_Strict):
    version: int
    metrics: tuple[Metric, ...]


class _UnitsFile(_Strict):
    version: int
    units: tuple[Unit, ...]
    conversions: tuple[Conversion, ...]


class _BenchmarksFile(_Strict):
    version: int
    families: tuple[Family, ...] = ()
    benchmarks: tuple[Benchmark, ...]


class Registry(BaseModel):
    """All three registries, cross-checked, with alias indexes built once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    metrics: dict[str, Metric]
    units: dict[str, Unit]
    conversions: dict[tuple[str, str], float]
    families: dict[str, Family]
    benchmarks: dict[str, Benchmark]
    versions: dict[str, int]
    content_sha256: str
    metric_aliases: dict[str, str]
    unit_aliases: dict[str, str]
    benchmark_aliases: dict[tuple[str, str], str]  # (source_key or "*", alias) -> id
    developers: dict[str, Developer]
    developer_aliases: dict[str, str]
    developer_patterns: tuple[tuple[re.Pattern[str], str], ...]
    evidence_kinds: dict[str, EvidenceKind]

    @property
    def version(self) -> str:
        parts = "+".join(f"{k}@{v}" for k, v in sorted(self.versions.items()))
        return f"{parts}#{self.content_sha256[:12]}"

    # -- lookups ----------------------------------------------------------------------------

    def metric_for(self, *candidates: str | None) -> Metric | None:
        """The first candidate that names a metric, directly, by alias or as ``kind.qualifier``."""
        for cand in candidates:
            if not cand:
                continue
            key = normalise_alias(cand)
            metric_id = self.metric_aliases.get(key)
            if metric_id is None and "." in key:
                base, _, qualifier = key.partition(".")
                parent = self.metric_aliases.get(base)
                if parent is not None and qualifier:
                    return self.metrics[parent].model_copy(update={"id": f"{parent}.{qualifier}"})
            if metric_id is not None:
                return self.metrics[metric_id]
        return None

    def unit_for(self, text: str | None) -> str | None:
        """Canonical unit id for a unit string; explicit denominators become ``per:N``."""
        if text is None:
            return None
        key = normalise_alias(text)
        if key in self.unit_aliases:
            return self.unit_aliases[key]
        match = DENOMINATOR_RE.match(key)
        if match:
            denominator = float(match[1])
            return "percent" if denominator == 100 else f"per:{match[1]}"
        return None

    def convert(self, value: float, from_unit: str, to_unit: str) -> float | None:
        """``value`` in ``to_unit``, or None when no declared conversion exists."""
        if from_unit == to_unit:
            return value
        if from_unit.startswith("per:") and to_unit == "proportion":
            return value / float(from_unit[4:])
        if from_unit.startswith("per:") and to_unit == "percent":
            return value / float(from_unit[4:]) * 100
        factor = self.conversions.get((from_unit, to_unit))
        return None if factor is None else scale(value, factor)

    def developer_for(self, name: str | None) -> Developer | None:
        if not name:
            return None
        dev_id = self.developer_aliases.get(normalise_alias(name))
        return None if dev_id is None else self.developers[dev_id]

    def developer_from_model_name(self, name: str | None) -> Developer | None:
        """The developer a model's name points to (``registries/developers.yaml`` name patterns)."""
        if not name:
            return None
        text = normalise_alias(name)
        for pattern, dev_id in self.developer_patterns:
            if pattern.search(text):
                return self.developers[dev_id]
        return None

    def benchmark_for(self, name: str | None, source_key: str | None = None) -> Benchmark | None:
        if not name:
            return None
        key = normalise_alias(name)
        for scope in (source_key or "*", "*"):
            bench_id = self.benchmark_aliases.get((scope, key))
            if bench_id is not None:
                return self.benchmarks[bench_id]
        return None


def scale(value: float, factor: float) -> float:
    """``value * factor``, dividing when the factor is 1/n so 87.5 percent is exactly 0.875."""
    inverse = 1 / factor if factor else 0
    if factor and abs(inverse - round(inverse)) < 1e-9 and abs(inverse) > 1:
        return value / round(inverse)
    return value * factor


def _read(name: str) -> tuple[dict[str, Any], bytes]:
    raw = resources.files("evalhouse.curation.registries").joinpath(name).read_bytes()
    try:
        data = yaml.safe_load(raw)
    except yaml.YAMLError as exc:
        raise RegistryError(f"registry file {name} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RegistryError(f"registry file {name} must hold a mapping")
    return data, raw


def build_registry(
    metrics: dict[str, Any],
    units: dict[str, Any],
    benchmarks: dict[str, Any],
    developers: dict[str, Any],
    evidence: dict[str, Any],
    *,
    content: bytes = b"",
) -> Registry:
    """Validate the documents against each other and index their aliases."""
    try:
        mf = _MetricsFile.model_validate(metrics)
        uf = _UnitsFile.model_validate(units)
        bf = _BenchmarksFile.model_validate(benchmarks)
        df = _DevelopersFile.model_validate(developers)
        ef = _EvidenceFile.model_validate(evidence)
    except ValueError as exc:
        raise RegistryError(f"invalid registry: {exc}") from exc
    problems: list[str] = []

    unit_ids = [u.id for u in uf.units]
    unit_aliases: dict[str, str] = {}
    for unit in uf.units:
        for alias in (unit.id, *unit.aliases):
            key = normalise_alias(alias)
            if unit_aliases.setdefault(key, unit.id) != unit.id:
                problems.append(f"unit alias {alias!r} names both {unit_aliases[key]} and {unit.id}")
    conversions = {}
    for conv in uf.conversions:
        for u in (conv.from_, conv.to):
            if u not in unit_ids:
                problems.append(f"conversion uses unknown unit {u!r}")
        conversions[(conv.from_, conv.to)] = conv.factor

    metric_ids = [m.id for m in mf.metrics]
    metric_aliases: dict[str, str] = {}
    for metric in mf.metrics:
        if metric.unit not in unit_ids:
            problems.append(f"metric {metric.id} uses unknown unit {metric.unit!r}")
        lo, hi = metric.bounds
        if lo is not None and hi is not None and lo > hi:
            problems.append(f"metric {metric.id} has bounds {metric.bounds} with min > max")
        for alias in (metric.id, *metric.aliases):
            key = normalise_alias(alias)
            if metric_aliases.setdefault(key, metric.id) != metric.id:
                problems.append(f"metric alias {alias!r} names both {metric_aliases[key]} and {metric.id}")
    if len(set(metric_ids)) != len(metric_ids):
        problems.append("duplicate metric ids")

    family_ids = {f.id for f in bf.families}
    bench_ids = [b.id for b in bf.benchmarks]
    if len(set(bench_ids)) != len(bench_ids):
        dupes = sorted({b for b in bench_ids if bench_ids.count(b) > 1})
        problems.append(f"duplicate benchmark ids {dupes}")
    bench_aliases: dict[tuple[str, str], str] = {}
    for bench in bf.benchmarks:
        if bench.family is not None and bench.family not in family_ids:
            problems.append(f"benchmark {bench.id} names unknown family {bench.family!r}")
        if bench.derived_from is not None and bench.derived_from not in bench_ids:
            problems.append(f"benchmark {bench.id} is derived from unknown {bench.derived_from!r}")
        if bench.canonical_metric is not None and bench.canonical_metric.split(".")[0] not in metric_ids:
            problems.append(f"benchmark {bench.id} overrides to unknown metric {bench.canonical_metric!r}")
        scoped = [("*", a) for a in (bench.id, bench.name, *bench.aliases)]
        scoped += [(src, a) for src, names in bench.source_aliases.items() for a in names]
        for scope, alias in scoped:
            key = (scope, normalise_alias(alias))
            if bench_aliases.setdefault(key, bench.id) != bench.id:
                problems.append(
                    f"benchmark alias {alias!r} (scope {scope}) names both {bench_aliases[key]} and {bench.id}"
                )
    developer_aliases: dict[str, str] = {}
    for dev in df.developers:
        for alias in (dev.id, dev.name, *dev.aliases):
            key = normalise_alias(alias)
            if developer_aliases.setdefault(key, dev.id) != dev.id:
                problems.append(f"developer alias {alias!r} names both {developer_aliases[key]} and {dev.id}")
    developer_patterns = []
    for np_ in df.name_patterns:
        if np_.developer not in developer_aliases.values():
            problems.append(f"name pattern {np_.pattern!r} names unknown developer {np_.developer!r}")
            continue
        try:
            # anchored at the start of the name or of its last path part ("meta-llama/...",
            # "chutes/GLM-4.5"), so "opt" never fires inside "adopt" nor "Claude" inside
            # "Agent S2 w/ Claude 3.7" (an agent is not its model's developer)
            compiled = re.compile(rf"(?:^|/)(?:{np_.pattern})")
        except re.error as exc:
            problems.append(f"name pattern {np_.pattern!r} is not a regular expression: {exc}")
            continue
        developer_patterns.append((compiled, np_.developer))
    if problems:
        raise RegistryError("invalid registry:\n  " + "\n  ".join(problems))
    return Registry(
        metrics={m.id: m for m in mf.metrics},
        units={u.id: u for u in uf.units},
        conversions=conversions,
        families={f.id: f for f in bf.families},
        benchmarks={b.id: b for b in bf.benchmarks},
        evidence_kinds={k.kind: k for k in ef.kinds},
        versions={
            "evidence_kinds": ef.version,
            "metrics": mf.version,
            "units": uf.version,
            "benchmarks": bf.version,
            "developers": df.version,
        },
        content_sha256=hashlib.sha256(content).hexdigest(),
        metric_aliases=metric_aliases,
        unit_aliases=unit_aliases,
        benchmark_aliases=bench_aliases,
        developers={d.id: d for d in df.developers},
        developer_aliases=developer_aliases,
        developer_patterns=tuple(developer_patterns),
    )


@cache
def load_registry() -> Registry:
    """The packaged registries, validated (cached: they are read-only data)."""
    docs = {}
    content = b""
    for name in FILES:
        docs[name], raw = _read(name)
        content += hashlib.sha256(raw).digest()
    return build_registry(
        docs["metrics.yaml"],
        docs["units.yaml"],
        docs["benchmarks.yaml"],
        docs["developers.yaml"],
        docs["evidence_kinds.yaml"],
        content=content,
    )
