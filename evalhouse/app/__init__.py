"""The application layer: what the ``evalhouse`` command does, as Python.

:class:`House` owns a warehouse and everything around it (raw store, registries, checkpoint,
HTTP settings); the functions here need no warehouse (the source catalog, replay mirrors, model
names, snapshot folders). The command line is options, one call of these, and printing; the
analyses are :mod:`evalhouse.analytics.runs` (also ``House(...).analyses``).

Names resolve on first use (PEP 562), and each call imports the layers it needs when it runs,
so importing this package costs nothing.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalhouse.app.catalog import (
        benchmark_links,
        describe_snapshot,
        diff_snapshots,
        mirror_from_shared,
        open_snapshot,
        resolve_model,
        setup_policy,
        snapshot_frame,
        sources,
        verify_snapshot,
    )
    from evalhouse.app.house import Analyses, House, HttpSettings
    from evalhouse.app.results import Frozen, Migrated, QueryRows, RefreshResult, Report, SiteResult, Validation
    from evalhouse.app.shortcuts import connect, import_eee, refresh

_WHERE = {
    **dict.fromkeys(("House", "HttpSettings", "Analyses"), "evalhouse.app.house"),
    **dict.fromkeys(
        ("Frozen", "Migrated", "QueryRows", "RefreshResult", "Report", "SiteResult", "Validation"),
        "evalhouse.app.results",
    ),
    **dict.fromkeys(
        (
            "benchmark_links",
            "describe_snapshot",
            "diff_snapshots",
            "mirror_from_shared",
            "open_snapshot",
            "resolve_model",
            "setup_policy",
            "snapshot_frame",
            "sources",
            "verify_snapshot",
        ),
        "evalhouse.app.catalog",
    ),
    **dict.fromkeys(("connect", "import_eee", "refresh"), "evalhouse.app.shortcuts"),
}

__all__ = [
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
]


def __getattr__(name: str) -> Any:
    if name in _WHERE:
        return getattr(importlib.import_module(_WHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return __all__
