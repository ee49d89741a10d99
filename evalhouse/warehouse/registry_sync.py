"""Copy the YAML registries into their warehouse tables, so SQL views and users can join them.

Runs before every load. It is cheap (a few hundred rows) and idempotent: when the stored
``registry_version`` setting equals the packaged registry's version nothing is written. Rows a
load added provisionally (self-describing EEE records) are left alone.
"""

from __future__ import annotations

import duckdb

from evalhouse.curation.registry import Registry, load_registry, normalise_alias
from evalhouse.warehouse.db import first_row
from evalhouse.warehouse.insert import insert_rows

REGISTRY_SETTING = "registry_version"


def sync_registry(con: duckdb.DuckDBPyConnection, registry: Registry | None = None) -> bool:
    """Write the registry into the tables; True when something changed."""
    registry = registry or load_registry()
    stored = first_row(con, "SELECT value FROM curation_setting WHERE key = ?", [REGISTRY_SETTING])
    if stored is not None and stored[0] == registry.version:
        return False
    version = registry.version
    con.execute("DELETE FROM benchmark WHERE registry_version NOT LIKE 'provisional:%'")
    con.execute("DELETE FROM metric WHERE registry_version NOT LIKE 'provisional:%'")
    for table in ("benchmark_family", "benchmark_alias", "metric_alias", "release_date_kind"):
        con.execute(f"DELETE FROM {table}")
    insert_rows(
        con,
        "benchmark_family",
        [{"family_id": f.id, "name": f.name, "description": f.description} for f in registry.families.values()],
    )
    insert_rows(
        con,
        "benchmark",
        [
            {
                "benchmark_id": b.id,
                "display_name": b.name,
                "family_id": b.family,
                "version": b.version,
                "derived_from": b.derived_from,
                "modality": b.modality,
                "language": b.language,
                "subjects": list(b.subjects),
                "is_composite": b.is_composite,
                "description": b.description,
                "paraphrase": b.paraphrase,
                "canonical_metric": b.canonical_metric,
                "registry_version": version,
            }
            for b in registry.benchmarks.values()
        ],
        or_ignore=True,
    )
    insert_rows(
        con,
        "benchmark_alias",
        [
            {"alias": alias, "source_key": scope, "benchmark_id": bench_id}
            for (scope, alias), bench_id in registry.benchmark_aliases.items()
        ],
    )
    insert_rows(
        con,
        "metric",
        [
            {
                "metric_id": m.id,
                "kind": m.kind,
                "unit": m.unit,
                "min_value": m.bounds[0],
                "max_value": m.bounds[1],
                "lower_is_better": m.lower_is_better,
                "description": m.description,
                "registry_version": version,
            }
            for m in registry.metrics.values()
        ],
        or_ignore=True,
    )
    insert_rows(
        con,
        "metric_alias",
        [{"alias": normalise_alias(a), "metric_id": m} for a, m in registry.metric_aliases.items()],
    )
    insert_rows(
        con,
        "release_date_kind",
        [
            {"kind": k.kind, "rank": k.rank, "lower_bound": k.lower_bound, "description": k.description}
            for k in registry.evidence_kinds.values()
        ],
    )
    con.execute(
        "INSERT INTO curation_setting (key, value, reason) VALUES (?, ?, 'registry files synchronised')"
        " ON CONFLICT (key) DO UPDATE SET value = excluded.value, updated_at = now()",
        [REGISTRY_SETTING, version],
    )
    return True
