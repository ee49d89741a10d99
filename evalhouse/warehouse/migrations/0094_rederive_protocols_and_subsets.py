"""Re-derive the identities of every stored score under the rules this evalhouse ships.

The rules that changed: a benchmark's protocol is part of its results' cells (``benchmarks.yaml``
``setup``: the Open LLM Leaderboard v2's tasks at their fixed shots; ``benchmark_links.yaml``
``setup``: HELM Classic's BoolQ at 5 shots, HellaSwag at 0), names that denote one subset of a
benchmark (Artificial Analysis's τ²-Bench Telecom is τ²-bench's ``telecom`` domain), HELM
Classic's BoolQ and HellaSwag linked to the registry's (their exact match is accuracy), and the
open-llm-leaderboard source's ``score.normalised`` read as the metric ``normalized_score``. Every
change is a curation decision naming this migration; snapshots made before it keep their own files
and open as they always did.
"""

from __future__ import annotations

import duckdb

from evalhouse.curation.registry import load_registry
from evalhouse.warehouse.rederive import rederive

CAUSE = "migration 0094 (re-derive identities: protocols, subset names, HELM links)"


def upgrade(con: duckdb.DuckDBPyConnection) -> None:
    rederive(con, load_registry(), cause=CAUSE)
