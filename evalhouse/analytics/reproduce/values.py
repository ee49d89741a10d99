"""The papers' printed values, read from the data file beside each reproduction module."""

from __future__ import annotations

from functools import cache
from typing import Any

from evalhouse.common.resources import package_text
from evalhouse.common.yamls import load_yaml


@cache
def paper_values(name: str) -> dict[str, Any]:
    """The parsed ``evalhouse/analytics/reproduce/<name>.yaml`` (e.g. ``paper000``)."""
    return load_yaml(package_text("evalhouse.analytics.reproduce", f"{name}.yaml"))
