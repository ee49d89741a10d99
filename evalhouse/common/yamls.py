"""Reading YAML data files: libyaml's C loader where PyYAML was built with it (the registries
parse several times faster), the pure-Python safe loader otherwise; both safe, same results."""

from __future__ import annotations

from typing import Any

import yaml

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_yaml(text: str | bytes) -> Any:
    """``yaml.safe_load`` with the fastest safe loader available.

    Every failure is a :class:`yaml.YAMLError`: PyYAML's constructors raise a bare ``ValueError``
    for a scalar its resolver took for a number but ``int()`` refuses (``0x_``, ``0b``), and a
    document nested too deeply exhausts the stack; both become a ``ConstructorError`` naming it.
    """
    try:
        return yaml.load(text, Loader=_Loader)
    except (ValueError, TypeError, OverflowError) as exc:
        raise yaml.constructor.ConstructorError(None, None, f"unreadable scalar: {exc}") from exc
    except RecursionError as exc:
        raise yaml.constructor.ConstructorError(None, None, "nested too deeply") from exc
