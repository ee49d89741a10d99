"""What the application's calls return, beside the lower layers' own result classes.

Every result has ``as_dict()``: the JSON document the matching command prints with ``--json``.
Reports that are JSON already (``stats``, ``audit_score``, ``conflicts``, ``changes`` ...) come
back as a :class:`Report`, a ``dict`` with that method. The lower layers' result classes a call
returns are named here too (resolved on first use), so a caller types against this module only.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from evalhouse.analytics.runs import Outcome
    from evalhouse.pipeline.import_eee import ImportSummary
    from evalhouse.site.build import SiteSummary
    from evalhouse.warehouse.audit import RawVerification
    from evalhouse.warehouse.checks.suites import ValidationSummary
    from evalhouse.warehouse.eee_export import ExportSummary
    from evalhouse.warehouse.load.ledger import RunResult
    from evalhouse.warehouse.rederive import Rederived
    from evalhouse.warehouse.snapshot.diff import SnapshotDiff, TableDiff
    from evalhouse.warehouse.snapshot.freeze import CreatedSnapshot
    from evalhouse.warehouse.snapshot.verify import VerifyReport
    from evalhouse.warehouse.sql_guard import GuardedResult

#: The lower layers' result classes, by the module that defines them.
_ELSEWHERE = {
    "Outcome": "evalhouse.analytics.runs",
    "ImportSummary": "evalhouse.pipeline.import_eee",
    "RunResult": "evalhouse.warehouse.load.ledger",
    "SiteSummary": "evalhouse.site.build",
    "RawVerification": "evalhouse.warehouse.audit",
    "ExportSummary": "evalhouse.warehouse.eee_export",
    "ValidationSummary": "evalhouse.warehouse.checks.suites",
    "Rederived": "evalhouse.warehouse.rederive",
    "CreatedSnapshot": "evalhouse.warehouse.snapshot.freeze",
    "VerifyReport": "evalhouse.warehouse.snapshot.verify",
    "SnapshotDiff": "evalhouse.warehouse.snapshot.diff",
    "TableDiff": "evalhouse.warehouse.snapshot.diff",
    "GuardedResult": "evalhouse.warehouse.sql_guard",
}

__all__ = [
    "CreatedSnapshot",
    "ExportSummary",
    "Frozen",
    "GuardedResult",
    "ImportSummary",
    "Migrated",
    "Outcome",
    "QueryRows",
    "RawVerification",
    "Rederived",
    "RefreshResult",
    "Report",
    "RunResult",
    "SiteResult",
    "SiteSummary",
    "SnapshotDiff",
    "TableDiff",
    "Validation",
    "ValidationSummary",
    "VerifyReport",
]


def __getattr__(name: str) -> Any:
    if name in _ELSEWHERE:
        return getattr(importlib.import_module(_ELSEWHERE[name]), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


class Report(dict[str, Any]):
    """A JSON-ready report (the keys ``--json`` prints), readable as the dict it is."""

    def as_dict(self) -> dict[str, Any]:
        return dict(self)


@dataclass(frozen=True)
class Migrated:
    """The warehouse file and its schema after ``migrate``: the migrations applied just now."""

    db: Path
    schema_version: int
    applied: list[str]

    def as_dict(self) -> dict[str, Any]:
        return {"db": str(self.db), "schema_version": self.schema_version, "applied": self.applied}


@dataclass
class RefreshResult:
    """A refresh: one run per source, and the run report it wrote (what ``changes`` prints)."""

    db: Path
    mirror: str | None  # redacted: a mirror URL's credentials are never kept
    runs: list[RunResult]
    report: dict[str, Any]
    report_path: Path

    @property
    def ok(self) -> bool:
        """No source failed (the refresh's exit code is 1 otherwise)."""
        return not any(r.status == "failed" for r in self.runs)

    def statuses(self) -> dict[str, str]:
        """``{source key: status}`` of the runs, in the order they ran."""
        return {r.source_key: r.status for r in self.runs}

    def __iter__(self) -> Iterator[RunResult]:
        return iter(self.runs)

    def __len__(self) -> int:
        return len(self.runs)

    def __getitem__(self, index: int) -> RunResult:
        return self.runs[index]

    def as_dict(self) -> dict[str, Any]:
        return {
            "db": str(self.db),
            "mirror": self.mirror,
            "runs": [r.as_dict() for r in self.runs],
            "report": str(self.report_path),
        }


@dataclass
class Validation:
    """An on-demand validation: the checkpoint's summary, the GX project folder, the Data Docs built."""

    summary: ValidationSummary
    gx_project: Path
    data_docs: Path | None = None

    @property
    def success(self) -> bool:
        return self.summary.success

    def as_dict(self) -> dict[str, Any]:
        docs = str(self.data_docs) if self.data_docs else None
        return {**self.summary.as_dict(), "gx_project": str(self.gx_project), "data_docs": docs}


@dataclass(frozen=True)
class Frozen:
    """A snapshot of the warehouse's current state: its folder, and whether it was written just now
    (an unchanged warehouse reuses the snapshot it was frozen into before)."""

    path: Path
    created: bool
    pruned: list[Path] = field(default_factory=list)  # older pin folders removed beyond ``keep``


@dataclass
class SiteResult:
    """A built site: the site's summary, the snapshot it shows (frozen first when none was given),
    and notes on what it left out."""

    summary: SiteSummary
    snapshot: Path
    frozen: Frozen | None = None  # set when the live warehouse was frozen for the site
    notes: list[str] = field(default_factory=list)

    def __getattr__(self, name: str) -> Any:  # the summary's own fields: out_dir, pages, analyses ...
        if name == "summary":
            raise AttributeError(name)
        return getattr(self.summary, name)

    def as_dict(self) -> dict[str, Any]:
        return self.summary.as_dict()


@dataclass
class QueryRows:
    """A read-only query's rows, fetched whole up to its limit (``truncated``: more rows exist)."""

    columns: list[str]
    types: list[str]
    rows: list[tuple[Any, ...]]
    truncated: bool
    limit: int | None

    def records(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]

    def as_dict(self) -> dict[str, Any]:
        return {"columns": self.columns, "rows": self.records(), "truncated": self.truncated}
