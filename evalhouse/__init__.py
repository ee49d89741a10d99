"""evalhouse: a curated, hash-pinned warehouse of AI evaluation results."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("evalhouse")
except PackageNotFoundError:  # running from a source tree without an install
    __version__ = "0.0.0+source"

__all__ = ["__version__"]
