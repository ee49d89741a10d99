"""Is a valid EEE record already what the models would write it back as?

A parser builds each record as a plain dict and, until now, validated it with the pydantic models
and kept ``EvaluationLog.model_validate(record).to_json_dict()`` — about 0.1 ms per record, half
of what parsing an aggregator export costs. For a record :func:`~evalhouse.schema.eee_check.surely_valid`
accepts, that round trip changes nothing when, at every level,

* the keys a model declares come in its declaration order, any other key (where the model keeps
  unknown keys) after them, holding a string;
* no value is ``None`` (``to_json_dict`` drops those);
* every value already has its declared type: ``str`` for strings and literals, a finite ``float``
  for floats, an ``int`` (not a bool) for integers, a ``bool`` for booleans, a list of strings, a
  ``dict`` of strings, a nested model's object — so validation converts nothing, and no validator
  rewrites it (a bound is a finite float or ``"Infinity"``/``"-Infinity"``).

:func:`dumps_as_itself` checks exactly that, from a plan read once off the models' own field
declarations; whatever it does not know (a field typed ``dict[str, Any]``, a union it cannot tell
apart) makes it answer False, and the caller takes the models' round trip.
``tests/schema/test_eee_dump.py`` holds it to the round trip on real and mutated records.

The plan ships as data with the extended JSON Schema (``eee_checks.json``, see
:mod:`evalhouse.schema.eee_check`), so the check never imports the models; ``python -m
evalhouse.schema.eee_dump`` rewrites that file from the models after they change.
"""

from __future__ import annotations

import json
import math
import types
import typing
from collections.abc import Callable
from functools import cache
from pathlib import Path
from typing import Any

from evalhouse.schema.eee_check import SHIPPED, extended_schema, shipped_checks

# A plan is a tuple: ("model", fields, order, extra allowed, filled-in fields) | ("str",) | ("float",)
# | ("int",) | ("bool",) | ("bound",) | ("list", item) | ("strmap",) | ("tagged", key, {tag: model
# plan}) | ("unknown",); it is compiled into one check per value.
Plan = tuple[Any, ...]
_UNKNOWN: Plan = ("unknown",)
#: Distinct key sequences remembered per model (the layout of each is worked out once).
MAX_LAYOUTS = 4096
_UNSEEN: Any = object()


def dumps_as_itself(record: Any) -> bool:
    """True when ``EvaluationLog.model_validate(record).to_json_dict() == record``, key order and
    value types included, provided the record is valid (check that first: this does not)."""
    return _checker()(record)


@cache
def _checker() -> Callable[[Any], bool]:
    return _compile(plan_from_json(shipped_checks()["dump_plan"]))


def derived_plan() -> Plan:
    """The plan read off the models' field declarations (what :data:`SHIPPED` holds, as JSON)."""
    from evalhouse.schema.eee import EvaluationLog  # noqa: PLC0415 - only to write or test the shipped file

    return _model_plan(EvaluationLog)


def derived_checks() -> dict[str, Any]:
    """What :data:`SHIPPED` must hold for the models as they are."""
    return {"json_schema": extended_schema(), "dump_plan": plan_to_json(derived_plan())}


def plan_to_json(plan: Plan) -> Any:
    """A plan as JSON: tuples as lists, a model's filled-in fields sorted."""
    kind = plan[0]
    if kind == "model":
        _, fields, order, extra, filled = plan
        return [kind, {n: plan_to_json(p) for n, p in fields.items()}, order, extra, sorted(filled)]
    if kind == "list":
        return [kind, plan_to_json(plan[1])]
    if kind == "tagged":
        return [kind, plan[1], {tag: plan_to_json(p) for tag, p in plan[2].items()}]
    return [kind]


def plan_from_json(data: Any) -> Plan:
    """The plan :func:`plan_to_json` wrote."""
    kind = data[0]
    if kind == "model":
        _, fields, order, extra, filled = data
        return (kind, {n: plan_from_json(p) for n, p in fields.items()}, dict(order), bool(extra), frozenset(filled))
    if kind == "list":
        return (kind, plan_from_json(data[1]))
    if kind == "tagged":
        return (kind, data[1], {tag: plan_from_json(p) for tag, p in data[2].items()})
    return (kind,)


def write_shipped(path: Path | None = None) -> Path:
    """Write :data:`SHIPPED` from the models (run after changing them)."""
    path = path or Path(__file__).with_name(SHIPPED)
    path.write_text(json.dumps(derived_checks(), indent=1, sort_keys=False) + "\n", encoding="utf-8")
    return path


def _model_plan(model: Any) -> Plan:
    fields = {name: _plan_of(info.annotation, info.metadata) for name, info in model.model_fields.items()}
    order = {name: i for i, name in enumerate(fields)}
    # a field the dump fills in when it is absent (a default other than None) is not the input's
    filled = frozenset(n for n, i in model.model_fields.items() if not i.is_required() and i.get_default() is not None)
    return ("model", fields, order, model.model_config.get("extra") == "allow", filled)


def _plan_of(annotation: Any, metadata: list[Any]) -> Plan:
    origin = typing.get_origin(annotation)
    args = typing.get_args(annotation)
    if origin is typing.Annotated:
        return _plan_of(args[0], [*args[1:], *metadata])
    if origin in (typing.Union, types.UnionType):
        present = [a for a in args if a is not type(None)]
        if len(present) == 1:
            return _plan_of(present[0], metadata)
        return _union_plan(present)
    if origin is typing.Literal:
        return ("str",) if all(type(a) is str for a in args) else _UNKNOWN
    if origin is list:
        return ("list", _plan_of(args[0], [])) if args else _UNKNOWN
    if origin is dict:
        return ("strmap",) if args == (str, str) else _UNKNOWN
    if isinstance(annotation, type) and hasattr(annotation, "model_fields"):
        return _model_plan(annotation)
    return {str: ("str",), float: ("float",), int: ("int",), bool: ("bool",)}.get(annotation, _UNKNOWN)


def _union_plan(members: list[Any]) -> Plan:
    """A bound (a float or the infinity strings), or models told apart by a literal ``source_type``."""
    plans = [_plan_of(m, []) for m in members]
    if sorted(p[0] for p in plans) == ["float", "str"]:
        return ("bound",)
    if all(p[0] == "model" for p in plans):
        tags: dict[str, Plan] = {}
        for member, plan in zip(members, plans, strict=True):
            tag = typing.get_args(member.model_fields["source_type"].annotation)
            if len(tag) != 1:
                return _UNKNOWN
            tags[tag[0]] = plan
        return ("tagged", "source_type", tags)
    return _UNKNOWN


def _is_str(value: Any) -> bool:
    return type(value) is str


def _is_float(value: Any) -> bool:
    return type(value) is float and math.isfinite(value)


def _is_int(value: Any) -> bool:
    return type(value) is int


def _is_bool(value: Any) -> bool:
    return type(value) is bool


def _is_bound(value: Any) -> bool:
    return (type(value) is float and math.isfinite(value)) or value in ("Infinity", "-Infinity")


def _is_strmap(value: Any) -> bool:
    if type(value) is not dict:
        return False
    for key, item in value.items():  # noqa: SIM110 - a loop is several times faster than all(<generator>)
        if type(key) is not str or type(item) is not str:
            return False
    return True


def _never(value: Any) -> bool:
    return False


_SCALARS: dict[str, Callable[[Any], bool]] = {
    "str": _is_str,
    "float": _is_float,
    "int": _is_int,
    "bool": _is_bool,
    "bound": _is_bound,
    "strmap": _is_strmap,
    "unknown": _never,
}


def _compile(plan: Plan) -> Callable[[Any], bool]:
    """The plan as one check per value (closures: the walk costs a call per value, no dispatch)."""
    kind = plan[0]
    if kind in _SCALARS:
        return _SCALARS[kind]
    if kind == "list":
        item = _compile(plan[1])

        return lambda value: type(value) is list and all(map(item, value))
    if kind == "tagged":
        key, chosen = plan[1], {tag: _compile(p) for tag, p in plan[2].items()}
        return lambda value: type(value) is dict and chosen.get(value.get(key), _never)(value)
    return _compile_model(plan)


def _compile_model(plan: Plan) -> Callable[[Any], bool]:
    _, fields, order, extra_allowed, filled = plan
    checks = {name: _compile(p) for name, p in fields.items()}
    by_keys: dict[tuple[str, ...], tuple[Callable[[Any], bool], ...] | None] = {}

    def layout(keys: tuple[str, ...]) -> tuple[Callable[[Any], bool], ...] | None:
        """The value checks for an object with these keys in this order, or None when the keys
        alone make it differ from its dump (out of order, an unknown key first, one filled in)."""
        positions = [order.get(k, len(order)) for k in keys]
        if positions != sorted(positions) or not filled <= set(keys):
            return None
        if any(k not in order for k in keys) and not extra_allowed:
            return None
        return tuple(checks.get(k, _is_str) for k in keys)  # an unknown key is kept as given if a string

    def fits(value: Any) -> bool:
        if type(value) is not dict:
            return False
        keys = tuple(value)
        known = by_keys.get(keys, _UNSEEN)
        if known is _UNSEEN:
            known = layout(keys)
            if len(by_keys) < MAX_LAYOUTS:  # key sets repeat record after record; a few thousand at most
                by_keys[keys] = known
        if known is None:
            return False
        # a loop, not all(<generator>): this runs for every object of every record
        for check, item in zip(known, value.values()):  # noqa: B905, SIM110 - one check per key, by construction
            if not check(item):
                return False
        return True

    return fits


if __name__ == "__main__":
    print(f"wrote {write_shipped()}")
