"""Reading YAML data files: libyaml's C loader where PyYAML was built with it (the registries
parse several times faster), the pure-Python safe loader otherwise; both safe, same results."""

from __future__ import annotations

import hashlib
import marshal
import os
import sys
from pathlib import Path
from typing import Any

import yaml

from evalhouse.common.cache import cache_dir

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


# Parsed package YAML is kept between processes in the cache folder (common/cache.py); a file's
# name is the hash of the text it was parsed from.
_CACHE_FORMAT = f"evalhouse-yaml/1 python {sys.version_info[:2]} pyyaml {yaml.__version__} {_Loader.__name__}"


def load_package_yaml(raw: bytes) -> Any:
    """:func:`load_yaml` for the data files shipped in the package (registries, source mappings),
    read from a compiled copy when one exists for exactly these bytes.

    The copy is ``marshal`` data named by the sha256 of the bytes (with the Python, PyYAML and
    loader versions), so a changed file is parsed afresh and never read stale — as Python keeps
    bytecode beside sources. Data marshal cannot hold (dates) is parsed every time; a cache folder
    that cannot be read or written only costs the parse.
    """
    key = hashlib.sha256(_CACHE_FORMAT.encode() + b"\0" + raw).hexdigest()
    path = cache_dir() / "yaml" / f"{key}.marshal"
    try:
        blob = path.read_bytes()
    except OSError:  # no copy yet: parse, and keep one
        return _parse_and_keep(raw, path)
    try:
        return marshal.loads(blob)
    except (EOFError, ValueError, TypeError):  # a torn copy (a writer killed mid-write): parse again
        return _parse_and_keep(raw, path)


def _parse_and_keep(raw: bytes, path: Path) -> Any:
    data = load_yaml(raw)
    try:
        blob = marshal.dumps(data)
    except ValueError:  # a value marshal cannot hold (a YAML date): not cached
        return data
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(f".{os.getpid()}.tmp")
        tmp.write_bytes(blob)
        os.replace(tmp, path)
    except OSError:  # a read-only home or a full disk: the next process parses again
        return data
    return data
