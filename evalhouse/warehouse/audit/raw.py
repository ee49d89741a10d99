"""The raw store's integrity: every stored file re-hashed, every referenced payload present."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import duckdb

from evalhouse.warehouse.audit.queries import rows
from evalhouse.warehouse.raw_store import RawStore


def payload_status(store: RawStore, sha256: str) -> dict[str, Any]:
    """Whether the bytes of ``sha256`` are in ``store`` and still hash to it (re-hashed here)."""
    path = store.find(sha256)
    if path is None:
        return {"status": "missing", "path": None}
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    status = "ok" if actual == sha256 else f"corrupt: sha256 is now {actual}"
    return {"status": status, "path": str(path)}


@dataclass
class RawVerification:
    """What ``verify_raw`` found: files whose bytes changed, and referenced payloads with no file."""

    files_checked: int = 0
    payloads_referenced: int = 0
    corrupt: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.corrupt and not self.missing

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "files_checked": self.files_checked,
            "payloads_referenced": self.payloads_referenced,
            "corrupt": self.corrupt,
            "missing": self.missing,
        }


def verify_raw(con: duckdb.DuckDBPyConnection, store: RawStore) -> RawVerification:
    """Re-hash every stored file and check every referenced payload has its bytes present.

    A corrupt file is reported with what refers to it (a corrupt file nothing refers to is still
    reported: the store's promise is that a name is the hash of its bytes).
    """
    referenced = {r["sha256"]: r for r in rows(con, "audit_payloads.sql")}
    report = RawVerification(
        files_checked=sum(1 for p in store.root.glob("??/*") if not p.name.startswith(".tmp-"))
        if store.root.is_dir()
        else 0,
        payloads_referenced=len(referenced),
    )
    for path, problem in store.verify():
        sha = Path(path).name.split(".")[0]
        ref = referenced.get(sha)
        report.corrupt.append(
            {
                "sha256": sha,
                "path": path,
                "problem": problem,
                "referenced_by": ref["referenced_by"] if ref else [],
                "n_evaluations": ref["n_evaluations"] if ref else 0,
                "url": ref["url"] if ref else None,
            }
        )
    for sha, ref in referenced.items():
        if store.find(sha) is None:
            report.missing.append(
                {
                    "sha256": sha,
                    "problem": "bytes not in the raw store",
                    "referenced_by": ref["referenced_by"],
                    "n_evaluations": ref["n_evaluations"],
                    "url": ref["url"],
                }
            )
    return report
