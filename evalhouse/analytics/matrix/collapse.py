"""Paper 002's model-name collapses as matrix rows (Appendix E): Std (variant level) and Aggr (family level).

Every configuration's name gets a key - :func:`~evalhouse.curation.names.collapse_standard` (with
the configuration's family, parameter count and developer) or
:func:`~evalhouse.curation.names.collapse_aggressive` (with its family) - and the configurations
sharing a key become one row, each cell the mean of their values (the paper averages rows that
differ on any field). Keys are loose by design: they are never identities, only the rows of this
analysis. A configuration whose name yields an empty key keeps its own id as its row.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from evalhouse.analytics.checks import check_choice
from evalhouse.curation.names import collapse_aggressive, collapse_standard
from evalhouse.curation.registry import load_registry

COLLAPSES: tuple[str, ...] = ("std", "aggr")


def collapse_keys(meta: pd.DataFrame, how: str) -> pd.Series:
    """Row key per configuration (``meta`` indexed by ``config_id`` with ``name``, ``family_name``,
    ``total_parameters``, ``developer``)."""
    check_choice("collapse", how, COLLAPSES)
    rules = load_registry().name_rules
    keys = {}
    for config_id, row in meta.iterrows():
        name = str(row.get("name") or config_id)
        family = row.get("family_name")
        family = None if family is None or (isinstance(family, float) and np.isnan(family)) else str(family)
        if how == "std":
            params = row.get("total_parameters")
            params = None if params is None or not np.isfinite(params) else float(params)
            developer = row.get("developer")
            developer = None if developer is None or not isinstance(developer, str) else developer
            key = collapse_standard(name, rules, family=family, params_b=params, developer=developer)
        else:
            key = collapse_aggressive(name, rules, family=family)
        keys[config_id] = key or str(config_id)
    return pd.Series(keys, name=f"{how}_key")


def collapsed_matrix(long: pd.DataFrame, keys: pd.Series) -> pd.DataFrame:
    """Rows = collapse keys, columns = benchmarks, each cell the mean over the key's configurations."""
    frame = long.assign(model=long["config_id"].map(keys).fillna(long["config_id"]))
    wide = frame.pivot_table(index="model", columns="benchmark_id", values="value", aggfunc="mean")
    wide = wide.sort_index(axis=0).sort_index(axis=1).astype(float)
    wide.columns.name = "benchmark"
    wide.attrs = dict(long.attrs)
    return wide
