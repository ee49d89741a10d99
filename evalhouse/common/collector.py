"""Python's cycle collector paused while a parse or a load builds its trees of dicts and lists.

A parser's records and a load's rows are trees without reference cycles: reference counting
frees them, and the cycle collector finds nothing in them. It still re-scans every live container
each few thousand allocations, and once the young objects pile up it scans the whole heap. In a
refresh of the two pinned sources that was a twentieth of the run (two whole-heap collections
during parsing, ≈ 55 ms; ≈ 100 ms in all). Whatever cycles appear meanwhile are collected once
the collector runs again.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def collector_paused() -> Iterator[None]:
    """The cycle collector off inside the block (and back on after it, if it was on before)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
