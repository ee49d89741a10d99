"""Folders written whole or not at all: built in a staging sibling, renamed into place at the end.

Every command that writes a folder (``snapshot create``, ``site``, ``export-eee``) builds it in
``.<name>.partial-<pid>`` beside the target and renames it into place when it is complete; a
folder it replaces is first renamed to ``.<name>.old-<pid>`` and removed after. A failure removes
the staging folder, so the target is either as it was or complete, never half-written.

A process killed with ``kill -9`` cannot clean up: its ``.partial-<pid>`` (or ``.old-<pid>``)
stays. The next writer of the same target sweeps those whose process is gone (:func:`sweep`),
never one of a live process; an ``.old-<pid>`` whose target is missing (killed between the two
renames) is put back instead, so the previous version is not lost.

A write that runs out of room (``ENOSPC``, ``EDQUOT``, or ``EFBIG`` past the file size limit,
from Python or DuckDB) becomes :class:`~evalhouse.errors.DiskFull` naming the target: exit 1,
nothing half-written.
"""

from __future__ import annotations

import errno
import os
import re
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from evalhouse.errors import DiskFull, InputError

PARTIAL = "partial"
OLD = "old"
_ROOM = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EFBIG})
#: How DuckDB (and other libraries that do their own I/O) say the same in an error message.
_ROOM_WORDS = ("no space left on device", "disk quota exceeded", "file too large")


def sibling(target: Path, kind: str, pid: int | None = None) -> Path:
    """``.<name>.<kind>-<pid>`` beside ``target`` (this process's when ``pid`` is not given)."""
    return target.parent / f".{target.name}.{kind}-{os.getpid() if pid is None else pid}"


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # someone else's process
        return True
    return True


def leftovers(folder: Path, name: str | None = None) -> list[tuple[Path, str, int, Path]]:
    """The staging folders (or files, of :func:`write_whole`) in ``folder`` (of the target ``name``
    only, when given), live processes' included: ``(path, kind, pid, the target it was for)``."""
    target = re.escape(name) if name is not None else ".+"
    pattern = re.compile(rf"^\.({target})\.({PARTIAL}|{OLD})-(\d+)$")
    if not folder.is_dir():
        return []
    found = []
    for entry in folder.iterdir():
        match = pattern.match(entry.name)
        if match and not entry.is_symlink() and (entry.is_dir() or entry.is_file()):
            found.append((entry, match[2], int(match[3]), folder / match[1]))
    return sorted(found)


def sweep(target: Path, *, any_target: bool = False) -> list[Path]:
    """Remove the leftovers of writers of ``target`` that died (their pid is not running); an
    ``.old`` folder whose target is missing is renamed back. ``any_target``: those of every target
    in ``target``'s folder (a folder evalhouse alone writes, such as ``<db>.snapshots``). Returns
    what was removed."""
    removed = []
    for path, kind, pid, of in leftovers(target.parent, None if any_target else target.name):
        if pid == os.getpid() or _alive(pid):
            continue
        if kind == OLD and not of.exists():
            path.rename(of)  # killed between its two renames: the previous version comes back
            continue
        if path.is_dir():
            shutil.rmtree(path)
        else:
            path.unlink()
        removed.append(path)
    return removed


def out_of_room(exc: BaseException) -> bool:
    """Whether ``exc`` says a write ran out of room (disk full, quota, file size limit)."""
    if isinstance(exc, OSError) and exc.errno in _ROOM:
        return True
    text = str(exc).lower()
    return any(words in text for words in _ROOM_WORDS)


def disk_full(target: Path, exc: BaseException) -> DiskFull:
    why = str(exc).strip().splitlines()[0] if str(exc).strip() else type(exc).__name__
    return DiskFull(
        f"no room to write {target} ({why}); nothing of it was kept and what was there before is unchanged. "
        "Free some space (or raise the file size limit) and run it again"
    )


@contextmanager
def staged_folder(target: Path, *, replace: bool = False) -> Iterator[Path]:
    """Yield an empty staging folder; when the block ends without error, it becomes ``target``.

    ``target`` must not exist or be an empty folder, or, with ``replace``, may be a folder this
    writer may replace (the caller checked what it is). Any error removes the staging folder; a
    write that ran out of room is raised as :class:`~evalhouse.errors.DiskFull`.
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    sweep(target)
    staging = sibling(target, PARTIAL)
    shutil.rmtree(staging, ignore_errors=True)
    try:
        staging.mkdir()
        yield staging
        _swap(staging, target, replace=replace)
    except BaseException as exc:
        shutil.rmtree(staging, ignore_errors=True)
        if out_of_room(exc) and not isinstance(exc, DiskFull):
            raise disk_full(target, exc) from exc
        raise


def _swap(staging: Path, target: Path, *, replace: bool) -> None:
    """Move the finished folder into place; a folder it replaces is removed only after that."""
    old = sibling(target, OLD)
    if target.is_dir() and not any(target.iterdir()):
        target.rmdir()
    elif target.exists():
        if not replace:
            raise InputError(f"{target} appeared while it was being written; it was left as it is")
        target.rename(old)
    staging.rename(target)
    shutil.rmtree(old, ignore_errors=True)


def write_whole(path: Path, data: str | bytes) -> None:
    """Write one file whole or not at all: a temporary sibling renamed over ``path`` (what a killed
    writer left is swept first); a write that ran out of room is :class:`~evalhouse.errors.DiskFull`
    and ``path`` is as it was."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    sweep(path)
    tmp = sibling(path, PARTIAL)
    try:
        tmp.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
        os.replace(tmp, path)
    except BaseException as exc:
        tmp.unlink(missing_ok=True)
        if out_of_room(exc):
            raise disk_full(path, exc) from exc
        raise
