"""The papers' printed values, read from the data file beside each reproduction module."""

from __future__ import annotations

from functools import cache
from typing import Any

import yaml

from evalhouse.common.resources import package_text


@cache
def paper_values(name: str) -> dict[str, Any]:
    """The parsed ``evalhouse/analytics/reproduce/<name>.yaml`` (e.g. ``paper000``)."""
    return yaml.safe_load(package_text("evalhouse.analytics.reproduce", f"{name}.yaml"))
