"""Python's cycle collector paused while a parse or a load builds its trees of dicts and lists.

A parser's records and a load's rows are trees without reference cycles: reference counting
frees them, and the cycle collector finds nothing in them. It still re-scans every live container
each few thousand allocations, and once the young objects pile up it scans the whole heap. In a
refresh of the two pinned sources that was a twentieth of the run (two whole-heap collections
during parsing, ≈ 55 ms; ≈ 100 ms in all).

What outlives a pause (a load's caches: model identities, canonical groups, registry lookups)
is long-lived by then, so it joins the oldest generation when the collector comes back, as the
collector would have moved it after scanning it twice: the first young collection after a
pause otherwise scanned every object the pause had made (≈ 85,000 after the Epoch load, 27 ms).
Whatever cycles appeared meanwhile are collected with the oldest generation, at its next
collection.
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
            gc.freeze()  # every tracked object to the permanent generation ...
            gc.unfreeze()  # ... and back into the oldest one: nothing scanned, young count reset
            gc.enable()
