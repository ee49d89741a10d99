"""The Artificial Analysis frames the paper reproductions use, read from the warehouse.

``aa_frames(con)`` returns the same ``(wide, meta)`` pair as
:func:`evalhouse.analytics.aa_frames.aa_frames_from_csv` — index = AA slug, columns = canonical
benchmark ids, rows in the source's own order (by AA model id, as the pinned CSV is sorted) —
but from what the ``artificial-analysis`` source loaded: its current scores on each benchmark's
canonical metric, and the facts it stated about each configuration. Reading the source's own
rows (not the cross-source canonical cells) keeps a reproduction of a paper about one
leaderboard snapshot on exactly that snapshot.
"""

from __future__ import annotations

from importlib import resources

import duckdb
import pandas as pd

from evalhouse.analytics.aa_frames import AA_BENCHMARKS, strip_variant_suffixes
from evalhouse.analytics.matrices import snapshot_id_of

AA_SOURCE = "artificial-analysis"


def _sql(name: str) -> str:
    return resources.files("evalhouse.analytics").joinpath("sql", name).read_text(encoding="utf-8")


def aa_frames(con: duckdb.DuckDBPyConnection, source_key: str = AA_SOURCE) -> tuple[pd.DataFrame, pd.DataFrame]:
    """``(wide, meta)`` of one AA snapshot as loaded by ``source_key``."""
    long = con.execute(_sql("aa_scores.sql"), [source_key]).df()
    facts = con.execute(_sql("aa_facts.sql"), [source_key]).df()
    if facts.empty:
        raise ValueError(f"no {source_key} records in this warehouse: ingest the AA snapshot first")
    facts = facts.sort_values("aa_model_id", kind="stable").set_index("slug")
    wide = long.pivot_table(index="slug", columns="benchmark_id", values="value", aggfunc="mean")
    wide = wide.reindex(index=facts.index, columns=list(AA_BENCHMARKS)).astype(float)
    wide.index.name = "model"
    wide.columns.name = "benchmark"
    meta = pd.DataFrame(
        {
            "name": facts["name"].astype(str),
            "base_model": facts["name"].map(strip_variant_suffixes),
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
    sid = snapshot_id_of(con)
    wide.attrs["snapshot_id"] = meta.attrs["snapshot_id"] = sid
    return wide, meta
