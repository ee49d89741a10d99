"""Benchmark identity across sources: a namespaced benchmark linked to the registry's, or kept apart.

An Every Eval Ever collection names its benchmarks under its own namespace (``hfopenllm_v2.gpqa``)
and the loader keeps them apart from the registry's benchmark of the same name, never merging on a
name. ``registries/benchmark_links.yaml`` says what such a benchmark is, one entry each with the
question set (subset), split, metric and normalisation it was checked on and the evidence:
``same_as`` a registry benchmark (its results then load as that benchmark, the link named in their
canonicalisation chain, and meet the other sources' results), or ``apart_from`` one, with the
reason, which ``evalhouse conflicts`` prints where the two sit in cells that did not meet.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from evalhouse.errors import InputError

FILE = "benchmark_links.yaml"


class Link(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    benchmark: str
    same_as: str | None = None
    apart_from: str | None = None
    subset: str | None = None
    split: str | None = None
    metric: str | None = None
    normalisation: str | None = None
    metrics: dict[str, str] = Field(default_factory=dict)  # a collection's metric -> what it is
    reason: str | None = None
    evidence: tuple[str, ...] = ()

    @model_validator(mode="after")
    def _one_kind(self) -> Link:
        if (self.same_as is None) == (self.apart_from is None):
            raise ValueError(f"{self.benchmark}: give exactly one of same_as and apart_from")
        if self.same_as is not None and None in (self.subset, self.split, self.metric, self.normalisation):
            raise ValueError(f"{self.benchmark}: a same_as link states its subset, split, metric and normalisation")
        if self.apart_from is not None and not self.reason:
            raise ValueError(f"{self.benchmark}: an apart_from entry says why (reason)")
        if self.apart_from is not None and self.metrics:
            raise ValueError(f"{self.benchmark}: metrics belong to a same_as link")
        return self

    @property
    def target(self) -> str:
        return self.same_as or self.apart_from or ""

    def why(self) -> str:
        """The link in words: what was checked (same_as) or what differs (apart_from)."""
        if self.apart_from is not None:
            return str(self.reason)
        return (
            f"same subset ({self.subset}), split ({self.split}), metric ({self.metric}) and "
            f"normalisation ({self.normalisation})"
        )

    def as_dict(self) -> dict[str, Any]:
        return {"kind": "same_as" if self.same_as else "apart_from", **self.model_dump(exclude_defaults=True)}


class _LinksFile(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    version: int
    links: tuple[Link, ...] = ()


@dataclass(frozen=True)
class BenchmarkLinks:
    """The links file, indexed by the namespaced benchmark and by the registry benchmark."""

    version: int
    links: tuple[Link, ...]

    @classmethod
    def from_doc(cls, doc: Any, *, benchmarks: Collection[str], metrics: Collection[str]) -> BenchmarkLinks:
        try:
            parsed = _LinksFile.model_validate(doc)
        except ValidationError as exc:
            raise InputError(f"invalid benchmark links ({FILE}): {exc}") from exc
        problems = []
        linked: dict[str, str] = {}
        for link in parsed.links:
            if link.target not in benchmarks:
                problems.append(f"{link.benchmark}: {link.target!r} is not a registry benchmark")
            if link.same_as is not None:
                if link.benchmark in linked:
                    problems.append(f"{link.benchmark} is the same as both {linked[link.benchmark]} and {link.same_as}")
                linked[link.benchmark] = link.same_as
            unknown = [m for pair in link.metrics.items() for m in pair if m not in metrics]
            problems += [f"{link.benchmark}: {m!r} is not a registry metric" for m in unknown]
        if problems:
            raise InputError(f"invalid benchmark links ({FILE}): " + "; ".join(problems))
        return cls(parsed.version, parsed.links)

    def same(self, benchmark_id: str) -> Link | None:
        """The ``same_as`` link of a namespaced benchmark, if the file has one."""
        return next((lk for lk in self.links if lk.benchmark == benchmark_id and lk.same_as), None)

    def between(self, a: str, b: str) -> list[Link]:
        """Every entry about the pair, whichever side is namespaced; an entry about a namespaced
        benchmark is also about the registry benchmark it is the same as (it loads as that one)."""
        same = {lk.benchmark: lk.target for lk in self.links if lk.same_as}
        return [
            lk
            for lk in self.links
            if {lk.benchmark, lk.target} == {a, b} or {same.get(lk.benchmark, lk.benchmark), lk.target} == {a, b}
        ]

    def about(self, benchmark_ids: Collection[str]) -> list[Link]:
        """Entries naming any of ``benchmark_ids`` on either side."""
        wanted = set(benchmark_ids)
        return [lk for lk in self.links if lk.benchmark in wanted or lk.target in wanted]

    def as_dict(self) -> dict[str, Any]:
        return {
            "version": self.version,
            "file": f"evalhouse/curation/registries/{FILE}",
            "links": [lk.as_dict() for lk in self.links],
        }


def metric_renames(link: Link | None) -> Mapping[str, str]:
    return link.metrics if link is not None else {}


@cache
def packaged_doc() -> Any:
    """The packaged links file, parsed (for a registry built from documents that lack it)."""
    from evalhouse.common.yamls import load_package_yaml  # noqa: PLC0415 - YAML only when needed
    from evalhouse.curation.registry_version import read_file  # noqa: PLC0415

    return load_package_yaml(read_file(FILE))
