"""Pack files: the payloads of one bulk run in one append-only file, found through a sorted index.

A bulk import stores tens of thousands of small payloads; one file each costs the file system an
inode allocation, a rename and a manifest write per payload. A pack is written sequentially
through one buffer instead, and sealed with an index when the run's bytes are settled.

``packs/<id>.pack``::

    b"EHPACK1\\n"                                        8 bytes
    per blob: sha256 (32 raw bytes) | length (8) | the bytes

A pack describes itself: its index can always be rebuilt by reading it from the start, and a
torn tail (a writer killed mid-blob) shows as a header or a blob running past the end of the
file. A blob is addressed by the offset of its first byte and its length; its storage path is
``packs/<id>.pack#<offset>+<length>``.

``packs/<id>.idx``, written (to a temporary name, then renamed) when the pack is sealed and never
changed after::

    b"EHIDX1\\n\\0" | pack size (8) | count (8) | fanout: 256 cumulative counts (4 each) by first byte
    count entries of 48 bytes, sorted by sha256: sha256 (32) | offset (8) | length (8)

Integers are big-endian. A lookup reads the fanout slot of the digest's first byte and bisects
that slice of the memory-mapped index. A pack without an index is one whose writer did not
finish (killed, or failed while sealing): readers scan it, and ``RawStore.recover`` cuts its torn
tail and writes its index.
"""

from __future__ import annotations

import hashlib
import mmap
import os
import re
import struct
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import BinaryIO

PACK_MAGIC = b"EHPACK1\n"
INDEX_MAGIC = b"EHIDX1\n\0"
BLOB_HEADER = 40  # sha256 + length
ENTRY = struct.Struct(">32sQQ")  # sha256, offset, length
FANOUT = struct.Struct(">256I")
INDEX_HEAD = struct.Struct(">8sQQ")  # magic, pack size, count
ENTRIES_AT = INDEX_HEAD.size + FANOUT.size
LOCATION_RE = re.compile(r"^packs/([^/#]+\.pack)#(\d+)\+(\d+)$")
BIG_BLOB = 1 << 20  # written straight from the caller's bytes, not copied into the buffer


def location(pack: str, offset: int, length: int) -> str:
    """The storage path of a packed blob: ``packs/<id>.pack#<offset>+<length>``."""
    return f"packs/{pack}#{offset}+{length}"


def parse_location(storage_path: str) -> tuple[str, int, int] | None:
    """``(pack file name, offset, length)`` of a packed blob's storage path; None for a loose file."""
    found = LOCATION_RE.match(storage_path)
    return None if found is None else (found[1], int(found[2]), int(found[3]))


def index_path(pack: Path) -> Path:
    return pack.with_suffix(".idx")


def fsync_dir(folder: Path) -> None:
    """Make a rename or a new file in ``folder`` durable (its entry is the directory's data)."""
    fd = os.open(folder, os.O_RDONLY)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


@dataclass
class Scan:
    """What reading a pack from the start found: its blobs, and where the last complete one ends."""

    blobs: list[tuple[str, int, int]] = field(default_factory=list)  # sha256, offset, length
    end: int = 0  # bytes up to the end of the last complete blob (0: not even a complete magic)
    size: int = 0  # the file's size: beyond ``end`` is a torn tail
    corrupt: list[tuple[str, int, int, str]] = field(default_factory=list)  # with ``hashing``: the mismatches
    foreign: bool = False  # whole first bytes that are not the magic: damaged, or not a pack at all

    @property
    def torn(self) -> int:
        return self.size - self.end


def scan(path: Path, *, hashing: bool = False) -> Scan:
    """Read a pack's blob headers from the start (and re-hash each blob with ``hashing``).

    A header or blob running past the end of the file is the torn tail of an unfinished write;
    it is not a blob. A file not starting with the magic has no blobs (and is ``foreign`` unless
    it is shorter than the magic: a writer killed before its first write)."""
    found = Scan()
    with open(path, "rb") as fh:
        found.size = os.fstat(fh.fileno()).st_size
        magic = fh.read(len(PACK_MAGIC))
        if magic != PACK_MAGIC:
            found.foreign = len(magic) == len(PACK_MAGIC)
            return found
        at = found.end = len(PACK_MAGIC)
        while True:
            header = fh.read(BLOB_HEADER)
            if len(header) < BLOB_HEADER:
                break
            length = int.from_bytes(header[32:], "big")
            start = at + BLOB_HEADER
            if start + length > found.size:
                break
            sha = header[:32].hex()
            if hashing:
                actual = _hash_span(fh, length)
                if actual != sha:
                    found.corrupt.append((sha, start, length, f"sha256 is now {actual}"))
            else:
                fh.seek(length, os.SEEK_CUR)
            found.blobs.append((sha, start, length))
            at = found.end = start + length
    return found


def _hash_span(fh: BinaryIO, length: int) -> str:
    """The sha256 of the next ``length`` bytes of ``fh`` (of fewer, where the file ends first)."""
    digest = hashlib.sha256()
    left = length
    while left:
        chunk = fh.read(min(left, 1 << 20))
        if not chunk:
            break
        digest.update(chunk)
        left -= len(chunk)
    return digest.hexdigest()


def read_span(path: Path, offset: int, length: int) -> bytes:
    """The ``length`` bytes at ``offset`` of a pack (fewer when the file is shorter: the caller re-hashes)."""
    with open(path, "rb") as fh:
        fh.seek(offset)
        return fh.read(length)


def write_index(pack: Path, blobs: dict[str, tuple[int, int]], pack_size: int) -> Path:
    """Seal ``pack`` with its index: written whole under a temporary name, synced, then renamed, so
    an index is either absent or complete."""
    entries = sorted((bytes.fromhex(sha), offset, length) for sha, (offset, length) in blobs.items())
    counts = [0] * 256
    for sha, _, _ in entries:
        counts[sha[0]] += 1
    running = 0
    for byte in range(256):
        running += counts[byte]
        counts[byte] = running
    body = bytearray(INDEX_HEAD.pack(INDEX_MAGIC, pack_size, len(entries)))
    body += FANOUT.pack(*counts)
    for entry in entries:
        body += ENTRY.pack(*entry)
    target = index_path(pack)
    tmp = target.with_name(f".tmp-{os.getpid()}-{target.name}")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    try:
        _write_all(fd, body)
        os.fsync(fd)
    finally:
        os.close(fd)
    os.replace(tmp, target)
    fsync_dir(pack.parent)
    return target


def _write_all(fd: int, data: bytes | bytearray) -> None:
    with memoryview(data) as whole:
        done = 0
        while done < len(whole):
            with whole[done:] as rest:
                done += os.write(fd, rest)


class PackIndex:
    """A sealed pack's index, memory-mapped: lookups bisect it without reading it whole."""

    def __init__(self, path: Path) -> None:
        with open(path, "rb") as fh:
            size = os.fstat(fh.fileno()).st_size
            if size < ENTRIES_AT:
                raise ValueError(f"{path} is not a complete pack index ({size} bytes)")
            self._map = mmap.mmap(fh.fileno(), 0, access=mmap.ACCESS_READ)
        magic, self.pack_size, self.count = INDEX_HEAD.unpack_from(self._map)
        if magic != INDEX_MAGIC or size != ENTRIES_AT + self.count * ENTRY.size:
            self._map.close()
            raise ValueError(f"{path} is not a complete pack index")
        self._fanout = FANOUT.unpack_from(self._map, INDEX_HEAD.size)

    def lookup(self, sha: bytes) -> tuple[int, int] | None:
        """``(offset, length)`` of the blob whose raw sha256 is ``sha``, or None."""
        lo = self._fanout[sha[0] - 1] if sha[0] else 0
        hi = self._fanout[sha[0]]
        view = self._map
        while lo < hi:
            mid = (lo + hi) // 2
            at = ENTRIES_AT + mid * ENTRY.size
            key = view[at : at + 32]
            if key < sha:
                lo = mid + 1
            elif key > sha:
                hi = mid
            else:
                _, offset, length = ENTRY.unpack_from(view, at)
                return offset, length
        return None

    def entries(self) -> Iterator[tuple[str, int, int]]:
        """Every ``(sha256, offset, length)``, in sha256 order."""
        for sha, offset, length in ENTRY.iter_unpack(self._map[ENTRIES_AT:]):
            yield sha.hex(), offset, length

    def close(self) -> None:
        self._map.close()


class PackReader:
    """One pack as a reader finds it: sealed (its index) or not (scanned; again when it grew)."""

    def __init__(self, path: Path) -> None:
        self.path = path
        self.index: PackIndex | None = None
        self._scanned: dict[bytes, tuple[int, int]] = {}
        self._scanned_size = -1
        self.reload()

    def reload(self) -> None:
        """Open the index if there is one now (a writer sealed the pack), else scan what grew."""
        if self.index is not None:
            return
        idx = index_path(self.path)
        if idx.is_file():
            try:
                self.index = PackIndex(idx)
                self._scanned = {}
                return
            except ValueError:
                pass  # a damaged index: the pack is read by scanning (verify says so)
        try:
            size = self.path.stat().st_size
        except FileNotFoundError:
            size = 0
        if size != self._scanned_size:
            found = scan(self.path) if size else Scan()
            self._scanned = {bytes.fromhex(sha): (offset, length) for sha, offset, length in found.blobs}
            self._scanned_size = size

    def lookup(self, sha: bytes) -> tuple[int, int] | None:
        if self.index is not None:
            return self.index.lookup(sha)
        return self._scanned.get(sha)

    def close(self) -> None:
        if self.index is not None:
            self.index.close()


class Packs:
    """Every pack of a store's ``packs/`` folder, listed once and again when a lookup misses."""

    def __init__(self, folder: Path) -> None:
        self.folder = folder
        self._readers: dict[str, PackReader] = {}
        self._listed = False

    def paths(self) -> list[Path]:
        """The pack files, oldest name first (names start with the time the pack was opened)."""
        if not self.folder.is_dir():
            return []
        return sorted(p for p in self.folder.glob("*.pack") if not p.name.startswith(".tmp-"))

    def _refresh(self) -> None:
        for path in self.paths():
            reader = self._readers.get(path.name)
            if reader is None:
                self._readers[path.name] = PackReader(path)
            else:
                reader.reload()
        self._listed = True

    def add(self, path: Path) -> None:
        """A pack this process sealed (or cannot seal: then it is scanned)."""
        old = self._readers.pop(path.name, None)
        if old is not None:
            old.close()
        if path.exists():
            self._readers[path.name] = PackReader(path)

    def locate(self, sha256: str, *, fresh: bool = True) -> tuple[Path, int, int] | None:
        """``(pack, offset, length)`` of ``sha256``; with ``fresh``, a miss lists the folder again
        (another process may have written a pack since). A writer holding the lock passes
        ``fresh=False``: no one else adds packs then."""
        if not self._listed:
            self._refresh()
        sha = bytes.fromhex(sha256)
        for _ in range(2):
            for reader in self._readers.values():
                hit = reader.lookup(sha)
                if hit is not None:
                    return reader.path, hit[0], hit[1]
            if not fresh:
                break
            fresh = False
            self._refresh()
        return None

    def close(self) -> None:
        for reader in self._readers.values():
            reader.close()
        self._readers.clear()
        self._listed = False


class PackWriter:
    """One pack being written: blobs are appended to a buffer and drained to the file in chunks.

    Nothing here is durable until :meth:`drain` (bytes handed to the OS) and :meth:`seal` (synced,
    indexed). A failed write leaves the writer :attr:`broken`: the file is cut back to the blobs
    written before, and the digests of the others are in :attr:`lost`."""

    def __init__(self, folder: Path) -> None:
        stamp = datetime.now(UTC).strftime("%Y%m%dT%H%M%SZ")
        self.name = f"{stamp}-{uuid.uuid4().hex[:8]}.pack"
        self.path = folder / self.name
        self._fd = os.open(self.path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        self._buffer = bytearray(PACK_MAGIC)
        self._big: bytes | None = None  # a large blob drained straight after the buffer
        self.size = len(PACK_MAGIC)  # bytes appended, buffered or not
        self.written = 0  # bytes the OS has
        self.blobs: dict[str, tuple[int, int]] = {}  # sha256 -> (offset, length)
        self.lost: set[str] = set()
        self.broken: OSError | None = None
        self._torn = False  # a failed write could not be cut back: leave the pack to recover()

    @property
    def buffered(self) -> int:
        return self.size - self.written

    def add(self, sha256: str, data: bytes) -> tuple[int, int]:
        """Append a blob (buffered: no I/O unless it is large); its ``(offset, length)``."""
        if self.broken is not None:
            raise self.broken
        offset = self.size + BLOB_HEADER
        self._buffer += bytes.fromhex(sha256)
        self._buffer += len(data).to_bytes(8, "big")
        self.blobs[sha256] = (offset, len(data))
        self.size = offset + len(data)
        if len(data) >= BIG_BLOB:
            self._big = data
            self.drain()
        else:
            self._buffer += data
        return offset, len(data)

    def drain(self) -> None:
        """Hand the buffered bytes to the OS; on a write error the writer breaks (see the class)."""
        if self.broken is not None:
            raise self.broken
        if self.written == self.size:
            return
        try:
            self._write_out(self._buffer)
            if self._big is not None:
                self._write_out(self._big)
        except OSError as exc:
            self._break(exc)
            raise
        self._buffer.clear()
        self._big = None
        self.written = self.size

    def _write_out(self, data: bytes | bytearray) -> None:
        _write_all(self._fd, data)

    def _break(self, error: OSError) -> None:
        self.broken = error
        for sha, (offset, _) in list(self.blobs.items()):
            if offset - BLOB_HEADER >= self.written:
                del self.blobs[sha]
                self.lost.add(sha)
        self._buffer.clear()
        self._big = None
        self.size = self.written
        try:
            os.ftruncate(self._fd, self.written)
        except OSError:
            self._torn = True

    def seal(self) -> bool:
        """Drain, sync and index the pack (an empty one is removed); True when it holds blobs.

        A failed drain seals the blobs written before it and then raises. A failed sync loses
        every blob of the pack (the OS may have dropped them: :attr:`lost`); a failed index write
        loses none (the pack is read by scanning until ``recover`` indexes it)."""
        pending: OSError | None = None
        if self.broken is None:
            try:
                self.drain()
            except OSError as exc:  # the writer is broken and cut back: what it wrote before is sealed
                pending = exc
        try:
            if self.blobs:
                try:
                    os.fsync(self._fd)
                except OSError:
                    self.lost.update(self.blobs)
                    self.blobs.clear()
                    raise
        finally:
            self.abandon()
        if not self.blobs:
            self.path.unlink(missing_ok=True)
        elif not self._torn:
            write_index(self.path, self.blobs, self.written)
        if pending is not None:
            raise pending
        return bool(self.blobs)

    def abandon(self) -> None:
        """Close the file without sealing (a failure is being reported): recover() indexes it."""
        if self._fd >= 0:
            os.close(self._fd)
            self._fd = -1


def verify_pack(pack: Path) -> tuple[int, list[tuple[str, str, str]]]:
    """Re-hash every blob of ``pack``: how many were checked, and ``(sha256, storage path,
    problem)`` for each that no longer matches (or that its index places wrongly).

    A sealed pack is checked through its index (so a damaged header cannot hide the blobs after
    it); an unsealed one by scanning, its torn tail being no blob at all."""
    problems: list[tuple[str, str, str]] = []
    idx = index_path(pack)
    index: PackIndex | None = None
    if idx.is_file():
        try:
            index = PackIndex(idx)
        except ValueError as exc:
            problems.append(("", f"packs/{idx.name}", f"{exc}; the pack was scanned instead"))
    if index is None:
        found = scan(pack, hashing=True)
        if found.foreign:
            problems.append(("", f"packs/{pack.name}", "does not start as a pack does (its first bytes are damaged)"))
        for sha, offset, length, problem in found.corrupt:
            problems.append((sha, location(pack.name, offset, length), problem))
        return len(found.blobs), problems
    try:
        entries = sorted(index.entries(), key=lambda e: e[1])
        size = pack.stat().st_size
        if size != index.pack_size:
            problems.append(("", f"packs/{pack.name}", f"the pack is {size} bytes, its index says {index.pack_size}"))
        with open(pack, "rb") as fh:
            for sha, offset, length in entries:
                where = location(pack.name, offset, length)
                fh.seek(offset - BLOB_HEADER)
                header = fh.read(BLOB_HEADER)
                if offset + length > size:
                    problems.append((sha, where, "the pack ends before this blob does"))
                    continue
                actual = _hash_span(fh, length)
                if actual != sha:
                    problems.append((sha, where, f"sha256 is now {actual}"))
                elif header[:32].hex() != sha:
                    problems.append((sha, where, "the blob's header names another sha256"))
        return len(entries), problems
    finally:
        index.close()
