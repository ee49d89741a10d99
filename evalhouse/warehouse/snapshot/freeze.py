"""Frozen snapshots: content-hashed Parquet + EEE exports of the warehouse that verify and reload.

Analyses run on a snapshot id, never on a moving warehouse. A snapshot folder holds every
canonical table and the analysis-facing ``v_*`` views as Parquet (``score_value`` hive-partitioned
by ``source_key``; ``score`` and the per-score views are rebuilt from their SQL on open), the
records as an EEE datastore tree under ``eee/``, and ``manifest.json`` with each file's sha256 and
row count. The snapshot id is the sha256 of the manifest's *content*
fields, so the same warehouse state always gets the same id, and ``verify`` can tell a changed,
missing or extra file by name.

Why the bytes are reproducible: rows are sorted by primary key (by every column when there is
none), the Parquet writer runs on one thread with fixed settings (DuckDB's output with several
threads depends on the scheduling), partition files get a fixed name pattern, and the manifest
leaves out everything that depends on the clock or the folder (``created_at``, the path). The
``name`` is a label, not content: the same state frozen twice under two names is one snapshot.
Timestamp columns of the warehouse (``loaded_at``, ``registered_at``...) are kept: they are part of
the warehouse state, so they change only when the state does.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import shutil
import tempfile
from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, Any, ClassVar
from urllib.parse import quote

import duckdb

from evalhouse.common import progress
from evalhouse.common.naming import NAME_MAX_BYTES, bounded_name
from evalhouse.common.resources import read_sql
from evalhouse.common.staging import staged_folder
from evalhouse.curation.registry import load_registry
from evalhouse.version import __version__
from evalhouse.warehouse.db import Warehouse, views
from evalhouse.warehouse.eee_export import export_tree
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.manifest import (
    MAX_MANIFEST_BYTES,
    SnapshotError,
    check_manifest,
    identifier,
    safe_relpath,
    sql_type,
)
from evalhouse.warehouse.snapshot.write import (
    CHUNKABLE_TYPES,
    LOCAL_VIEWS,
    copy_chunks,
    copy_local_view,
    local_predicates,
    quote_ident,
    quote_literal,
    range_predicates,
)

if TYPE_CHECKING:
    import pandas as pd

FORMAT = "evalhouse-snapshot"
FORMAT_VERSION = 3
# 1: every view frozen and the records as a datastore tree only; 2: ``score`` a table of its own
READS_FORMATS = (1, 2, 3)
MANIFEST = "manifest.json"
EEE_DIR = "eee"
PARTITION_BY = {"score_value": "source_key"}
PARQUET = {"compression": "zstd", "compression_level": 3, "row_group_size": 122_880, "threads": 1}
# Manifest fields that are not content: the id itself, its seal, the label and the clock.
NOT_CONTENT = ("snapshot_id", "seal_sha256", "name", "created_at")
EXCLUDED = {
    "_migrations": "represented by schema_version and migrations in the manifest",
    "snapshot": "the register of snapshots; including it would change the next snapshot's id",
    "analysis_run": "results fitted on a snapshot (they cite its id), not inputs to one",
}
EXCLUDED_PREFIXES = ("_", "analysis_")
#: Views with one row per score (``score`` itself joins ``score_value`` to its record, group and
#: setup; a frozen copy of any of them would be another copy of the scores) and
#: ``v_scores_by_family`` (a frozen ``v_scores_canonical`` again, with two columns of ``benchmark``
#: joined on). They are recorded (columns, SQL hash) and built from their SQL over the frozen
#: tables and views on open.
DERIVED_VIEWS = frozenset({"score", "v_score_current", "v_cell_candidates", "v_provenance", "v_scores_by_family"})


# -- small helpers --------------------------------------------------------------------------


def packaged_sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    """The first value of a query, with the result fully consumed (DuckDB 2 otherwise keeps a
    half-read result open on the connection and a later statement can fail on it)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None


def canonical_json(value: Any) -> bytes:
    """The bytes the id is computed over: sorted keys, no whitespace, UTF-8."""
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()


def manifest_bytes(manifest: dict[str, Any]) -> bytes:
    """The one serialisation evalhouse writes (so any hand edit, even of spacing, is visible)."""
    return (json.dumps(manifest, sort_keys=True, indent=2, ensure_ascii=False) + "\n").encode()


def content_id(manifest: dict[str, Any]) -> str:
    """sha256 of the content fields: equal for two snapshots of the same warehouse state."""
    content = {k: v for k, v in manifest.items() if k not in NOT_CONTENT}
    return hashlib.sha256(canonical_json(content)).hexdigest()


def seal(manifest: dict[str, Any]) -> str:
    """sha256 of every field but the seal, so an edit to the label or the clock is caught too."""
    return hashlib.sha256(canonical_json({k: v for k, v in manifest.items() if k != "seal_sha256"})).hexdigest()


def file_sha256(path: Path) -> str:
    with open(path, "rb") as fh:
        return hashlib.file_digest(fh, "sha256").hexdigest()


def tree_files(root: Path) -> list[str]:
    """Every regular file under ``root`` as a sorted relative POSIX path, the manifest excluded."""
    found = []
    for dirpath, _dirs, files in os.walk(root):
        for name in files:
            rel = (Path(dirpath) / name).relative_to(root).as_posix()
            if rel != MANIFEST:
                found.append(rel)
    return sorted(found)


# -- what goes in ---------------------------------------------------------------------------


@dataclass(frozen=True)
class Relation:
    """A table or view to freeze: its columns, sort key and (for ``score``) partition column."""

    name: str
    kind: str  # "table" or "view"
    columns: list[list[str]]
    primary_key: list[str]
    partition_by: str | None = None
    sql: str | None = None  # a view's CREATE statement (views() order is dependency order)
    not_partitioned: str | None = None  # why a table of PARTITION_BY is written without its folders

    @property
    def derived(self) -> bool:
        """A view built on open from its SQL, not written (see :data:`DERIVED_VIEWS`)."""
        return self.kind == "view" and self.name in DERIVED_VIEWS

    @property
    def sql_sha256(self) -> str | None:
        return hashlib.sha256(self.sql.encode()).hexdigest() if self.sql else None

    @property
    def order_by(self) -> str:
        return ", ".join(quote_ident(c) for c in self.primary_key) if self.primary_key else "ALL"


def _included(name: str) -> bool:
    return name not in EXCLUDED and not name.startswith(EXCLUDED_PREFIXES)


def relations(con: duckdb.DuckDBPyConnection) -> list[Relation]:
    """Every base table but the internal ones, then every ``v_*`` view that ``views()`` ships."""
    found = [
        Relation(name, "table", columns, list(pk or []), PARTITION_BY.get(name))
        for name, columns, pk in con.execute(packaged_sql("snapshot_tables.sql"), ["BASE TABLE"]).fetchall()
        if _included(name)
    ]
    described = {
        name: columns for name, columns, _ in con.execute(packaged_sql("snapshot_tables.sql"), ["VIEW"]).fetchall()
    }
    for name, sql in views():
        if name not in described:
            raise SnapshotError(f"view {name} is not in the warehouse; open it for writing once to create it")
        found.append(Relation(name, "view", described[name], [], None, sql))
    return found


def partition_folder(column: str, value: object) -> str:
    """The folder DuckDB's hive writer names for ``column = value`` (its value percent-encoded)."""
    return f"{column}={quote(str(value), safe='-_.~')}"


def fit_partitions(con: duckdb.DuckDBPyConnection, rel: Relation) -> Relation:
    """``rel`` as written: without partition folders when one of them would be longer than a file
    system allows (:data:`~evalhouse.common.naming.NAME_MAX_BYTES`), the reason recorded in the
    manifest's entry. Every row is then in the table's own files (the partition column included),
    read without hive partitioning; a warehouse with such a value still freezes."""
    if not rel.partition_by:
        return rel
    col = quote_ident(rel.partition_by)
    values = [v for (v,) in con.execute(f"SELECT DISTINCT {col} FROM {quote_ident(rel.name)}").fetchall()]
    long = [v for v in values if len(partition_folder(rel.partition_by, v).encode()) > NAME_MAX_BYTES]
    if not long:
        return rel
    first = str(long[0])
    why = (
        f"{len(long)} value(s) of {rel.partition_by} would name a folder longer than {NAME_MAX_BYTES} bytes "
        f"(e.g. {first[:60]!r}…, {len(first.encode())} bytes), so the table is written unpartitioned"
    )
    return dataclasses.replace(rel, partition_by=None, not_partitioned=why)


def excluded_tables(con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """The base tables a snapshot leaves out, each with the reason (recorded in the manifest)."""
    names = [r[0] for r in con.execute(packaged_sql("snapshot_tables.sql"), ["BASE TABLE"]).fetchall()]
    return {
        name: EXCLUDED.get(name, "internal: its name starts with _ or analysis_")
        for name in names
        if not _included(name)
    }


# -- create ---------------------------------------------------------------------------------


@dataclass
class CreatedSnapshot:
    path: Path
    manifest: dict[str, Any]
    previous_path: str | None = None  # where the same id had been recorded before, if anywhere

    @property
    def snapshot_id(self) -> str:
        return self.manifest["snapshot_id"]

    @property
    def total_bytes(self) -> int:
        return sum(f["bytes"] for f in self.manifest["files"].values()) + len(manifest_bytes(self.manifest))


def _writer_options() -> str:
    return (
        f"FORMAT parquet, COMPRESSION {PARQUET['compression']}, "
        f"COMPRESSION_LEVEL {PARQUET['compression_level']}, ROW_GROUP_SIZE {PARQUET['row_group_size']}"
    )


def _write_relation(
    con: duckdb.DuckDBPyConnection, rel: Relation, staging: Path, predicates: list[str] | None = None
) -> None:
    """Sorted ``COPY``s of the relation: ``<name>[/<col>=<value>]/data_<j>.parquet``.

    A table larger than :data:`~evalhouse.warehouse.snapshot.write.CHUNK_ROWS` is written in
    ranges of its first key column (bounded memory); ``predicates`` gives the ranges explicitly.
    """
    if predicates is None:
        predicates = ["true"]
        first = dict(map(tuple, rel.columns)).get(rel.primary_key[0]) if rel.primary_key else None
        if first in CHUNKABLE_TYPES:
            rows = int(scalar(con, f"SELECT count(*) FROM {quote_ident(rel.name)}"))
            predicates = range_predicates(con, quote_ident(rel.name), rel.primary_key[0], rows)
    copy_chunks(
        con,
        f"SELECT * FROM {quote_ident(rel.name)}",
        rel.order_by,
        staging / rel.name,
        _writer_options(),
        predicates=predicates,
        partition_by=rel.partition_by,
    )


class _WriterSettings:
    """Run the writer on one thread: with more, DuckDB's row groups (and bytes) vary run to run.

    The progress bar goes too: it would print into ``--json`` output on long copies.
    """

    SETTINGS: ClassVar[dict[str, str]] = {
        "threads": "1",
        "preserve_insertion_order": "true",
        "enable_progress_bar": "false",
    }

    def __init__(self, con: duckdb.DuckDBPyConnection) -> None:
        self.con = con
        self.saved: dict[str, str] = {}

    def __enter__(self) -> None:
        for key, value in self.SETTINGS.items():
            self.saved[key] = str(scalar(self.con, f"SELECT current_setting('{key}')")).lower()
            self.con.execute(f"SET {key} = {value}")

    def __exit__(self, *exc: object) -> None:
        for key, value in self.saved.items():
            self.con.execute(f"SET {key} = {value}")


def _file_rows(con: duckdb.DuckDBPyConnection, path: Path) -> int:
    if path.suffix == ".parquet":
        return int(scalar(con, "SELECT sum(num_rows) FROM parquet_file_metadata(?)", [str(path)]) or 0)
    if path.suffix == ".jsonl":
        return sum(1 for line in path.read_bytes().splitlines() if line.strip())
    return 1  # one EEE aggregate record per .json file


def _files(con: duckdb.DuckDBPyConnection, staging: Path) -> dict[str, dict[str, Any]]:
    return {
        rel: {
            "sha256": file_sha256(staging / rel),
            "bytes": (staging / rel).stat().st_size,
            "rows": _file_rows(con, staging / rel),
        }
        for rel in tree_files(staging)
    }


def _relation_entry(rel: Relation, files: dict[str, dict[str, Any]]) -> dict[str, Any]:
    mine = [p for p in files if p.startswith(f"{rel.name}/") and p.endswith(".parquet")]
    entry: dict[str, Any] = {
        "kind": rel.kind,
        "columns": rel.columns,
        "primary_key": rel.primary_key,
        "files": mine,
        "rows": sum(files[p]["rows"] for p in mine),
    }
    if rel.partition_by:
        entry["partition_by"] = rel.partition_by
    if rel.not_partitioned:
        entry["not_partitioned"] = rel.not_partitioned
    if rel.sql_sha256:
        entry["sql_sha256"] = rel.sql_sha256
    if rel.derived:
        entry["derived"] = True
        del entry["rows"]  # not stored: a function of the tables beside it
    return entry


def warehouse_facts(wh: Warehouse) -> dict[str, Any]:
    """What the manifest says about the warehouse the snapshot was taken from (not the clock)."""
    registry = load_registry()
    con = wh.con
    return {
        "evalhouse_version": __version__,
        "duckdb_version": duckdb.__version__,  # the Parquet bytes name the writer's version
        "schema_version": wh.schema_version(),
        "migrations": [
            {"version": v, "name": n, "sha256": s}
            for v, n, s in con.execute("SELECT version, name, sha256 FROM _migrations ORDER BY version").fetchall()
        ],
        "registry": {
            "version": registry.version,
            "files": dict(sorted(registry.versions.items())),
            "content_sha256": registry.content_sha256,
        },
        "registry_versions_in_data": [
            r[0]
            for r in con.execute(
                "SELECT DISTINCT registry_version FROM ingest_run WHERE registry_version IS NOT NULL ORDER BY 1"
            ).fetchall()
        ],
        "ingest_runs": [r[0] for r in con.execute("SELECT run_id FROM ingest_run ORDER BY run_id").fetchall()],
        "excluded_tables": excluded_tables(con),
    }


def build_manifest(  # noqa: PLR0913 - the manifest's parts, each its own argument
    facts: dict[str, Any],
    rels: list[Relation],
    files: dict[str, dict[str, Any]],
    eee: dict[str, Any],
    *,
    name: str | None,
    created_at: datetime,
) -> dict[str, Any]:
    """The manifest with its id and seal filled in."""
    manifest: dict[str, Any] = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "name": name,
        "created_at": created_at.astimezone(UTC).isoformat(timespec="seconds").replace("+00:00", "Z"),
        **facts,
        "parquet": {**PARQUET, "partition_by": PARTITION_BY},
        "tables": {rel.name: _relation_entry(rel, files) for rel in rels},
        "eee": eee,
        "files": files,
    }
    manifest["snapshot_id"] = content_id(manifest)
    manifest["seal_sha256"] = seal(manifest)
    return manifest


def _staged_entry(rel: Relation, staging: Path) -> dict[str, Any]:
    files = sorted(p.relative_to(staging).as_posix() for p in (staging / rel.name).rglob("*.parquet"))
    return {"columns": rel.columns, "files": files, "partition_by": rel.partition_by}


def _materialise_views(con: duckdb.DuckDBPyConnection, staging: Path, rels: list[Relation]) -> None:
    """Write each view once, computed from the frozen table files rather than the warehouse.

    Each view's SQL runs over the staged Parquet, then the view is replaced by its own frozen
    file, so a view that depends on another reads it instead of recomputing the whole chain
    (at 10^6 scores that halves the time), and every materialised view is by construction a
    function of the tables beside it. A view of :data:`LOCAL_VIEWS` is computed per range of its
    input (bounded memory) when the data allows it.
    """
    staged = {rel.name: relation_sql(staging, _staged_entry(rel, staging)) for rel in rels if rel.kind == "table"}
    for name, sql in staged.items():
        con.execute(f"CREATE VIEW {quote_ident(name)} AS {sql}")
    inputs = {local.table for local in LOCAL_VIEWS.values()}
    for rel in progress.each(rels, "snapshot create: views", total=len(rels), note=lambda r: r.name):
        if rel.kind == "view" and rel.sql:
            con.execute(rel.sql)
            if rel.derived:
                if rel.name in inputs:  # a local view narrows it per range: keep the whole under another name
                    whole = quote_ident(f"_whole_{rel.name}")
                    con.execute(f"ALTER VIEW {quote_ident(rel.name)} RENAME TO {whole}")
                    staged[rel.name] = f"SELECT * FROM {whole}"
                    con.execute(f"CREATE VIEW {quote_ident(rel.name)} AS {staged[rel.name]}")
                continue  # later views read it over the staged tables; it is not written
            local = LOCAL_VIEWS.get(rel.name)
            if local is not None and local.table in staged:
                rows = int(scalar(con, f"SELECT count(*) FROM {quote_ident(local.table)}"))
                predicates = local_predicates(con, local, rows)
                copy_local_view(
                    con,
                    rel.name,
                    rel.order_by,
                    staging / rel.name,
                    _writer_options(),
                    local=local,
                    table_sql=staged[local.table],
                    predicates=predicates,
                )
            else:
                _write_relation(con, rel, staging)
            frozen = relation_sql(staging, _staged_entry(rel, staging))
            con.execute(f"CREATE OR REPLACE VIEW {quote_ident(rel.name)} AS {frozen}")


def _check_target(out_dir: Path) -> None:
    """A snapshot never overwrites: ``out_dir`` must be new or an empty folder."""
    if out_dir.exists() and (not out_dir.is_dir() or any(out_dir.iterdir())):
        raise SnapshotError(f"{out_dir} already exists and is not an empty folder; a snapshot never overwrites")


def _export_eee(wh: Warehouse, staging: Path, store: RawStore, *, tree: bool) -> dict[str, Any]:
    """The records: one JSON Lines file per collection, each record as the warehouse stores it
    (``evaluation.record``, written as it is), or with ``tree`` the EEE datastore layout."""
    if tree:
        summary = export_tree(wh, staging / EEE_DIR, store)
        eee = {
            "root": EEE_DIR,
            "layout": "datastore",
            "records": summary.written,
            "samples_files": summary.samples,
            "skipped": [list(s) for s in [*summary.skipped, *summary.failed]],
        }
        if summary.shortened:  # (only then: the ids of snapshots without one stay as they were)
            eee["shortened"] = [list(s) for s in summary.shortened]
        return eee
    root = staging / EEE_DIR
    root.mkdir()
    records = 0
    shortened = {}
    for (collection,) in wh.con.execute("SELECT DISTINCT collection FROM evaluation ORDER BY 1").fetchall():
        label = bounded_name(collection or "_none", reserve=len(".jsonl"))
        if label != (collection or "_none"):
            shortened[collection] = f"{label}.jsonl"
        cursor = wh.con.execute(
            "SELECT record FROM evaluation WHERE collection IS NOT DISTINCT FROM ? ORDER BY evaluation_id", [collection]
        )
        with (root / f"{label}.jsonl").open("w", encoding="utf-8", newline="\n") as fh:
            while chunk := cursor.fetchmany(5000):
                fh.writelines(f"{record}\n" for (record,) in chunk)
                records += len(chunk)
    eee = {"root": EEE_DIR, "layout": "jsonl", "records": records, "samples_files": 0, "skipped": []}
    if shortened:  # collection -> its file, when the name was too long for one (only then: ids stay as they were)
        eee["shortened"] = shortened
    return eee


def create_snapshot(  # noqa: PLR0913 - the options after the store are keyword-only
    wh: Warehouse,
    out_dir: str | os.PathLike[str],
    store: RawStore,
    *,
    name: str | None = None,
    created_at: datetime | None = None,
    eee_tree: bool = False,
) -> CreatedSnapshot:
    """Freeze the warehouse into ``out_dir`` and record it in the ``snapshot`` table.

    The records go in as one JSON Lines file per collection; ``eee_tree`` writes the EEE datastore
    layout instead (one file per record, what EEE's own tools read).

    The tables, the EEE tree and the manifest's facts are read in one transaction under the
    writer lock the caller holds, so they describe one state; the views are then computed from
    the frozen table files. The folder is written beside ``out_dir`` and renamed into place
    (:func:`~evalhouse.common.staging.staged_folder`): a failure, a full disk included, leaves no
    folder behind, and what a killed create left is swept by the next one.
    """
    if wh.read_only:
        raise SnapshotError("creating a snapshot records it in the warehouse: open the warehouse for writing")
    out_dir = Path(out_dir).resolve()
    _check_target(out_dir)
    with staged_folder(out_dir) as staging:
        with _WriterSettings(wh.con), wh.transaction() as con:
            rels = [fit_partitions(con, rel) for rel in relations(con)]
            for rel in progress.each(rels, "snapshot create: tables", total=len(rels), note=lambda r: r.name):
                if rel.kind == "table":
                    _write_relation(con, rel, staging)
            eee = _export_eee(wh, staging, store, tree=eee_tree)
            facts = warehouse_facts(wh)
        scratch = duckdb.connect()
        try:
            with _WriterSettings(scratch):
                _materialise_views(scratch, staging, rels)
                files = _files(scratch, staging)
        finally:
            scratch.close()
        manifest = build_manifest(facts, rels, files, eee, name=name, created_at=created_at or datetime.now(UTC))
        (staging / MANIFEST).write_bytes(manifest_bytes(manifest))
    previous = _record(wh, manifest, out_dir)
    return CreatedSnapshot(out_dir, manifest, previous)


def _record(wh: Warehouse, manifest: dict[str, Any], path: Path) -> str | None:
    sid = manifest["snapshot_id"]
    previous = wh.scalar("SELECT path FROM snapshot WHERE snapshot_id = ?", [sid])
    created = datetime.fromisoformat(manifest["created_at"].replace("Z", "+00:00")).replace(tzinfo=None)
    with wh.transaction() as con:
        con.execute(
            packaged_sql("snapshot_record.sql"),
            [sid, manifest["name"], created, str(path), manifest_bytes(manifest).decode()],
        )
    return previous


# -- verify ---------------------------------------------------------------------------------


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


def _linked(root: Path, rel: str) -> bool:
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
    if _linked(report.path, rel):
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


# -- open -----------------------------------------------------------------------------------


def relation_sql(root: Path, entry: dict[str, Any]) -> str:
    """``SELECT`` over the relation's verified Parquet files, columns in the warehouse's order.

    The file list is explicit (not a glob) so only hashed files are read; hive partitioning is on
    only for the partitioned table, so a ``key=value`` folder above the snapshot adds nothing.
    """
    # Names and types come from a manifest, so they are validated here again (whoever calls):
    # identifiers only, types rebuilt from the closed grammar, files inside the folder.
    columns = [(identifier(col, "column"), sql_type(ctype)) for col, ctype in entry["columns"]]
    if not entry["files"]:
        # an empty partitioned table has no files at all: keep its typed, empty shape
        typed = ", ".join(f"CAST(NULL AS {ctype}) AS {quote_ident(col)}" for col, ctype in columns)
        return f"SELECT {typed} WHERE false"
    files = ", ".join(quote_literal(str(_inside(root, f))) for f in entry["files"])
    part = entry.get("partition_by")
    if part:
        ptype = dict(columns)[identifier(part, "partition column")]
        options = f"hive_partitioning = true, hive_types = {{{quote_literal(part)}: {ptype}}}"
    else:
        options = "hive_partitioning = false"
    return f"SELECT {', '.join(quote_ident(c) for c, _ in columns)} FROM read_parquet([{files}], {options})"


def _inside(root: Path, rel: str) -> Path:
    """``root / rel`` resolved, refused unless it is a file inside the snapshot folder."""
    base = root.resolve()
    target = (base / rel).resolve()
    if safe_relpath(rel) is not None or not target.is_relative_to(base) or _linked(base, rel):
        raise SnapshotError(f"{rel[:120]!r} is not a regular file inside the snapshot {base}")
    return target


def _meta_sql(root: Path, manifest: dict[str, Any]) -> str:
    values = {
        "snapshot_id": quote_literal(manifest["snapshot_id"]),
        "name": quote_literal(manifest["name"]) if manifest.get("name") else "CAST(NULL AS VARCHAR)",
        "created_at": f"CAST({quote_literal(manifest['created_at'].rstrip('Z'))} AS TIMESTAMP)",
        "path": quote_literal(str(root.resolve())),
        "schema_version": str(int(manifest["schema_version"])),
        "evalhouse_version": quote_literal(manifest["evalhouse_version"]),
        "registry_version": quote_literal(manifest["registry"]["version"]),
    }
    return "CREATE VIEW snapshot_meta AS SELECT " + ", ".join(f"{v} AS {k}" for k, v in values.items())


def _create_views(con: duckdb.DuckDBPyConnection, root: Path, manifest: dict[str, Any]) -> None:
    """The warehouse's views over the snapshot: the frozen ones, then any added to evalhouse since.

    A frozen view is the warehouse's view SQL (its sha256 is in the manifest) run over the very
    table files beside it at creation, so reading it gives what the SQL would, without
    recomputing the chain on every query (seconds per query at 10^6 scores), and a snapshot id
    keeps meaning one set of values when a later evalhouse changes a view. A view added to
    evalhouse after the snapshot is created from its SQL when the tables it reads are there.
    """
    frozen = {n: e for n, e in manifest["tables"].items() if e["kind"] == "view" and not e.get("derived")}
    for name, entry in frozen.items():
        con.execute(f"CREATE VIEW {quote_ident(name)} AS {relation_sql(root, entry)}")
    for name, sql in views():
        if name in frozen:
            continue
        try:
            con.execute(sql)
        except duckdb.Error:
            continue  # a newer view over tables (or columns) this snapshot does not have


def _build_catalog(catalog: Path, root: Path, manifest: dict[str, Any]) -> None:
    con = duckdb.connect(str(catalog))
    try:
        for name, entry in manifest["tables"].items():
            if entry["kind"] == "table":
                con.execute(f"CREATE VIEW {quote_ident(name)} AS {relation_sql(root, entry)}")
        _create_views(con, root, manifest)
        con.execute(_meta_sql(root, manifest))
    finally:
        con.close()


def open_snapshot(
    path: str | os.PathLike[str], *, verify: bool = True, expect_id: str | None = None
) -> duckdb.DuckDBPyConnection:
    """A read-only DuckDB connection over a snapshot's Parquet files with the warehouse's views.

    The snapshot is verified first and a corrupted one is refused. The tables and views are
    views over ``read_parquet`` in a catalog file that is reopened read-only (an in-memory
    database cannot be), so CREATE/INSERT/UPDATE on them fail; temporary tables still work as
    scratch space. ``SELECT snapshot_id FROM snapshot_meta`` (or :func:`snapshot_id`) gives the
    id to record with an analysis. ``verify=False`` skips the re-hash for a snapshot you have just
    verified yourself. ``expect_id`` (the id an analysis recorded) refuses any other snapshot,
    a re-sealed one included; it implies ``verify``.
    """
    root = Path(path).resolve()
    if verify or expect_id is not None:
        manifest = require_verified(root, expect_id=expect_id).manifest
    else:
        manifest, _ = load_manifest(root)
    tmp = Path(tempfile.mkdtemp(prefix="evalhouse-snapshot-"))
    try:
        catalog = tmp / "snapshot.duckdb"
        _build_catalog(catalog, root, manifest)
        # Once open, the catalog is in memory and the file can go (the descriptor keeps it).
        return duckdb.connect(str(catalog), read_only=True)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def snapshot_id(con: duckdb.DuckDBPyConnection) -> str:
    """The id of the snapshot behind a connection from :func:`open_snapshot`."""
    return scalar(con, "SELECT snapshot_id FROM snapshot_meta")


def snapshot_frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> pd.DataFrame:
    """A query result as a DataFrame carrying ``attrs['snapshot_id']``, which analyses record."""
    frame = con.execute(sql, params or []).df()
    frame.attrs["snapshot_id"] = snapshot_id(con)
    return frame
