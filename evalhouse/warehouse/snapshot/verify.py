"""Verifying a snapshot: its manifest read and checked, every file re-hashed against it.

A changed, missing or extra file is named; so is an edited manifest (its id, seal or bytes no
longer those evalhouse wrote) and a snapshot that is not the one an analysis recorded
(``expect_id``). A manifest is checked (:mod:`.manifest`) before anything it names is read.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath
from typing import Any

import duckdb

from evalhouse.common import progress
from evalhouse.warehouse.snapshot.format import (
    FORMAT,
    MANIFEST,
    READS_FORMATS,
    content_id,
    file_sha256,
    manifest_bytes,
    seal,
    tree_files,
)
from evalhouse.warehouse.snapshot.manifest import MAX_MANIFEST_BYTES, SnapshotError, check_manifest, safe_relpath


@dataclass
class VerifyReport:
    """What ``verify`` found; ``problems`` names every file that is not as the manifest says."""

    path: Path
    manifest: dict[str, Any]
    checked: int = 0
    bytes_checked: int = 0
    changed: list[str] = field(default_factory=list)
    missing: list[str] = field(default_factory=list)
    extra: list[str] = field(default_factory=list)
    manifest_problems: list[str] = field(default_factory=list)
    details: dict[str, str] = field(default_factory=dict)
    notes: list[str] = field(default_factory=list)  # what was not checked, and why (not problems)

    @property
    def ok(self) -> bool:
        return not (self.changed or self.missing or self.extra or self.manifest_problems)

    @property
    def snapshot_id(self) -> str | None:
        return self.manifest.get("snapshot_id")

    def problems(self) -> list[str]:
        return [
            *(f"{MANIFEST}: {p}" for p in self.manifest_problems),
            *(f"{p}: changed ({self.details[p]})" for p in self.changed),
            *(f"{p}: missing (listed in the manifest, not on disk)" for p in self.missing),
            *(f"{p}: extra file (not in the manifest)" for p in self.extra),
        ]

    def as_dict(self) -> dict[str, Any]:
        return {
            "path": str(self.path),
            "snapshot_id": self.snapshot_id,
            "ok": self.ok,
            "files_checked": self.checked,
            "bytes_checked": self.bytes_checked,
            "changed": self.changed,
            "missing": self.missing,
            "extra": self.extra,
            "manifest_problems": self.manifest_problems,
            "problems": self.problems(),
        }


def load_manifest(path: str | os.PathLike[str]) -> tuple[dict[str, Any], bytes]:
    """The parsed manifest and its bytes; a folder without one is not a snapshot."""
    root = Path(path)
    if not root.is_dir():
        raise SnapshotError(f"{root} is not a folder (a snapshot is a folder with {MANIFEST})")
    raw_path = root / MANIFEST
    if not raw_path.is_file():
        raise SnapshotError(f"{root} is not a snapshot: it has no {MANIFEST}")
    if raw_path.is_symlink():
        raise SnapshotError(f"{root / MANIFEST} is a symbolic link; a snapshot holds regular files only")
    if raw_path.stat().st_size > MAX_MANIFEST_BYTES:
        raise SnapshotError(f"{root / MANIFEST} is larger than {MAX_MANIFEST_BYTES:,} bytes; not a snapshot manifest")
    raw = raw_path.read_bytes()
    try:
        manifest = json.loads(raw.decode("utf-8"))
    except (UnicodeDecodeError, json.JSONDecodeError) as exc:
        raise SnapshotError(f"{root / MANIFEST} is not valid JSON ({exc}); the snapshot is damaged") from exc
    except RecursionError:
        raise SnapshotError(f"{root / MANIFEST} is nested too deeply to be a snapshot manifest") from None
    if not isinstance(manifest, dict) or manifest.get("format") != FORMAT:
        raise SnapshotError(f"{root / MANIFEST} is not an evalhouse snapshot manifest (no format {FORMAT!r})")
    try:
        check_manifest(manifest, len(raw))
    except SnapshotError as exc:
        raise SnapshotError(f"{root / MANIFEST} is malformed: {exc}; refused before anything is read") from None
    return manifest, raw


def _unsafe(rel: str) -> bool:
    return safe_relpath(rel) is not None


def linked(root: Path, rel: str) -> bool:
    """Whether the file or a folder on its way inside the snapshot is a symbolic link."""
    path = root
    for part in PurePosixPath(rel).parts:
        path = path / part
        if path.is_symlink():
            return True
    return False


def _manifest_problems(manifest: dict[str, Any], raw: bytes) -> list[str]:
    problems = []
    if manifest.get("format_version") not in READS_FORMATS:
        problems.append(f"format_version {manifest.get('format_version')!r}, this evalhouse reads {READS_FORMATS}")
    actual = content_id(manifest)
    if actual != manifest.get("snapshot_id"):
        problems.append(
            f"edited: its content hashes to {actual[:16]}… but it claims snapshot id "
            f"{str(manifest.get('snapshot_id'))[:16]}…"
        )
    elif seal(manifest) != manifest.get("seal_sha256"):
        problems.append("edited: name or created_at no longer match the seal written at creation")
    if manifest_bytes(manifest) != raw:
        problems.append("edited: the bytes are not the form evalhouse writes (whitespace or key order changed)")
    unsafe = [p for p in manifest["files"] if _unsafe(p)]
    if unsafe:
        problems.append(f"lists paths outside the snapshot folder: {unsafe[:5]}")
    listed = set(manifest["files"])
    for table, entry in manifest["tables"].items():
        unknown = [f for f in entry["files"] if f not in listed]
        if unknown:
            problems.append(f"table {table} names files that have no hash: {unknown[:5]}")
    return problems


def _check_file(report: VerifyReport, rel: str, expected: dict[str, Any]) -> None:
    path = report.path / rel
    if linked(report.path, rel):
        report.changed.append(rel)
        report.details[rel] = "a symbolic link (a snapshot holds regular files only; links are never followed)"
        return
    if not path.is_file():
        report.missing.append(rel)
        return
    size = path.stat().st_size
    digest = file_sha256(path)
    report.checked += 1
    report.bytes_checked += size
    if digest == expected.get("sha256") and size == expected.get("bytes"):
        return
    report.changed.append(rel)
    note = f"sha256 {digest[:12]}…, manifest says {str(expected.get('sha256'))[:12]}…"
    if size != expected.get("bytes"):
        short = " — truncated" if isinstance(expected.get("bytes"), int) and size < expected["bytes"] else ""
        note += f"; {size} bytes, manifest says {expected.get('bytes')}{short}"
    report.details[rel] = note


#: The fewest hex digits an expected snapshot id may be given by (as a score's fingerprint prefix).
MIN_ID_PREFIX = 6


def _expected_id(manifest: dict[str, Any], expect_id: str | None, known: Iterable[str] = ()) -> list[str]:
    """The problem of a snapshot whose id is not ``expect_id``: a whole id, or a prefix of one that
    names one snapshot among the manifest's and ``known`` (ids recorded elsewhere, e.g. the
    warehouse's snapshot table); a prefix several of them begin with is refused, naming them."""
    if expect_id is None:
        return []
    text = expect_id.strip().lower()
    if not (MIN_ID_PREFIX <= len(text) <= 64 and all(c in "0123456789abcdef" for c in text)):
        raise SnapshotError(
            f"--expect-id {expect_id[:80]!r} is not a snapshot id nor a prefix of one"
            f" ({MIN_ID_PREFIX} to 64 hex digits)"
        )
    own = manifest["snapshot_id"]
    matches = sorted({i for i in (own, *known) if i.startswith(text)})
    if len(matches) > 1:
        raise SnapshotError(
            f"--expect-id {text} is ambiguous: snapshots {', '.join(matches)} begin with it; give more digits"
        )
    if own.startswith(text):
        return []
    return [f"snapshot id {own[:16]}… is not the expected {text[:16]}… (a re-sealed or different snapshot)"]


def recorded_snapshot_ids(con: duckdb.DuckDBPyConnection) -> list[str]:
    """The ids of the snapshots a warehouse recorded (what an expected id's prefix is checked against)."""
    return [i for (i,) in con.execute("SELECT snapshot_id FROM snapshot ORDER BY 1").fetchall()]


def verify_snapshot(
    path: str | os.PathLike[str], *, expect_id: str | None = None, known_ids: Iterable[str] = ()
) -> VerifyReport:
    """Re-hash every file; report changed, missing and extra files and an edited manifest.

    ``expect_id`` (the id an analysis recorded, or an unambiguous prefix of it among the
    manifest's id and ``known_ids``) must name the manifest's: a manifest is self-consistent by
    construction, since anyone can recompute its id and seal, so only an id known from elsewhere
    says the snapshot is the one meant. The manifest counts among the files checked (its bytes,
    id and seal are). Raises :class:`SnapshotError` only when ``path`` is not a readable snapshot
    at all (or its manifest is malformed, or ``expect_id`` is not an id or is ambiguous).
    """
    manifest, raw = load_manifest(path)
    problems = _expected_id(manifest, expect_id, known_ids) + _manifest_problems(manifest, raw)
    report = VerifyReport(Path(path), manifest, manifest_problems=problems, checked=1, bytes_checked=len(raw))
    files = sorted(manifest["files"].items())
    for rel, expected in progress.each(files, "snapshot verify: files", total=len(files)):
        if _unsafe(rel):
            continue  # reported as a manifest problem; never read outside the folder
        if not isinstance(expected, dict):
            report.changed.append(rel)
            report.details[rel] = "its manifest entry is not an object"
            continue
        _check_file(report, rel, expected)
    report.extra = [rel for rel in tree_files(report.path) if rel not in manifest["files"]]
    return report


def require_verified(path: str | os.PathLike[str], *, expect_id: str | None = None) -> VerifyReport:
    """Verify, and refuse (with every problem named) a snapshot that does not match its manifest."""
    report = verify_snapshot(path, expect_id=expect_id)
    if not report.ok:
        raise SnapshotError(f"{path} failed verification: " + "; ".join(report.problems()))
    return report
