"""The curation registries: metrics, units, benchmarks, developers, evidence kinds and model-name rules.

They are loaded and validated once (``load_registry()``), and their versions are recorded with
every ingest run and snapshot, so a canonical value can always be traced to the registry that
produced it. Editing a YAML file without bumping its ``version`` still changes the content hash
in :attr:`Registry.version`, so a silent edit is visible too.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Mapping
from functools import cache
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from evalhouse.common.yamls import load_package_yaml
from evalhouse.curation.benchmark_links import FILE as LINKS_FILE
from evalhouse.curation.benchmark_links import BenchmarkLinks
from evalhouse.curation.benchmark_links import packaged_doc as packaged_links
from evalhouse.curation.name_rules import NameRules, rules_from
from evalhouse.curation.registry_files import (
    Benchmark,
    BenchmarksFile,
    Developer,
    DevelopersFile,
    EvidenceFile,
    EvidenceKind,
    Family,
    Metric,
    MetricsFile,
    Unit,
    UnitsFile,
)
from evalhouse.curation.registry_version import FILES, content_hash, read_file, version_text
from evalhouse.curation.setup_policy import FILE as SETUP_POLICY_FILE
from evalhouse.curation.setup_policy import SetupPolicy
from evalhouse.curation.setup_policy import packaged_doc as packaged_setup_policy
from evalhouse.errors import InputError

DENOMINATOR_RE = re.compile(r"^(?:x\s*/\s*|out of\s+|/\s*)(\d+(?:\.\d+)?)$")


class RegistryError(InputError):
    """A registry file is malformed or contradicts another one."""


def normalise_alias(text: str) -> str:
    """Case- and whitespace-insensitive key: ``" GPQA  Diamond "`` → ``"gpqa diamond"``."""
    return " ".join(str(text).replace("\u00a0", " ").split()).casefold()


class Registry(BaseModel):
    """All three registries, cross-checked, with alias indexes built once."""

    model_config = ConfigDict(frozen=True, arbitrary_types_allowed=True)

    metrics: dict[str, Metric]
    units: dict[str, Unit]
    conversions: dict[tuple[str, str], float]
    families: dict[str, Family]
    benchmarks: dict[str, Benchmark]
    versions: dict[str, int | str]
    content_sha256: str
    metric_aliases: dict[str, str]
    unit_aliases: dict[str, str]
    benchmark_aliases: dict[tuple[str, str], str]  # (source_key or "*", alias) -> id
    developers: dict[str, Developer]
    developer_aliases: dict[str, str]
    developer_patterns: tuple[tuple[re.Pattern[str], str, bool], ...]  # (pattern, developer, documented)
    any_developer_pattern: re.Pattern[str] | None = None  # matches where any of them does (see _any_name_pattern)
    documented_patterns: tuple[tuple[re.Pattern[str], str], ...] = ()  # the documented ones: (pattern, developer)
    reuploads: dict[str, str] = Field(default_factory=dict)  # lower-cased repo id -> the weights' developer
    metric_descriptions: tuple[tuple[re.Pattern[str], str], ...] = ()
    generic_benchmark_names: frozenset[str] = frozenset()
    evidence_kinds: dict[str, EvidenceKind]
    model_tokens: dict[str, Any] = Field(default_factory=dict)  # model_tokens.yaml as read
    name_rules: NameRules | None = None  # ... compiled (curation.names)
    setup_policy: SetupPolicy | None = None  # setup_policy.yaml: which setup fields define a cell
    benchmark_links: BenchmarkLinks | None = None  # benchmark_links.yaml: namespaced benchmarks linked or apart

    def __hash__(self) -> int:  # one loaded registry is one object: caches key on its identity
        return id(self)

    def __eq__(self, other: object) -> bool:
        return self is other

    @property
    def version(self) -> str:
        return version_text(self.versions, self.content_sha256)

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
        if self.any_developer_pattern is not None and self.any_developer_pattern.search(text) is None:
            return None  # no pattern matches (most names): one search, not one per pattern
        for pattern, dev_id, _ in self.developer_patterns:
            if pattern.search(text):
                return self.developers[dev_id]
        return None

    def documented_developer(self, name: str | None) -> Developer | None:
        """The developer the registry documents as a model's author, whatever a source says."""
        if not name:
            return None
        text = normalise_alias(name)
        for pattern, dev_id in self.documented_patterns:
            if pattern.search(text):
                return self.developers[dev_id]
        return None

    def benchmark_for(
        self, name: str | None, source_key: str | None = None, *, scoped_only: bool = False
    ) -> Benchmark | None:
        """The benchmark ``name`` denotes: a source-scoped alias first, then a global one.

        A generic word ("Math", "Safety") never matches globally, and ``scoped_only`` (records that
        describe their own benchmarks: an EEE datastore collection) skips global aliases entirely:
        the registry merges only what it documents, per source, to be the same test.
        """
        if not name:
            return None
        key = normalise_alias(name)
        bench_id = self.benchmark_aliases.get((source_key, key)) if source_key else None
        if bench_id is None and not scoped_only and key not in self.generic_benchmark_names:
            bench_id = self.benchmark_aliases.get(("*", key))
        return None if bench_id is None else self.benchmarks[bench_id]

    def global_benchmark_for(self, name: str | None) -> Benchmark | None:
        """The registry benchmark a name would match globally (a candidate link, never an identity)."""
        key = normalise_alias(name or "")
        bench_id = self.benchmark_aliases.get(("*", key))
        return None if bench_id is None or key in self.generic_benchmark_names else self.benchmarks[bench_id]

    def metric_from_description(self, text: str | None) -> Metric | None:
        """The metric a record's ``evaluation_description`` names ("Accuracy on IFEval" → accuracy)."""
        if not text:
            return None
        lowered = normalise_alias(text)
        head = lowered.split(" on ", 1)[0]
        for cand in (head, lowered):
            metric_id = self.metric_aliases.get(cand)
            if metric_id is not None:
                return self.metrics[metric_id]
        for pattern, metric_id in self.metric_descriptions:
            if pattern.search(lowered):
                return self.metrics[metric_id]
        return None


def scale(value: float, factor: float) -> float:
    """``value * factor``, dividing when the factor is 1/n so 87.5 percent is exactly 0.875."""
    inverse = 1 / factor if factor else 0
    if factor and abs(inverse - round(inverse)) < 1e-9 and abs(inverse) > 1:
        return value / round(inverse)
    return value * factor


def _read(name: str) -> tuple[dict[str, Any], bytes]:
    raw = read_file(name)
    try:
        data = load_package_yaml(raw)
    except yaml.YAMLError as exc:
        raise RegistryError(f"registry file {name} is not valid YAML: {exc}") from exc
    if not isinstance(data, dict):
        raise RegistryError(f"registry file {name} must hold a mapping")
    return data, raw


def _index_units(uf: UnitsFile, problems: list[str]) -> tuple[dict[str, str], dict[tuple[str, str], float]]:
    unit_ids = {u.id for u in uf.units}
    aliases: dict[str, str] = {}
    for unit in uf.units:
        for alias in (unit.id, *unit.aliases):
            key = normalise_alias(alias)
            if aliases.setdefault(key, unit.id) != unit.id:
                problems.append(f"unit alias {alias!r} names both {aliases[key]} and {unit.id}")
    conversions = {}
    for conv in uf.conversions:
        problems.extend(f"conversion uses unknown unit {u!r}" for u in (conv.from_, conv.to) if u not in unit_ids)
        conversions[(conv.from_, conv.to)] = conv.factor
    return aliases, conversions


def _index_metrics(mf: MetricsFile, unit_ids: set[str], problems: list[str]) -> dict[str, str]:
    metric_ids = [m.id for m in mf.metrics]
    if len(set(metric_ids)) != len(metric_ids):
        problems.append("duplicate metric ids")
    aliases: dict[str, str] = {}
    for metric in mf.metrics:
        if metric.unit not in unit_ids:
            problems.append(f"metric {metric.id} uses unknown unit {metric.unit!r}")
        lo, hi = metric.bounds
        if lo is not None and hi is not None and lo > hi:
            problems.append(f"metric {metric.id} has bounds {metric.bounds} with min > max")
        for alias in (metric.id, *metric.aliases):
            key = normalise_alias(alias)
            if aliases.setdefault(key, metric.id) != metric.id:
                problems.append(f"metric alias {alias!r} names both {aliases[key]} and {metric.id}")
    return aliases


def _check_benchmark(bench: Benchmark, families: set[str], bench_ids: set[str], metric_ids: set[str]) -> list[str]:
    problems = []
    if bench.family is not None and bench.family not in families:
        problems.append(f"benchmark {bench.id} names unknown family {bench.family!r}")
    if bench.derived_from is not None and bench.derived_from not in bench_ids:
        problems.append(f"benchmark {bench.id} is derived from unknown {bench.derived_from!r}")
    if bench.canonical_metric is not None and bench.canonical_metric.split(".")[0] not in metric_ids:
        problems.append(f"benchmark {bench.id} overrides to unknown metric {bench.canonical_metric!r}")
    return problems


def _index_benchmarks(bf: BenchmarksFile, metric_ids: set[str], problems: list[str]) -> dict[tuple[str, str], str]:
    ids = [b.id for b in bf.benchmarks]
    if len(set(ids)) != len(ids):
        problems.append(f"duplicate benchmark ids {sorted({b for b in ids if ids.count(b) > 1})}")
    families = {f.id for f in bf.families}
    aliases: dict[tuple[str, str], str] = {}
    for bench in bf.benchmarks:
        problems.extend(_check_benchmark(bench, families, set(ids), metric_ids))
        scoped = [("*", a) for a in (bench.id, bench.name, *bench.aliases)]
        scoped += [(src, a) for src, names in bench.source_aliases.items() for a in names]
        for scope, alias in scoped:
            key = (scope, normalise_alias(alias))
            if aliases.setdefault(key, bench.id) != bench.id:
                problems.append(f"benchmark alias {alias!r} (scope {scope}) names both {aliases[key]} and {bench.id}")
    return aliases


#: A group referred to by number ("\\1", "(?(1)"): numbers change when patterns are joined into one.
_NUMBERED_REFERENCE = re.compile(r"\\[1-9]|\(\?\(\d")


def _any_name_pattern(sources: list[str]) -> re.Pattern[str] | None:
    """One pattern that matches a name wherever any of the developers' name patterns does.

    Each pattern is anchored at the start of the name or of a path part, so joined under one anchor
    the alternatives are tried only there: a name no pattern matches costs one short search instead
    of one per pattern. None (no shortcut) when a pattern refers to a group by number, or the
    patterns do not join (two name a group alike)."""
    if not sources or any(_NUMBERED_REFERENCE.search(s) for s in sources):
        return None
    try:
        return re.compile("(?:^|/)(?:" + "|".join(f"(?:{s})" for s in sources) + ")")
    except re.error:
        return None


def _index_developers(
    df: DevelopersFile, problems: list[str]
) -> tuple[dict[str, str], tuple[tuple[re.Pattern[str], str, bool], ...]]:
    aliases: dict[str, str] = {}
    for dev in df.developers:
        for alias in (dev.id, dev.name, *dev.aliases):
            key = normalise_alias(alias)
            if aliases.setdefault(key, dev.id) != dev.id:
                problems.append(f"developer alias {alias!r} names both {aliases[key]} and {dev.id}")
    patterns = []
    for np_ in df.name_patterns:
        if np_.developer not in aliases.values():
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
        patterns.append((compiled, np_.developer, np_.documented))
    return aliases, tuple(patterns)


def build_registry(docs: Mapping[str, Any], *, content: bytes = b"", content_sha256: str | None = None) -> Registry:
    """Validate the documents (``{"metrics.yaml": {...}, ...}``) against each other and index their aliases."""
    try:
        mf = MetricsFile.model_validate(docs["metrics.yaml"])
        uf = UnitsFile.model_validate(docs["units.yaml"])
        bf = BenchmarksFile.model_validate(docs["benchmarks.yaml"])
        df = DevelopersFile.model_validate(docs["developers.yaml"])
        ef = EvidenceFile.model_validate(docs["evidence_kinds.yaml"])
    except ValueError as exc:
        raise RegistryError(f"invalid registry: {exc}") from exc
    tokens = dict(docs.get("model_tokens.yaml") or {})
    try:
        policy = SetupPolicy.from_doc(docs.get(SETUP_POLICY_FILE) or packaged_setup_policy())
    except InputError as exc:
        raise RegistryError(str(exc)) from exc
    problems: list[str] = []
    unit_aliases, conversions = _index_units(uf, problems)
    metric_aliases = _index_metrics(mf, {u.id for u in uf.units}, problems)
    bench_aliases = _index_benchmarks(bf, {m.id for m in mf.metrics}, problems)
    developer_aliases, developer_patterns = _index_developers(df, problems)
    reuploads = {r.repo.lower(): r.developer for r in df.reuploads}
    problems += [f"re-upload {r.repo!r} names unknown developer {r.developer!r}" for r in df.reuploads
                 if r.developer not in {d.id for d in df.developers}]  # fmt: skip
    descriptions = []
    for metric in mf.metrics:
        for pattern in metric.description_patterns:
            try:
                descriptions.append((re.compile(pattern, re.IGNORECASE), metric.id))
            except re.error as exc:
                problems.append(f"metric {metric.id} description pattern {pattern!r} is not a regex: {exc}")
    if problems:
        raise RegistryError("invalid registry:\n  " + "\n  ".join(problems))
    versions: dict[str, int | str] = {
        "evidence_kinds": ef.version,
        "metrics": mf.version,
        "units": uf.version,
        "benchmarks": bf.version,
        "developers": df.version,
    }
    if tokens:
        versions["model_tokens"] = str(tokens.get("version", "?"))
    snapshots = docs.get("model_snapshots.yaml")
    if snapshots:
        versions["model_snapshots"] = snapshots.get("version", "?")
    if SETUP_POLICY_FILE in docs:
        versions["setup_policy"] = policy.version
    try:
        links = BenchmarkLinks.from_doc(
            docs.get(LINKS_FILE) or packaged_links(),
            benchmarks={b.id for b in bf.benchmarks},
            metrics={m.id for m in mf.metrics},
        )
    except InputError as exc:
        raise RegistryError(str(exc)) from exc
    if LINKS_FILE in docs:
        versions["benchmark_links"] = links.version
    return Registry(
        metrics={m.id: m for m in mf.metrics},
        units={u.id: u for u in uf.units},
        conversions=conversions,
        families={f.id: f for f in bf.families},
        benchmarks={b.id: b for b in bf.benchmarks},
        evidence_kinds={k.kind: k for k in ef.kinds},
        versions=versions,
        content_sha256=content_sha256 or hashlib.sha256(content).hexdigest(),
        metric_aliases=metric_aliases,
        unit_aliases=unit_aliases,
        benchmark_aliases=bench_aliases,
        developers={d.id: d for d in df.developers},
        developer_aliases=developer_aliases,
        reuploads=reuploads,
        developer_patterns=developer_patterns,
        any_developer_pattern=_any_name_pattern([p.pattern for p in df.name_patterns]),
        documented_patterns=tuple((p, dev) for p, dev, documented in developer_patterns if documented),
        metric_descriptions=tuple(descriptions),
        generic_benchmark_names=frozenset(normalise_alias(n) for n in bf.generic_names),
        model_tokens=tokens,
        name_rules=rules_from(tokens, snapshots) if tokens else None,
        setup_policy=policy,
        benchmark_links=links,
    )


@cache
def load_registry() -> Registry:
    """The packaged registries, validated (cached: they are read-only data)."""
    docs, raws = {}, []
    for name in FILES:
        docs[name], raw = _read(name)
        raws.append(raw)
    return build_registry(docs, content_sha256=content_hash(raws))
