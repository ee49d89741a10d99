"""Paper 000's legacy base-name rule, kept here only until the analytics layer carries its own copy.

New code uses :mod:`evalhouse.curation.names`.
"""

from __future__ import annotations

from evalhouse.curation.registry import load_registry


def paper000_base_name(name: str) -> str:
    """The base name paper 000's released notebook used for its R1 dedup (n = 89)."""
    r = load_registry().name_rules
    assert r is not None
    text = r.legacy_parenthetical.sub("", str(name))
    return r.legacy_trailing.sub("", text).strip()
