"""Re-derive the identities of every stored score under the rules this evalhouse ships.

The rules that changed: the setup policy (``curation/registries/setup_policy.yaml``: the harness
that ran a result is an attribute of the candidate, not part of its cell, so Epoch AI's and
Artificial Analysis's GPQA Diamond results of one configuration now share a cell), the benchmark
links (``benchmark_links.yaml``: the Every Eval Ever hfopenllm_v2 collection's benchmarks are the
Open LLM Leaderboard v2's), and the name rules' configuration ids. Every change is a curation
decision (``configuration_rederived``, ``benchmark_rederived``, ``cell_rederived``) naming this
migration; snapshots made before it keep their own files and open as they always did.
"""

from __future__ import annotations

import duckdb

from evalhouse.curation.registry import load_registry
from evalhouse.warehouse.rederive import rederive

CAUSE = "migration 0091 (re-derive identities)"


def upgrade(con: duckdb.DuckDBPyConnection) -> None:
    rederive(con, load_registry(), cause=CAUSE)
