"""One model, named any way a user would name it: its configurations, scores, sources side by side."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

import duckdb

from evalhouse.common.choices import require_choice, suggest
from evalhouse.curation.names import resolve
from evalhouse.curation.registry import Registry, load_registry, normalise_alias
from evalhouse.warehouse.audit.queries import AuditError, as_json, rows


@dataclass
class ModelMatch:
    query: str
    matched_by: str
    config_ids: list[str] = field(default_factory=list)


def resolve_model_name(con: duckdb.DuckDBPyConnection, name: str, registry: Registry | None = None) -> ModelMatch:
    """Configurations ``name`` refers to: a config id, a source model id, a model name, a base model
    id (best kind of match first); failing all, the base model the identity rules give the name."""
    hits = rows(con, "audit_resolve_model.sql", name=name)
    if hits:
        best = hits[0]["rank"]
        chosen = [h for h in hits if h["rank"] == best]
        return ModelMatch(name, chosen[0]["matched_by"], list(dict.fromkeys(h["config_id"] for h in chosen)))
    ident = resolve(name, registry or load_registry())
    base = ident.base_model
    configs = [
        r[0]
        for r in con.execute(
            "SELECT config_id FROM model_config WHERE base_model_id = ? ORDER BY config_id", [base]
        ).fetchall()
    ]
    if not configs and (ident.developer_inferred or base.startswith("unknown/")):
        # A name typed without its developer: the same key under any developer.
        key = base.split("/", 1)[-1]
        configs = [
            r[0]
            for r in con.execute(
                "SELECT config_id FROM model_config WHERE split_part(base_model_id, '/', 2) = ? ORDER BY config_id",
                [key],
            ).fetchall()
        ]
    if not configs:
        known = [r[0] for r in con.execute(
            "SELECT config_id FROM model_config UNION SELECT model_name FROM evaluation WHERE model_name IS NOT NULL"
        ).fetchall()]  # fmt: skip
        hints = suggest(name, known)
        hint = f"; did you mean {' or '.join(repr(h) for h in hints)}?" if hints else ""
        raise AuditError(
            f"no model matches {name!r} as a config id, source model id, model name or base model id "
            f"(the identity rules give base model {base!r}, which has no configurations either){hint}"
        )
    return ModelMatch(name, f"identity rules (base model {base!r})", configs)


def resolve_benchmark(con: duckdb.DuckDBPyConnection, name: str, registry: Registry | None = None) -> str:
    """A benchmark id for what a user typed: an id, a registry name or alias, a raw source name.

    Unknown names are an input error naming the closest benchmarks.
    """
    registry = registry or load_registry()
    bench = registry.benchmark_for(name)
    if bench is not None:
        return bench.id
    known = con.execute(
        "SELECT benchmark_id, display_name FROM benchmark UNION SELECT DISTINCT benchmark_id, benchmark_raw FROM score"
    ).fetchall()
    key = normalise_alias(name)
    for bench_id, display in known:
        if key in (normalise_alias(bench_id), normalise_alias(display or "")):
            return str(bench_id)
    return require_choice(name, [b for b, _ in known], "benchmark")


def model_report(
    con: duckdb.DuckDBPyConnection, name: str, benchmark: str | None = None, registry: Registry | None = None
) -> dict[str, Any]:
    """A model's scores (optionally for one benchmark) with their chains, the value every source
    gives each cell side by side, and its release dates."""
    match = resolve_model_name(con, name, registry)
    benchmark_id = resolve_benchmark(con, benchmark, registry) if benchmark else None
    configs = _rows_for_configs(con, match.config_ids)
    scores = rows(con, "audit_model_scores.sql", config_ids=match.config_ids, benchmark=benchmark_id)
    for row in scores:
        row["canonical_steps"] = as_json(row["canonical_steps"]) or []
    bases = sorted({c["base_model_id"] for c in configs if c["base_model_id"]})
    return {
        "query": name,
        "matched_by": match.matched_by,
        "benchmark": benchmark_id,
        "configs": configs,
        "other_configs_of_base_models": _sibling_configs(con, bases, match.config_ids),
        "side_by_side": side_by_side(scores),
        "scores": scores,
        "release_dates": rows(con, "audit_release_dates.sql", base_model_ids=bases),
    }


def side_by_side(scores: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """Current scores grouped by benchmark × subset × metric: each source's value and tier."""
    groups: dict[tuple[Any, ...], dict[str, Any]] = {}
    for s in scores:
        if not s["is_current"]:
            continue
        key = (s["benchmark_id"], s["subset"], s["metric_id"])
        group = groups.setdefault(
            key, {"benchmark_id": key[0], "subset": key[1], "metric_id": key[2], "unit": s["unit"], "values": []}
        )
        group["values"].append(
            {
                "source": s["source_key"],
                "tier": s["source_tier"],
                "evaluated_by": s["evaluated_by"],
                "config_id": s["config_id"],
                "setup_key": s["setup_key"],
                "value": s["value"],
                "score_id": s["score_id"],
            }
        )
    out = sorted(groups.values(), key=lambda g: (-len({v["source"] for v in g["values"]}), g["benchmark_id"]))
    for g in out:
        g["n_sources"] = len({v["source"] for v in g["values"]})
    return out


def _sibling_configs(con: duckdb.DuckDBPyConnection, base_model_ids: list[str], config_ids: list[str]) -> list[str]:
    """Configurations of the same base models left out: a user typing the base name may mean them."""
    found = con.execute(
        "SELECT config_id FROM model_config WHERE list_contains(?, base_model_id)"
        " AND NOT list_contains(?, config_id) ORDER BY config_id",
        [base_model_ids, config_ids],
    ).fetchall()
    return [r[0] for r in found]


def _rows_for_configs(con: duckdb.DuckDBPyConnection, config_ids: list[str]) -> list[dict[str, Any]]:
    cursor = con.execute(
        "SELECT mc.config_id, mc.name, mc.base_model_id, bm.family_id, bm.developer_id, bm.derived_from,"
        " (SELECT count(*) FROM score s WHERE s.config_id = mc.config_id) AS n_scores"
        " FROM model_config mc LEFT JOIN base_model bm USING (base_model_id)"
        " WHERE list_contains(?, mc.config_id) ORDER BY mc.config_id",
        [config_ids],
    )
    columns = [d[0] for d in cursor.description]
    return [dict(zip(columns, row, strict=True)) for row in cursor.fetchall()]
