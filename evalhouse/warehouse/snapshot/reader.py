"""Opening a snapshot: a read-only DuckDB connection over its verified Parquet files, with the views.

The tables are views over ``read_parquet`` of the very files the manifest hashes
(:func:`relation_sql`, which creating and comparing snapshots read their files with too); the
warehouse's views are built over them, frozen ones read from their own files.
"""

from __future__ import annotations

import os
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING, Any

import duckdb

from evalhouse.config import duckdb_config
from evalhouse.warehouse.db import views
from evalhouse.warehouse.snapshot.manifest import SnapshotError, identifier, safe_relpath, sql_type
from evalhouse.warehouse.snapshot.verify import linked, load_manifest, require_verified
from evalhouse.warehouse.snapshot.write import quote_ident, quote_literal

if TYPE_CHECKING:
    import pandas as pd


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any] | None = None) -> Any:
    """The first value of a query, with the result fully consumed (DuckDB 2 otherwise keeps a
    half-read result open on the connection and a later statement can fail on it)."""
    rows = con.execute(sql, params or []).fetchall()
    return rows[0][0] if rows else None


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
    if safe_relpath(rel) is not None or not target.is_relative_to(base) or linked(base, rel):
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
    con = duckdb.connect(str(catalog), config=duckdb_config())
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
        return duckdb.connect(str(catalog), read_only=True, config=duckdb_config())
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
