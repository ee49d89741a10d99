"""The Artificial Analysis frames the paper reproductions use, read from the warehouse.

``aa_frames(con)`` returns ``(wide, meta)``: index = AA slug, columns = canonical benchmark ids
(:data:`AA_BENCHMARKS`), rows in the source's own order (by AA model id, as the pinned CSV is
sorted), from what the ``artificial-analysis`` source loaded: its current scores on each
benchmark's canonical metric, and the facts it stated about each configuration. Reading the
source's own rows (not the cross-source canonical cells) keeps a reproduction of a paper about one
leaderboard snapshot on exactly that snapshot. ``meta["base_model"]`` is the curation layer's
base-model name (:func:`~evalhouse.curation.names.strip_variant_suffixes`).
"""

from __future__ import annotations

import duckdb
import pandas as pd

from evalhouse.analytics.data.defaults import name_rules
from evalhouse.analytics.data.pin import pin_of
from evalhouse.common.resources import read_sql
from evalhouse.curation.names import strip_variant_suffixes
from evalhouse.errors import DataMissing

AA_SOURCE = "artificial-analysis"
# AA column name -> canonical benchmark id (the leaderboard's 14 benchmark columns).
AA_CANONICAL = {
    "tau2": "tau2_bench",
    "tauBanking": "tau3_banking",
    "terminalbenchV21": "terminal_bench_v2_1",
    "terminalbenchHard": "terminal_bench_hard",
    "scicode": "scicode",
    "lcr": "aa_lcr",
    "omniscience": "aa_omniscience",
    "ifbench": "ifbench",
    "hle": "hle",
    "gpqa": "gpqa_diamond",
    "critpt": "critpt",
    "mmmuPro": "mmmu_pro",
    "apexAgents": "apex_agents",
    "gdpval_elo": "gdpval",
}
AA_BENCHMARKS = tuple(AA_CANONICAL.values())
INGEST_AA_HINT = (
    "ingest the Artificial Analysis snapshot first: 'evalhouse ingest artificial-analysis "
    "../shared/datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv' "
    "(or 'evalhouse refresh --source artificial-analysis')"
)


def aa_frames(con: duckdb.DuckDBPyConnection, source_key: str = AA_SOURCE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(wide, meta)`` of one AA snapshot as loaded by ``source_key``; DataMissing when absent."""
    long = con.execute(read_sql("evalhouse.analytics", "aa_scores.sql"), [source_key]).df()
    facts = con.execute(read_sql("evalhouse.analytics", "aa_facts.sql"), [source_key]).df()
    if facts.empty:
        raise DataMissing(f"no {source_key} records here: {INGEST_AA_HINT}")
    facts = facts.sort_values("aa_model_id", kind="stable").set_index("slug")
    wide = long.pivot_table(index="slug", columns="benchmark_id", values="value", aggfunc="mean")
    wide = wide.reindex(index=facts.index, columns=list(AA_BENCHMARKS)).astype(float)
    wide.index.name = "model"
    wide.columns.name = "benchmark"
    meta = pd.DataFrame(
        {
            "name": facts["name"].astype(str),
            "base_model": facts["name"].map(lambda n: strip_variant_suffixes(n, name_rules())),
            "release_date": pd.to_datetime(facts["release_date"], errors="coerce"),
            "is_reasoning": facts["is_reasoning"].eq("true"),
            "is_open_weights": facts["model_availability"].eq("open_weights"),
            "total_parameters": pd.to_numeric(facts["total_parameters_b"], errors="coerce"),
            "intelligence_index": pd.to_numeric(facts["intelligence_index"], errors="coerce"),
            "developer": facts["developer"].astype(str),
            "config_id": facts["config_id"],
        },
        index=wide.index,
    )
    wide.attrs["snapshot_id"] = meta.attrs["snapshot_id"] = pin_of(con)
    return wide, meta
