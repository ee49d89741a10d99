"""Reading YAML data files: libyaml's C loader where PyYAML was built with it (the registries
parse several times faster), the pure-Python safe loader otherwise; both safe, same results."""

from __future__ import annotations

from typing import Any

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | bytes) -> Any:
    """``yaml.safe_load`` with the fastest safe loader available."""
    return yaml.load(text, Loader=_Loader)
