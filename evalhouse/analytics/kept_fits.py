"""Fits kept by what made them: a costly pure fit is read back when its inputs, settings and code are unchanged.

A reproduction such as paper 000's (a 20-seed prediction ladder of oblimin EFAs, ≈ 30 s) is a pure
function of its input frames and settings. The nightly report, ``factor paper000`` and a notebook
re-running it on the same Artificial Analysis rows would each fit it again; instead the result is
kept in the cache folder (:func:`evalhouse.common.cache.cache_dir` ``/fits/<name>/<key>.pkl``) under a
key that is the sha256 of

- the fit's name and its settings (JSON, keys sorted),
- the sha256 of every input (a frame's columns, dtypes, index and every value, text and dates included),
- the code: every source file of the ``evalhouse`` package and the versions of Python and the numerical
  libraries a fit runs on,

so a changed input, setting, line of evalhouse or library upgrade makes a new key and a kept fit is
never read for anything else. Settings that cannot change a result (``n_jobs``) are left out by the
caller. A fit is written to a temporary name and renamed, under a lock, so two processes asking for the
same fit at once fit it once: the second waits and reads it. An entry that cannot be read (a truncated
file, a pickle of another Python) is fitted again and replaced, with a warning. ``EVALHOUSE_KEEP_FITS=0``
turns keeping off (every fit runs). The analysis record of a reused fit says so (:class:`Kept`).
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import pickle
import platform
import tempfile
import time
from collections.abc import Callable, Mapping, Sequence
from dataclasses import asdict, dataclass
from datetime import UTC, datetime
from functools import cache
from importlib import metadata
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from filelock import FileLock

from evalhouse.common.cache import cache_dir
from evalhouse.common.jsonable import to_jsonable

__all__ = ["ENV_KEEP", "Kept", "code_fingerprint", "content_sha256", "fit_key", "kept_fit"]

log = logging.getLogger(__name__)

ENV_KEEP = "EVALHOUSE_KEEP_FITS"
#: The libraries whose version can change a fit's numbers.
LIBRARIES = ("numpy", "scipy", "pandas", "scikit-learn", "factor_analyzer", "statsmodels")
#: What counts as code in the package (the SQL and YAML a fit reads shape it too).
CODE_SUFFIXES = (".py", ".sql", ".yaml")
#: Errors that make a kept entry unreadable: it is fitted again and replaced.
UNREADABLE = (OSError, EOFError, pickle.UnpicklingError, AttributeError, ImportError, ValueError, TypeError)


@dataclass(frozen=True)
class Kept:
    """Where a reused fit came from: its key, when it was fitted and how long that fit took."""

    key: str
    fitted_at: str
    fit_s: float

    def as_dict(self) -> dict[str, Any]:
        return asdict(self)


@cache
def code_fingerprint() -> str:
    """sha256 of every source file of the package (path and bytes) and of the numerical libraries' versions."""
    root = Path(__file__).resolve().parents[1]
    h = hashlib.sha256()
    for path in sorted(p for p in root.rglob("*") if p.suffix in CODE_SUFFIXES and p.is_file()):
        h.update(str(path.relative_to(root)).encode() + b"\0")
        h.update(path.read_bytes() + b"\0")
    h.update(platform.python_version().encode())
    for name in LIBRARIES:
        try:
            h.update(f"{name}=={metadata.version(name)}".encode())
        except metadata.PackageNotFoundError:
            h.update(f"{name} absent".encode())
    return h.hexdigest()


def content_sha256(x: Any) -> str:
    """sha256 of a frame, series or array: shape, labels, dtypes and every value (of any dtype)."""
    h = hashlib.sha256()
    if isinstance(x, pd.Series):
        x = x.to_frame()
    if isinstance(x, pd.DataFrame):
        h.update(json.dumps([[str(c), str(t)] for c, t in x.dtypes.items()]).encode())
        h.update(json.dumps([str(x.index.name), str(x.index.dtype), len(x)]).encode())
        h.update(pd.util.hash_pandas_object(_hashable(x), index=True).to_numpy().tobytes())
        return h.hexdigest()
    arr = np.ascontiguousarray(np.asarray(x))
    h.update(f"{arr.dtype.str}{arr.shape}".encode())
    h.update(arr.tobytes() if arr.dtype != object else json.dumps(arr.tolist(), default=str).encode())
    return h.hexdigest()


_CONTAINERS = (list, tuple, dict, np.ndarray)


def _is_container(value: Any) -> bool:
    return isinstance(value, _CONTAINERS)


def _container_text(value: Any) -> Any:
    if isinstance(value, _CONTAINERS):  # marked, so that no text value can stand for it
        return "\0container:" + json.dumps(to_jsonable(value), sort_keys=True)
    return value


def _hashable(frame: pd.DataFrame) -> pd.DataFrame:
    """The frame with every cell that holds a list, tuple, dict or array as its JSON text (pandas
    hashes scalars only); a frame without such cells is returned as it is."""
    held = [c for c, t in frame.dtypes.items() if pd.api.types.is_object_dtype(t) and frame[c].map(_is_container).any()]
    if not held:
        return frame
    out = frame.copy()
    for c in held:
        out[c] = frame[c].map(_container_text)
    return out


def fit_key(name: str, inputs: Sequence[Any], settings: Mapping[str, Any]) -> str:
    """The key of fit ``name`` on ``inputs`` with ``settings`` under this code."""
    doc = {
        "name": name,
        "settings": to_jsonable(dict(settings)),
        "inputs": [content_sha256(x) for x in inputs],
        "code": code_fingerprint(),
    }
    return hashlib.sha256(json.dumps(doc, sort_keys=True).encode()).hexdigest()


def keeping() -> bool:
    return os.environ.get(ENV_KEEP, "1").strip().lower() not in ("0", "false", "no", "off")


def kept_fit[T](
    name: str, inputs: Sequence[Any], settings: Mapping[str, Any], fit: Callable[[], T]
) -> tuple[T, Kept | None]:
    """``fit()``'s result, read back when the same fit was kept before (then with its :class:`Kept`).

    Where the cache folder cannot be written the fit simply runs: keeping only ever saves time.
    """
    if not keeping():
        return fit(), None
    key = fit_key(name, inputs, settings)
    folder = cache_dir() / "fits" / name
    path = folder / f"{key}.pkl"
    try:
        folder.mkdir(parents=True, exist_ok=True)
        lock = FileLock(folder / f"{key}.lock")
        lock.acquire()
    except OSError as exc:
        log.warning("cannot keep the %s fit in %s (%s): fitting without keeping it", name, folder, exc)
        return fit(), None
    try:
        if path.is_file():
            try:
                with path.open("rb") as fh:
                    entry = pickle.load(fh)
                return entry["result"], Kept(key, entry["fitted_at"], entry["fit_s"])
            except UNREADABLE as exc:
                log.warning("the kept %s fit %s cannot be read (%s): fitting it again", name, path, exc)
        fitted_at = datetime.now(UTC).isoformat(timespec="seconds")
        t0 = time.perf_counter()
        result = fit()
        entry = {"result": result, "fitted_at": fitted_at, "fit_s": round(time.perf_counter() - t0, 3)}
        _write(path, entry, name)
        return result, None
    finally:
        lock.release()


def _write(path: Path, entry: dict[str, Any], name: str) -> None:
    """Write ``entry`` beside ``path`` and rename it into place; a failure only loses the keeping."""
    try:
        fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.stem}.", suffix=".tmp")
    except OSError as exc:
        log.warning("cannot keep the %s fit at %s (%s)", name, path, exc)
        return
    try:
        with os.fdopen(fd, "wb") as fh:
            pickle.dump(entry, fh, protocol=pickle.HIGHEST_PROTOCOL)
        os.replace(tmp, path)
    except (OSError, pickle.PicklingError) as exc:
        log.warning("cannot keep the %s fit at %s (%s)", name, path, exc)
    finally:
        Path(tmp).unlink(missing_ok=True)  # gone already when renamed
