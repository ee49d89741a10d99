"""The source catalog: an explicit list of source modules, checked against the folder.

Listing modules explicitly (instead of discovering whatever sits in ``sources/``) means a
half-written module never runs in the nightly job by accident; ``tests/ingest/test_catalog.py``
checks the list and the folder agree both ways, so a module is never forgotten either.
"""

from __future__ import annotations

import importlib
from functools import cache

from evalhouse.common.choices import require_choice
from evalhouse.ingest.source import SourceModule, SourceSpecError

#: Module names under ``evalhouse.ingest.sources``, in the order a refresh runs them.
SOURCES: tuple[str, ...] = (
    "epoch_benchmarks",
    "artificial_analysis",
    # leaderboards crawled with scrapy, and leaderboard APIs and datasets (httpx)
    "swallow_leaderboard",
    "lexam",
    "open_llm_leaderboard",
    "helm",
    "lmarena",
    "livebench",
    "terminal_bench",
    "aider_polyglot",
    "vals_ai",
    "mercor_eval",
    "vectara_hallucination_leaderboard",
    "llm_stats",
    # leaderboards widened toward the EEE adapter set (recorded real payloads)
    "bfcl",
    "swe_bench",
    "evalplus",
    "evalperf",
    "alpaca_eval",
    "arena_hard_auto",
    "swe_polybench",
    "tau2_bench",
    "mt_bench",
    # fetched on demand only ('evalhouse ingest'): model cards and paper tables
    "model_cards",
    "papers",
    # harness logs (item level, ingested from files: 'evalhouse ingest KEY PATH')
    "lm_eval",
    "helm_run",
    "inspect_log",
    "eee_instances",
    "panel_csv",
)


@cache
def _load(name: str) -> SourceModule:
    """Import one source module and check it keeps the source contract."""
    module = importlib.import_module(f"evalhouse.ingest.sources.{name}")
    spec = getattr(module, "SOURCE", None)
    if spec is None or not callable(getattr(module, "plan", None)) or not callable(getattr(module, "parse", None)):
        raise SourceSpecError(f"evalhouse.ingest.sources.{name} must export SOURCE, plan() and parse()")
    if spec.module_name != name:
        raise SourceSpecError(f"source key {spec.key!r} does not match its module {name!r}")
    return module  # type: ignore[return-value]


def source_keys() -> list[str]:
    """Every catalogued key, without importing a source (a key is its module name, hyphenated)."""
    return [name.replace("_", "-") for name in SOURCES]


@cache
def catalog() -> dict[str, SourceModule]:
    """``{source key: module}``; raises if a module breaks the source contract."""
    found: dict[str, SourceModule] = {}
    for name in SOURCES:
        module = _load(name)
        if module.SOURCE.key in found:
            raise SourceSpecError(f"two modules declare source key {module.SOURCE.key!r}")
        found[module.SOURCE.key] = module
    return found


def get_source(key: str) -> SourceModule:
    """The catalogued module of ``key`` (only that module is imported); an unknown key is an
    :class:`InputError` with suggestions."""
    chosen = require_choice(key, source_keys(), "source")
    return _load(chosen.replace("-", "_"))
