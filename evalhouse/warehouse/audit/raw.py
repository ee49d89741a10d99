"""The raw store's integrity: every stored object (loose file or packed blob) re-hashed, every
referenced payload present."""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from typing import Any

import duckdb

from evalhouse.warehouse.audit.queries import rows
from evalhouse.warehouse.raw.store import RawStore


def payload_status(store: RawStore, sha256: str) -> dict[str, Any]:
    """Whether the bytes of ``sha256`` are in ``store`` and still hash to it (re-hashed here);
    ``path`` is the file holding them (``<pack>#<offset>+<length>`` for a packed blob)."""
    stored = store.find(sha256)
    if stored is None:
        return {"status": "missing", "path": None}
    try:
        actual = hashlib.sha256(stored.read()).hexdigest()
    except OSError as exc:
        return {"status": f"unreadable: {exc}", "path": str(stored)}
    status = "ok" if actual == sha256 else f"corrupt: sha256 is now {actual}"
    return {"status": status, "path": str(stored)}


@dataclass
class RawVerification:
    """What ``verify_raw`` found: stored objects whose bytes changed, and referenced payloads with
    no stored bytes."""

    objects_checked: int = 0  # loose files and packed blobs re-hashed
    payloads_referenced: int = 0
    corrupt: list[dict[str, Any]] = field(default_factory=list)
    missing: list[dict[str, Any]] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        return not self.corrupt and not self.missing

    def as_dict(self) -> dict[str, Any]:
        return {
            "ok": self.ok,
            "objects_checked": self.objects_checked,
            "payloads_referenced": self.payloads_referenced,
            "corrupt": self.corrupt,
            "missing": self.missing,
        }


def verify_raw(con: duckdb.DuckDBPyConnection, store: RawStore) -> RawVerification:
    """Re-hash every stored object and check every referenced payload has its bytes present.

    A corrupt object is reported by its storage path (``ab/abcd….json`` or
    ``packs/<id>.pack#<offset>+<length>``) with what refers to it (a corrupt object nothing refers
    to is still reported: the store's promise is that a name is the hash of its bytes).
    """
    referenced = {r["sha256"]: r for r in rows(con, "audit_payloads.sql")}
    check = store.verify()
    report = RawVerification(objects_checked=check.objects, payloads_referenced=len(referenced))
    for damage in check.damaged:
        ref = referenced.get(damage.sha256)
        report.corrupt.append(
            {
                "sha256": damage.sha256,
                "path": damage.storage_path,
                "problem": damage.problem,
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
