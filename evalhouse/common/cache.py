"""The folder where evalhouse keeps what it can make again: ``$EVALHOUSE_CACHE_DIR``, else the
user cache folder (``$XDG_CACHE_HOME/evalhouse``, else ``~/.cache/evalhouse``).

Everything kept there is named by a hash of what made it, so a change makes a new entry and a
stale one is never read; deleting the folder only costs the time to make its entries again.
"""

from __future__ import annotations

import os
from pathlib import Path

ENV_CACHE = "EVALHOUSE_CACHE_DIR"


def cache_dir() -> Path:
    env = os.environ.get(ENV_CACHE)
    if env:
        return Path(env).expanduser()
    base = os.environ.get("XDG_CACHE_HOME") or Path.home() / ".cache"
    return Path(base) / "evalhouse"
