"""The installed evalhouse version, recorded with every run, snapshot and analysis."""

from __future__ import annotations

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("evalhouse")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"
