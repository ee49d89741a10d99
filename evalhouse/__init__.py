"""evalhouse: a curated, hash-pinned warehouse of AI evaluation results — the public Python API.

Everything the ``evalhouse`` command does is a call here (docs/python-api.md)::

    import evalhouse

    house = evalhouse.House.open("warehouse.duckdb")
    night = house.refresh(mirror="build/mirror")              # the nightly refresh
    house.import_eee("path/to/datastore")                     # an Every Eval Ever tree
    house.stats(), house.audit_score("3f9a1c"), house.conflicts(benchmark="GPQA Diamond")
    snap = house.create_snapshot("snapshots/2026-12-01")      # a frozen, content-hashed export
    con = evalhouse.open_snapshot(snap.path)                  # verified, read-only, with the views
    df = evalhouse.snapshot_frame(con, "SELECT * FROM v_matrix_long")
    evalhouse.resolve_model("GPT-5 (high)")                   # {"configuration", "base_model", ...}
    house.analyses.factor_grid(snapshot=snap.path)            # the analyses (evalhouse.analyses)
    efa = evalhouse.EFA(n_factors=3).fit(matrix)              # estimators: fit() + fitted attributes

This module wires nothing: it names the application layer (:mod:`evalhouse.app`), the analyses
(:mod:`evalhouse.analytics.runs`, as ``evalhouse.analyses``) and the estimators. Names resolve
lazily (PEP 562), so ``import evalhouse`` costs nothing until one is used.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from evalhouse.version import __version__

if TYPE_CHECKING:
    from evalhouse.analytics import (
        EFA,
        BalanceOfBenchmarks,
        CharacteristicCurveEquating,
        Omega,
        ParallelAnalysis,
        PredictionLadder,
    )
    from evalhouse.analytics import runs as analyses
    from evalhouse.app import (
        Analyses,
        Frozen,
        House,
        HttpSettings,
        Migrated,
        QueryRows,
        RefreshResult,
        Report,
        SiteResult,
        Validation,
        benchmark_links,
        connect,
        describe_snapshot,
        diff_snapshots,
        import_eee,
        mirror_from_shared,
        open_snapshot,
        refresh,
        resolve_model,
        setup_policy,
        snapshot_frame,
        sources,
        verify_snapshot,
    )

#: The application layer's names (House, the functions that need no warehouse, the results).
_APP = (
    "Analyses",
    "Frozen",
    "House",
    "HttpSettings",
    "Migrated",
    "QueryRows",
    "RefreshResult",
    "Report",
    "SiteResult",
    "Validation",
    "benchmark_links",
    "connect",
    "describe_snapshot",
    "diff_snapshots",
    "import_eee",
    "mirror_from_shared",
    "open_snapshot",
    "refresh",
    "resolve_model",
    "setup_policy",
    "snapshot_frame",
    "sources",
    "verify_snapshot",
)
#: Estimators (sklearn-style: ``fit`` and fitted attributes), from the analytics layer.
_ESTIMATORS = (
    "EFA",
    "ParallelAnalysis",
    "Omega",
    "PredictionLadder",
    "CharacteristicCurveEquating",
    "BalanceOfBenchmarks",
)

__all__ = [
    "EFA",
    "Analyses",
    "BalanceOfBenchmarks",
    "CharacteristicCurveEquating",
    "Frozen",
    "House",
    "HttpSettings",
    "Migrated",
    "Omega",
    "ParallelAnalysis",
    "PredictionLadder",
    "QueryRows",
    "RefreshResult",
    "Report",
    "SiteResult",
    "Validation",
    "__version__",
    "analyses",
    "benchmark_links",
    "connect",
    "describe_snapshot",
    "diff_snapshots",
    "import_eee",
    "mirror_from_shared",
    "open_snapshot",
    "refresh",
    "resolve_model",
    "setup_policy",
    "snapshot_frame",
    "sources",
    "verify_snapshot",
]


def __getattr__(name: str) -> Any:
    if name in _APP:
        return getattr(importlib.import_module("evalhouse.app"), name)
    if name in _ESTIMATORS:
        return getattr(importlib.import_module("evalhouse.analytics"), name)
    if name == "analyses":
        return importlib.import_module("evalhouse.analytics.runs")
    raise AttributeError(f"module 'evalhouse' has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
