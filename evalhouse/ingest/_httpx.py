"""httpx, imported without its command-line client.

``import httpx`` also imports ``httpx._main`` (the ``httpx`` console command), and with it click,
rich's progress bars and pygments: ~40 ms of every process that fetches, for a command evalhouse
never runs. httpx carries on without it when that import fails (its ``main`` then says the CLI
extras are missing), so the first import is made with ``httpx._main`` marked absent; the mark is
taken away afterwards, so an explicit ``import httpx._main`` later still works.
"""

from __future__ import annotations

import sys

if "httpx" not in sys.modules and "httpx._main" not in sys.modules:
    sys.modules["httpx._main"] = None  # type: ignore[assignment] - None: "not importable" to the import system
    try:
        import httpx
    finally:
        if sys.modules.get("httpx._main", ...) is None:
            del sys.modules["httpx._main"]
else:
    import httpx

__all__ = ["httpx"]
