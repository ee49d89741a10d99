"""Freezing the warehouse: content-hashed Parquet + EEE exports of it that verify and reload.

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
import os
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, ClassVar
from urllib.parse import quote

import duckdb

from evalhouse.common import progress
from evalhouse.common.naming import NAME_MAX_BYTES, bounded_name
from evalhouse.common.resources import read_sql
from evalhouse.common.staging import staged_folder
from evalhouse.config import duckdb_config
from evalhouse.curation.registry import load_registry
from evalhouse.version import __version__
from evalhouse.warehouse.db import Warehouse, views
from evalhouse.warehouse.eee_export import export_tree
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.format import (
    FORMAT,
    FORMAT_VERSION,
    MANIFEST,
    content_id,
    file_sha256,
    manifest_bytes,
    seal,
    tree_files,
)
from evalhouse.warehouse.snapshot.manifest import SnapshotError
from evalhouse.warehouse.snapshot.reader import relation_sql, scalar
from evalhouse.warehouse.snapshot.write import (
    CHUNKABLE_TYPES,
    LOCAL_VIEWS,
    copy_chunks,
    copy_local_view,
    local_predicates,
    quote_ident,
    range_predicates,
)

EEE_DIR = "eee"
PARTITION_BY = {"score_value": "source_key"}
PARQUET = {"compression": "zstd", "compression_level": 3, "row_group_size": 122_880, "threads": 1}
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


def packaged_sql(name: str) -> str:
    return read_sql("evalhouse.warehouse", name)


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
        scratch = duckdb.connect(config=duckdb_config())
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
