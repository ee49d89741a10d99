"""An import tree's files, listed and read with as few system calls as a safe read allows.

Listing walks the tree once with ``os.scandir`` (whose entries carry each name's type, so no file
is stat-ed to list it) and keeps every directory's names, so a record's companion
``_samples.jsonl`` is found without touching the disk. Symbolic links to directories are not
followed, as :meth:`pathlib.Path.rglob` does not follow them.

Reading a regular file opens it without following links and non-blocking, then checks on the
open descriptor that it is still a regular file: a file swapped for a link, a FIFO or a device
between listing and reading is refused with the reason (a FIFO would otherwise block the import,
and with it the writer lock, forever). Links and special files take the careful path of
:func:`refusal`, which resolves them and refuses what points outside the import root.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote_from_bytes

SAMPLES_SUFFIX = "_samples.jsonl"
_KINDS = {stat.S_IFDIR: "a directory", stat.S_IFIFO: "a FIFO", stat.S_IFSOCK: "a socket"}


@dataclass(frozen=True)
class TreeFile:
    """One name in the tree: where it is, its path below the data root, whether the listing saw a
    regular file (not a link, not special)."""

    path: Path
    rel: str
    regular: bool


@dataclass
class TreeListing:
    """The ``*.json`` names of a tree in :class:`pathlib.Path` order, and every directory's names."""

    root: Path
    json_files: list[TreeFile]
    names: dict[str, dict[str, bool]]  # directory (relative, "" for the root) -> name -> regular file
    unlisted: list[str]  # directories that could not be listed, with the reason

    def companion(self, file: TreeFile) -> TreeFile | None:
        """The record's ``<stem>_samples.jsonl`` beside it, when the listing saw one."""
        folder, _, name = file.rel.rpartition("/")
        samples = name.removesuffix(".json") + SAMPLES_SUFFIX
        regular = self.names.get(folder, {}).get(samples)
        if regular is None:
            return None
        return TreeFile(file.path.with_name(samples), f"{folder}/{samples}" if folder else samples, regular)


def list_tree(root: Path) -> TreeListing:
    """Walk ``root`` once (links to directories are listed, not followed)."""
    listing = TreeListing(root, [], {}, [])
    pending = [(root, "")]
    while pending:
        folder, rel = pending.pop()
        names: dict[str, bool] = {}
        try:
            with os.scandir(folder) as entries:
                for entry in entries:
                    child = f"{rel}/{entry.name}" if rel else entry.name
                    regular = entry.is_file(follow_symlinks=False)
                    names[entry.name] = regular
                    if entry.name.endswith(".json"):
                        listing.json_files.append(TreeFile(Path(entry.path), child, regular))
                    if entry.is_dir(follow_symlinks=False):
                        pending.append((Path(entry.path), child))
        except OSError as exc:
            listing.unlisted.append(f"{rel or '.'}/ (cannot be listed: {exc.strerror or exc})")
        listing.names[rel] = names
    listing.json_files.sort(key=lambda f: f.rel.split("/"))
    return listing


def refusal(path: Path, real_root: Path) -> str | None:
    """Why the link or special file ``path`` is not read at all, or None for a regular file inside
    ``real_root`` (checked before the file is opened)."""
    linked = path.is_symlink()
    try:
        real = path.resolve(strict=True)
    except (OSError, RuntimeError) as exc:  # missing target, or a link loop
        what = "a dangling symbolic link" if linked else "a file that cannot be resolved"
        return f"refused: {what} ({type(exc).__name__}); nothing read"
    if not real.is_relative_to(real_root):
        return f"refused: resolves to {real}, outside the import root {real_root}; its bytes are not read"
    try:
        mode = os.stat(real).st_mode
    except OSError as exc:
        return f"refused: cannot stat the file ({exc.strerror}); nothing read"
    if not stat.S_ISREG(mode):
        return f"refused: {_kind(mode)}, not a regular file; nothing read"
    return None


def _kind(mode: int) -> str:
    return _KINDS.get(stat.S_IFMT(mode), "a device or special file")


class Refused(Exception):
    """The file is not read; ``str(exc)`` says why (for the quarantine row)."""


def read_file(file: TreeFile, real_root: Path, *, size_check: Callable[[int, str], None] | None = None) -> bytes:
    """The bytes of ``file``, or :class:`Refused` with the reason it is not read. ``size_check``
    is given the file's size (and name) before anything is read; what it raises (a budget) refuses it."""
    if not file.regular:
        reason = refusal(file.path, real_root)
        if reason is not None:
            raise Refused(reason)
    flags = os.O_RDONLY | os.O_NONBLOCK | (os.O_NOFOLLOW if file.regular else 0)
    try:
        fd = os.open(file.path, flags)
    except OSError as exc:
        if file.regular and exc.errno == errno.ELOOP:  # became a link since it was listed
            return read_file(TreeFile(file.path, file.rel, regular=False), real_root)
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise Refused(f"refused: {_kind(info.st_mode)}, not a regular file; nothing read")
        if size_check is not None:
            try:
                size_check(info.st_size, f"data/{file.rel}")
            except ValueError as exc:  # a budget's ParseError: the file is refused unread
                raise Refused(f"refused unread: {exc}") from None
        # one read of the size fstat gives, plus a byte: a short read of a regular file is its end
        # (a buffer of the file's size, not a megabyte mapped and unmapped per file)
        first = os.read(fd, info.st_size + 1)
        if len(first) <= info.st_size:
            return first
        chunks = [first]  # it grew since the fstat: read to its end
        while chunk := os.read(fd, 1 << 20):
            chunks.append(chunk)
    except OSError as exc:  # vanished or unreadable between the listing and the read
        raise Refused(f"cannot be read: {exc.strerror or exc}") from None
    finally:
        os.close(fd)
    return b"".join(chunks)


def file_uri(file: TreeFile, real_root: Path, root_uri: str) -> str:
    """``file:`` URI of where the bytes really are (a regular file lies under the real root)."""
    if file.regular:
        return f"{root_uri}/{quote_from_bytes(os.fsencode(file.rel))}"
    return file.path.resolve().as_uri()
