"""Command-line values typer can take as they come, without building a pydantic validator.

typer (0.29) coerces every parameter of the command it runs through a pydantic ``TypeAdapter``
built on first use: importing pydantic and building those validators is ~70 ms of every command,
a third of a quiet night's ``refresh``. Most values need nothing done: a ``str`` option's value
is already the string, a flag's already the bool, an option's default already the float, a
repeatable option's values already strings. :func:`install` has typer build, for plain ``str``,
``bool``, ``int``, ``float`` and ``list[str]`` parameters, a runtime parameter that returns such a
value as the validator would (the same object or the same number), and hands anything else — a
value that needs converting beyond a plain decimal, one outside a declared ``min``/``max``, a
``Path``, a choice, a clamp, a custom parser — to the validator typer would have built, so every
result and every error message is typer's own. ``tests/cli/test_lean_params.py`` holds the two
to the same results on every parameter of every command.

If typer's internals are not the ones this was written against, :func:`install` does nothing.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass, field
from typing import Any

#: A value pydantic reads as this number and Python's ``float``/``int`` read the same way.
_DECIMAL = re.compile(r"[0-9]{1,15}(?:\.[0-9]{1,15})?")
_INTEGER = re.compile(r"[0-9]{1,15}")
_installed = False


def install() -> bool:
    """Route typer's plain parameters through :class:`LeanParam` (once per process); False when
    typer's internals differ from the ones this module knows (typer's own path is then used)."""
    global _installed  # noqa: PLW0603 - one patch per process
    if _installed:
        return True
    try:
        from typer import _coercion, core
    except ImportError:  # pragma: no cover - another typer
        return False
    original = getattr(core, "build_runtime_param", None)
    base = getattr(_coercion, "RuntimeParam", None)
    if original is None or base is None or not hasattr(core._TyperParameter, "get_runtime_param"):
        return False  # pragma: no cover - another typer

    @dataclass(frozen=True)
    class LeanParam(base):  # type: ignore[misc,valid-type]
        """A plain parameter: values that need no conversion pass as they are; the rest go to the
        validator typer builds (on first need)."""

        descriptor: Any = None
        _full: list[Any] = field(default_factory=list, compare=False, repr=False)

        def _coerce_value(self, value: Any, param: Any, ctx: Any) -> Any:
            done = lean_value(self.annotation, self.parameter_info, value)
            if done is not _NOT_PLAIN:
                return done
            if not self._full:
                self._full.append(original(self.descriptor))
            return self._full[0]._coerce_value(value, param=param, ctx=ctx)

    def build(descriptor: Any) -> Any:
        if is_plain(descriptor):
            return LeanParam(
                parameter_info=descriptor.parameter_info, annotation=descriptor.annotation, descriptor=descriptor
            )
        return original(descriptor)

    core.build_runtime_param = build
    _installed = True
    return True


_NOT_PLAIN = object()


def is_plain(descriptor: Any) -> bool:
    """A parameter whose values :func:`lean_value` may pass: a plain annotation, no file, path,
    choice, parser, clamp or date formats."""
    info = descriptor.parameter_info
    if descriptor.file_annotation is not None or getattr(info, "parser", None) is not None:
        return False
    if getattr(info, "clamp", False) or getattr(info, "click_type", None) is not None:
        return False
    annotation = descriptor.annotation
    if annotation not in (str, bool, int, float, list[str]):
        return False
    try:
        return not descriptor.is_path and not descriptor.is_choice
    except Exception:  # noqa: BLE001 - typer could not tell: let typer decide
        return False


def lean_value(annotation: Any, info: Any, value: Any) -> Any:
    """``value`` as typer's validator returns it, or :data:`_NOT_PLAIN` (ask the validator)."""
    kind = type(value)
    if annotation is str or annotation is bool:
        return value if kind is annotation else _NOT_PLAIN
    if annotation == list[str]:
        plain = kind in (list, tuple) and all(type(v) is str for v in value)
        return list(value) if plain else _NOT_PLAIN
    number = _number(annotation, value)
    if number is None or math.isnan(number):
        return _NOT_PLAIN
    low, high = getattr(info, "min", None), getattr(info, "max", None)
    if (low is not None and number < low) or (high is not None and number > high):
        return _NOT_PLAIN  # out of bounds: the validator words the error
    return number


def _number(annotation: Any, value: Any) -> float | int | None:
    """A float or int parameter's value when it is one already or a plain decimal string."""
    kind = type(value)
    if annotation is float and (kind is float or (kind is str and _DECIMAL.fullmatch(value))):
        return float(value)
    if annotation is int and (kind is int or (kind is str and _INTEGER.fullmatch(value))):
        return int(value)
    return None
