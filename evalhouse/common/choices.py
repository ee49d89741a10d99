"""Names a user types, checked against the names that exist, with "did you mean …" when not."""

from __future__ import annotations

import difflib
from collections.abc import Iterable

from evalhouse.errors import InputError


def suggest(value: str, choices: Iterable[str], n: int = 3) -> list[str]:
    """The closest known names to ``value`` (case-insensitive), best first."""
    pool = sorted(set(choices))
    lowered = {c.casefold(): c for c in pool}
    close = difflib.get_close_matches(value.casefold(), list(lowered), n=n, cutoff=0.5)
    contains = [c for c in pool if value.casefold() in c.casefold() and c not in close]
    return [lowered[c] for c in close] + contains[: max(0, n - len(close))]


def require_choice(value: str, choices: Iterable[str], what: str) -> str:
    """``value`` when it is one of ``choices``; else :class:`InputError` naming the closest ones."""
    pool = sorted(set(choices))
    if value in pool:
        return value
    hints = suggest(value, pool)
    hint = f"; did you mean {' or '.join(repr(h) for h in hints)}?" if hints else ""
    known = ", ".join(pool[:20]) + (" …" if len(pool) > 20 else "")
    raise InputError(f"unknown {what} {value!r}{hint} (known: {known or 'none yet'})")
