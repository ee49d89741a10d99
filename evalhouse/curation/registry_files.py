"""The shapes of the registry files (pydantic, strict): what a curator may write in each YAML file."""

from __future__ import annotations

import re
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator


class Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True, defer_build=True)


class Unit(Strict):
    id: str
    native: bool = False
    aliases: tuple[str, ...] = ()


class Conversion(Strict):
    from_: str = Field(alias="from")
    to: str
    factor: float


class Metric(Strict):
    id: str
    kind: str
    unit: str
    bounds: tuple[float | None, float | None]
    lower_is_better: bool
    description: str | None = None
    aliases: tuple[str, ...] = ()
    description_patterns: tuple[str, ...] = ()  # regexes over evaluation_description, when no metric is named


class Family(Strict):
    id: str
    name: str
    description: str | None = None


class SubsetAlias(Strict):
    """Names that denote one subset of a benchmark: Artificial Analysis's "τ²-Bench Telecom" (its
    ``tau2``) is τ²-bench's telecom domain, the subset the τ²-bench leaderboard writes as
    ``telecom``. ``source`` scopes the names to one source's raw names; the evidence says so."""

    names: tuple[str, ...]
    subset: str
    source: str | None = None
    evidence: tuple[str, ...]

    @field_validator("evidence")
    @classmethod
    def _evidenced(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if not value:
            raise ValueError("a subset alias states its evidence")
        return value


class Benchmark(Strict):
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
    subset_aliases: tuple[SubsetAlias, ...] = ()
    canonical_metric: str | None = None
    #: The setup the benchmark's protocol fixes (the Open LLM Leaderboard v2's BBH is 3-shot): a
    #: result that does not state a field gets the protocol's value, one that states it keeps its own.
    setup: dict[str, str] = Field(default_factory=dict)
    setup_evidence: tuple[str, ...] = ()

    @field_validator("id")
    @classmethod
    def _slug(cls, value: str) -> str:
        if not re.fullmatch(r"[a-z0-9][a-z0-9_.]*", value):
            raise ValueError(f"benchmark id {value!r} must match [a-z0-9][a-z0-9_.]*")
        return value


class Developer(Strict):
    id: str
    name: str
    aliases: tuple[str, ...] = ()


class EvidenceKind(Strict):
    kind: str
    rank: int
    lower_bound: bool
    description: str


class EvidenceFile(Strict):
    version: int
    kinds: tuple[EvidenceKind, ...]


class NamePattern(Strict):
    pattern: str
    developer: str
    # documented authorship: beats another known developer a source states (HELM files GPT-J under openai)
    documented: bool = False
    reason: str | None = None


class Reupload(Strict):
    """A repository documented as a copy of another developer's weights (not a fine-tune)."""

    repo: str
    developer: str
    reason: str


class DevelopersFile(Strict):
    version: int
    developers: tuple[Developer, ...]
    name_patterns: tuple[NamePattern, ...] = ()
    reuploads: tuple[Reupload, ...] = ()


class MetricsFile(Strict):
    version: int
    metrics: tuple[Metric, ...]


class UnitsFile(Strict):
    version: int
    units: tuple[Unit, ...]
    conversions: tuple[Conversion, ...]


class BenchmarksFile(Strict):
    version: int
    families: tuple[Family, ...] = ()
    #: Words that name no test on their own ("Math", "Safety", "Chat", "Overall"): a global alias
    #: never matches them, only a source-scoped one (RewardBench's "Math" is not Hendrycks MATH).
    generic_names: tuple[str, ...] = ()
    benchmarks: tuple[Benchmark, ...]
