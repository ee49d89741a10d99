"""Near misses: cells of one base model and benchmark that did not meet, and what kept them apart.

Two results meet in one cell when their configuration, benchmark, subset, metric, metric
parameters and the defining part of their setup (the setup policy) are the same. When a user asks
why two sources' numbers for a model sit in two cells, this names the parts of the key that
differ: the configuration (another snapshot, effort or precision), the benchmark (and the
benchmark link that keeps them apart, when ``benchmark_links.yaml`` has one), the subset, the
metric or its parameters, and each setup field that one states and the other does not, or states
otherwise. Cells are compared across the configurations of the same base model and, when a
benchmark is named, across the benchmarks of its family and its links.
"""

from __future__ import annotations

from itertools import combinations
from typing import Any

import duckdb

from evalhouse.curation.registry import Registry, load_registry
from evalhouse.warehouse.audit.queries import as_json, rows

#: Pairs listed at most (the nearest first: the fewest parts apart).
MAX_PAIRS = 50


def related_benchmarks(con: duckdb.DuckDBPyConnection, benchmark_id: str, registry: Registry) -> list[str]:
    """The benchmark, the members of its family and the benchmarks its links name (those the
    warehouse knows: a namespaced benchmark a link makes another loads as that one)."""
    family = con.execute(
        "SELECT family_id FROM benchmark WHERE benchmark_id = ? AND family_id IS NOT NULL", [benchmark_id]
    ).fetchall()
    related = {benchmark_id}
    if family:
        members = con.execute("SELECT benchmark_id FROM benchmark WHERE family_id = ?", [family[0][0]]).fetchall()
        related |= {r[0] for r in members}
    links = registry.benchmark_links
    if links is not None:
        for link in links.about(related):
            related |= {link.benchmark, link.target}
    known = {r[0] for r in con.execute("SELECT benchmark_id FROM benchmark").fetchall()}
    return sorted(b for b in related if b in known or b == benchmark_id)  # a linked namespace loads as its target


def near_misses(
    con: duckdb.DuckDBPyConnection,
    config_ids: list[str],
    benchmark_id: str | None = None,
    *,
    registry: Registry | None = None,
    max_pairs: int = MAX_PAIRS,
) -> dict[str, Any]:
    """The cells of the base models of ``config_ids`` on ``benchmark_id`` (and its family and
    links; every benchmark when None) and, for pairs of cells whose sources differ, what kept them
    apart."""
    registry = registry or load_registry()
    bases = sorted(
        {r[0] for r in con.execute(
            "SELECT base_model_id FROM model_config WHERE list_contains(?, config_id)", [config_ids]
        ).fetchall()}
    )  # fmt: skip
    configs = [
        r[0]
        for r in con.execute(
            "SELECT config_id FROM model_config WHERE list_contains(?, base_model_id) ORDER BY config_id", [bases]
        ).fetchall()
    ]
    benchmarks = related_benchmarks(con, benchmark_id, registry) if benchmark_id else None
    cells = rows(con, "near_miss_cells.sql", config_ids=configs, benchmark_ids=benchmarks)
    for c in cells:
        c["setup"] = as_json(c["setup"]) or {}
    pairs = []
    for a, b in combinations(cells, 2):
        if set(a["sources"]) == set(b["sources"]):
            continue  # one source's own rows in two cells: not two sources that failed to meet
        if benchmark_id is None and a["benchmark_id"] != b["benchmark_id"]:
            continue
        pairs.append(
            {
                "a": _brief(a),
                "b": _brief(b),
                "apart_by": apart_by(a, b, registry),
            }
        )
    # nearest first: the fewest parts apart, then the configurations that share the longest prefix
    # (a month-precision snapshot beside the day-precision one it may be)
    pairs.sort(
        key=lambda p: (
            len(p["apart_by"]),
            -_shared_prefix(p["a"]["config_id"], p["b"]["config_id"]),
            p["a"]["cell_id"],
            p["b"]["cell_id"],
        )
    )
    return {
        "base_models": bases,
        "benchmarks": benchmarks,
        "cells": [_brief(c) for c in cells],
        "pairs_total": len(pairs),
        "pairs": pairs[:max_pairs],
    }


def _shared_prefix(a: str, b: str) -> int:
    """How many leading characters two configuration ids share."""
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def _brief(cell: dict[str, Any]) -> dict[str, Any]:
    keys = ("cell_id", "config_id", "benchmark_id", "subset", "metric_id", "metric_params_key", "setup_key",
            "value", "unit", "sources", "n_candidates")  # fmt: skip
    return {k: cell[k] for k in keys}


def apart_by(a: dict[str, Any], b: dict[str, Any], registry: Registry) -> list[dict[str, Any]]:
    """The parts of two cells' keys that differ: ``{"part", "a", "b", "note"?}`` each."""
    out: list[dict[str, Any]] = []

    def differ(part: str, x: Any, y: Any, note: str | None = None) -> None:
        if (x or None) != (y or None):
            out.append({"part": part, "a": x or None, "b": y or None, **({"note": note} if note else {})})

    differ("configuration", a["config_id"], b["config_id"])
    if a["benchmark_id"] != b["benchmark_id"]:
        links = registry.benchmark_links
        found = links.between(a["benchmark_id"], b["benchmark_id"]) if links is not None else []
        note = "; ".join(lk.why() for lk in found) or "different benchmarks (no link in benchmark_links.yaml)"
        differ("benchmark", a["benchmark_id"], b["benchmark_id"], note)
    differ("subset", a["subset"], b["subset"])
    differ("metric", a["metric_id"], b["metric_id"])
    differ("metric parameters", a["metric_params_key"], b["metric_params_key"])
    policy = registry.setup_policy
    if policy is not None:
        sa, sb = policy.parts(a["setup"]), policy.parts(b["setup"])
        for field in sorted(set(sa) | set(sb)):
            if sa.get(field) != sb.get(field):
                why = policy.rule(field).reason
                out.append({"part": f"setup {field}", "a": sa.get(field), "b": sb.get(field), "note": why})
    elif a["setup_key"] != b["setup_key"]:
        differ("setup", a["setup_key"], b["setup_key"])
    return out
