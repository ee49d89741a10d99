"""One configuration per base model: the "best default configuration" (paper 000, R1).

A base model is often listed under several serving configurations (reasoning on or off, effort
levels, previews). Analyses that need one row per base model keep the configuration with the
highest score; which score is the caller's choice (AA's intelligence index for paper 000, the
number of observed benchmarks for the Epoch hub), so it is always passed explicitly.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Iterable, Mapping
from functools import cache
from typing import Any

from evalhouse.curation.names import NameRules, read_settings, strip_variant_suffixes
from evalhouse.curation.registry import load_registry

Row = Mapping[str, Any]


def row_name(row: Row) -> str:
    return str(row.get("name", ""))


@cache
def name_rules() -> NameRules:
    """The curation registry's name rules (``model_tokens.yaml``), for the default key and the tie-break."""
    rules = load_registry().name_rules
    if rules is None:
        raise RuntimeError("the curation registry has no model_tokens.yaml name rules")
    return rules


def base_key(row: Row) -> str:
    """The default grouping: the name with its serving-configuration suffixes stripped, case-folded."""
    return strip_variant_suffixes(row_name(row), name_rules()).casefold()


def finite(value: Any) -> float | None:
    """``value`` as a finite float, else None (None, NaN, text and booleans are not scores)."""
    if value is None or isinstance(value, bool):
        return None
    try:
        number = float(value)
    except (TypeError, ValueError):
        return None
    return number if math.isfinite(number) else None


def best_default_configuration(
    rows: Iterable[Row],
    *,
    score: Callable[[Row], Any],
    key: Callable[[Row], str] = base_key,
    name: Callable[[Row], str] = row_name,
) -> list[Row]:
    """Pick one configuration per group (``key``), the one with the highest ``score``.

    A missing or non-finite score loses to any number. Ties: a non-preview configuration first,
    then the lexicographically smallest ``name``, so the pick never depends on row order. Whole
    rows are returned, never columns mixed from different configurations; output is in order of
    first appearance of each group.
    """
    best: dict[str, tuple[tuple[float, bool, str], Row]] = {}
    order: list[str] = []
    for row in rows:
        group = key(row)
        value = finite(score(row))
        label = name(row)
        preview = read_settings(label, name_rules()).preview is not None
        rank = (-value if value is not None else math.inf, preview, label)
        if group not in best:
            order.append(group)
            best[group] = (rank, row)
        elif rank < best[group][0]:
            best[group] = (rank, row)
    return [best[group][1] for group in order]
