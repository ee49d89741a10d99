"""Files shipped inside the package (SQL, YAML registries), read by package and name."""

from __future__ import annotations

from importlib import resources


def package_text(package: str, *parts: str) -> str:
    """The text of ``package/parts...`` as shipped (``package_text("evalhouse.warehouse", "sql", "x.sql")``)."""
    return resources.files(package).joinpath(*parts).read_text(encoding="utf-8")


def package_bytes(package: str, *parts: str) -> bytes:
    return resources.files(package).joinpath(*parts).read_bytes()


def read_sql(package: str, name: str) -> str:
    """A query from ``<package>/sql/<name>``: SQL lives in ``.sql`` files, never in Python strings."""
    return package_text(package, "sql", name)
