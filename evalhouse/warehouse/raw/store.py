"""The content-addressed raw store: bytes are kept before anything parses them.

A payload is kept once per sha256, in one of two kinds of place:

- a loose file named by its hash, ``ab/abcdef….<ext>`` (a refresh's payloads, an ingested file);
- a blob of a pack file, ``packs/<id>.pack#<offset>+<length>`` (a bulk import's thousands of small
  payloads, written sequentially into one file per run: :mod:`evalhouse.warehouse.raw.packs`).

Storing the same bytes twice stores them once, whichever kind holds them; every fetch still gets
its own manifest line (``manifest.jsonl``) and its own ``raw_snapshot`` row, whose
``storage_path`` is one of the two forms above, because *when* and *from where* a payload was
seen is provenance even when the bytes are old news. A parser bug therefore never loses a
source, and a re-parse needs no re-fetch. Reading by sha256 (:meth:`RawStore.get`) re-hashes
what it read, so damaged bytes are never parsed silently.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import threading
import uuid
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from evalhouse.errors import RunFailed
from evalhouse.warehouse.raw.packs import (
    Packs,
    PackWriter,
    fsync_dir,
    index_path,
    location,
    read_span,
    scan,
    verify_pack,
    write_index,
)

EXTENSIONS = {
    "application/json": ".json",
    "text/csv": ".csv",
    "text/html": ".html",
    "text/plain": ".txt",
    "text/markdown": ".md",
    "application/xml": ".xml",
    "text/xml": ".xml",
    "application/x-yaml": ".yaml",
    "application/zip": ".zip",
    "application/x-ndjson": ".jsonl",
    "application/jsonl": ".jsonl",
}


class RawStoreError(RunFailed):
    """The raw store cannot hold or return bytes as asked (missing, corrupted, unwritable)."""


@dataclass(frozen=True)
class RawEntry:
    """One fetch: the manifest line and the ``raw_snapshot`` row."""

    fetch_id: str
    sha256: str
    source_key: str
    url: str
    retrieved_at: str
    size_bytes: int
    storage_path: str  # relative to the store: ``ab/abcdef….json`` or ``packs/<id>.pack#<offset>+<length>``
    content_type: str | None = None
    http_status: int | None = None
    etag: str | None = None
    last_modified: str | None = None
    request_params: dict[str, Any] = field(default_factory=dict)
    label: str | None = None
    run_id: str | None = None
    duplicate: bool = False

    def as_row(self) -> dict[str, Any]:
        row = asdict(self)
        row.pop("duplicate")
        row["request_params"] = json.dumps(self.request_params, sort_keys=True)
        return row


def extension_for(content_type: str | None, url: str = "") -> str:
    if content_type:
        ext = EXTENSIONS.get(content_type.split(";")[0].strip().lower())
        if ext:
            return ext
    suffix = Path(url.split("?", maxsplit=1)[0]).suffix.lower()
    if suffix and len(suffix) <= 6 and suffix[1:].isalnum():
        return suffix
    guessed = mimetypes.guess_extension((content_type or "").split(";")[0].strip()) if content_type else None
    return guessed or ".bin"


@dataclass(frozen=True)
class Stored:
    """Where the bytes of one sha256 are kept: a loose file, or a span of a pack file."""

    sha256: str
    storage_path: str  # relative to the store, as in the manifest and ``raw_snapshot.storage_path``
    file: Path  # the file holding the bytes
    offset: int | None = None  # a packed blob's first byte in ``file``
    length: int | None = None

    def __str__(self) -> str:
        return str(self.file) if self.offset is None else f"{self.file}#{self.offset}+{self.length}"

    def read(self) -> bytes:
        """The bytes as they are now, not re-hashed (:meth:`RawStore.get` re-hashes)."""
        if self.offset is None or self.length is None:
            return self.file.read_bytes()
        return read_span(self.file, self.offset, self.length)


@dataclass(frozen=True)
class Damage:
    """A stored object whose bytes no longer match the sha256 it is stored under."""

    sha256: str  # "" when what is damaged is not one blob (a pack's index, its size)
    storage_path: str
    problem: str


@dataclass
class StoreCheck:
    """What :meth:`RawStore.verify` re-hashed: how many objects, and which are damaged."""

    objects: int = 0
    damaged: list[Damage] = field(default_factory=list)


class RawStore:
    """Content-addressed payloads (loose files and pack files) plus an append-only ``manifest.jsonl``.

    A put stores a loose file, written through at once with its manifest line, except inside
    :meth:`packing`, where payloads go to a pack and manifest lines are written in batches; either
    way the bytes are handed to the OS before the manifest line that names them."""

    #: bytes a pack buffers before handing them to the OS (with the manifest lines they complete)
    pack_buffer = 1 << 20
    #: manifest lines held back before they are written (a run of duplicates stores no bytes)
    manifest_batch = 2048

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # sha256 -> stored file name, per two-hex-digit folder, read once per folder: a store of
        # 10^6 payloads is not listed again for every put
        self._folders: dict[str, dict[str, str]] = {}
        self._manifest: TextIO | None = None
        self._made: set[str] = set()  # folders this store created or found
        self.packs = Packs(self.root / "packs")
        self._packing = False
        self._writer: PackWriter | None = None  # the pack being written (inside packing())
        self._lines: list[tuple[str, str]] = []  # manifest lines not written yet: (sha256, line)
        self._unsynced = False  # manifest lines written since the last settle
        self.failed: set[str] = set()  # digests whose bytes the open (or last) pack could not keep

    def _folder(self, prefix: str) -> dict[str, str]:
        known = self._folders.get(prefix)
        if known is None:
            known = {}
            try:
                with os.scandir(self.root / prefix) as entries:
                    for entry in entries:
                        if not entry.name.startswith(".tmp-"):
                            known[entry.name.split(".", 1)[0]] = entry.name
            except FileNotFoundError:
                pass  # an empty folder: nothing stored under this prefix yet
            self._folders[prefix] = known
        return known

    @property
    def manifest_path(self) -> Path:
        return self.root / "manifest.jsonl"

    def put(  # noqa: PLR0913 - the keyword-only arguments are the columns of a raw_snapshot row
        self,
        data: bytes,
        *,
        source_key: str,
        url: str,
        content_type: str | None = None,
        retrieved_at: datetime | None = None,
        http_status: int | None = None,
        etag: str | None = None,
        last_modified: str | None = None,
        request_params: dict[str, Any] | None = None,
        label: str | None = None,
        run_id: str | None = None,
        sha256: str | None = None,
    ) -> RawEntry:
        """Store ``data`` (once per sha256) and append a manifest line for this fetch.

        ``sha256`` is the bytes' digest when the caller has just computed it (it is trusted).
        Inside :meth:`packing` a write error raises :class:`RawStoreError` at once (the digests
        it lost are in :attr:`failed`)."""
        digest = sha256 or hashlib.sha256(data).hexdigest()
        existing = self._locate(digest, fresh=False)
        if existing is not None:
            rel = existing.storage_path
        elif self._packing:
            rel = self._pack(digest, data)
        else:
            rel = f"{digest[:2]}/{digest}{extension_for(content_type, url)}"
        entry = RawEntry(
            fetch_id=uuid.uuid4().hex,
            sha256=digest,
            source_key=source_key,
            url=url,
            retrieved_at=(retrieved_at or datetime.now(UTC)).isoformat(),
            size_bytes=len(data),
            storage_path=rel,
            content_type=content_type,
            http_status=http_status,
            etag=etag,
            last_modified=last_modified,
            request_params=request_params or {},
            label=label,
            run_id=run_id,
            duplicate=existing is not None,
        )
        line = json.dumps(entry.__dict__, sort_keys=True) + "\n"
        if self._packing:
            self._lines.append((digest, line))
            writer = self._writer
            if len(self._lines) >= self.manifest_batch or (writer is not None and writer.buffered >= self.pack_buffer):
                self._drain()
            return entry
        if existing is None:
            self._write(rel, data)
            self._folder(digest[:2])[digest] = rel[3:]
        self._append_manifest(line)
        return entry

    @contextmanager
    def packing(self) -> Iterator[None]:
        """Store the block's payloads in pack files (one per :meth:`settle`) instead of one file each.

        A bulk import's tens of thousands of small files would each cost an inode allocation; a
        pack is one file written sequentially through one buffer. A caller settles before it
        commits rows that name the payloads; leaving the block settles too (an exception leaving
        it still seals what was written, and is what is raised)."""
        self._packing = True
        try:
            yield
        except BaseException:
            self._packing = False
            with suppress(RawStoreError):  # the caller's own failure is what it reports
                self.settle()
            raise
        self._packing = False
        self.settle()

    def _pack(self, digest: str, data: bytes) -> str:
        """Append a blob to the open pack (opening one first); its storage path."""
        if self._writer is None:
            folder = self.root / "packs"
            try:
                if not folder.is_dir():
                    folder.mkdir(parents=True, exist_ok=True)
                    fsync_dir(self.root)
                self._writer = PackWriter(folder)
            except OSError as exc:
                self.failed.add(digest)
                raise self._cannot_write(exc) from exc
            self.failed.clear()  # a new pack: the last one's losses were settled
        writer = self._writer
        try:
            offset, length = writer.add(digest, data)
        except OSError as exc:
            self.failed |= writer.lost
            self._write_lines()
            raise self._cannot_write(exc) from exc
        return location(writer.name, offset, length)

    def _cannot_write(self, error: OSError) -> RawStoreError:
        return RawStoreError(f"cannot write to the raw store at {self.root}: {error}")

    def _drain(self) -> None:
        """Hand the open pack's buffer to the OS, then write the manifest lines it completes."""
        writer = self._writer
        if writer is not None:
            try:
                writer.drain()
            except OSError as exc:
                self.failed |= writer.lost
                self._write_lines()
                raise self._cannot_write(exc) from exc
        self._write_lines()

    def _write_lines(self) -> None:
        """Append the held-back manifest lines whose bytes are stored, in one write."""
        lines, self._lines = self._lines, []
        text = "".join(line for digest, line in lines if digest not in self.failed)
        if not text:
            return
        try:
            self._append_manifest(text)
        except OSError as exc:  # the bytes are stored; the manifest cannot say so
            raise self._cannot_write(exc) from exc
        self._unsynced = True

    def settle(self) -> None:
        """Make every payload put so far durable with its manifest line, and seal the open pack.

        The pack is drained, synced (``fsync``) and indexed, and the manifest synced, so the rows
        a caller commits next name bytes that a crash, even of the machine, does not take back.
        Raises :class:`RawStoreError` for a write error (the digests whose bytes were not kept
        are in :attr:`failed`: their fetches must not be recorded)."""
        error: RawStoreError | None = None
        writer, self._writer = self._writer, None
        if writer is not None:
            try:
                writer.seal()
            except OSError as exc:
                error = self._cannot_write(exc)
            self.failed |= writer.lost
            self.packs.add(writer.path)
        try:
            self._write_lines()
            if self._unsynced and self._manifest is not None:
                os.fsync(self._manifest.fileno())
                self._unsynced = False
        except RawStoreError as exc:
            error = error or exc
        except OSError as exc:
            error = error or self._cannot_write(exc)
        if error is not None:
            raise error

    def _write(self, rel: str, data: bytes) -> None:
        """Write then rename, so a crash never leaves a truncated file under a valid hash (a
        ``.tmp-*`` file left by a killed writer is removed by :meth:`recover`)."""
        folder = self.root / rel[:2]
        if rel[:2] not in self._made:
            folder.mkdir(parents=True, exist_ok=True)
            self._made.add(rel[:2])
        # a name only this thread uses for these bytes (a stale one from a dead writer is replaced)
        tmp = folder / f".tmp-{os.getpid()}-{threading.get_native_id()}-{rel[3:19]}"
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
        try:
            view = memoryview(data)
            while view:
                view = view[os.write(fd, view) :]
        finally:
            os.close(fd)
        os.replace(tmp, self.root / rel)

    def _append_manifest(self, text: str) -> None:
        """Manifest lines, written through at once (the handle stays open between puts)."""
        if self._manifest is None or self._manifest.closed:
            self.root.mkdir(parents=True, exist_ok=True)
            self._manifest = open(self.manifest_path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across puts
        self._manifest.write(text)
        self._manifest.flush()

    def close(self) -> None:
        if self._manifest is not None:
            self._manifest.close()
        self.packs.close()

    def _locate(self, sha256: str, *, fresh: bool) -> Stored | None:
        """Where ``sha256`` is stored: the open pack, a loose file, a sealed or unsealed pack.

        With ``fresh``, a miss reads the folders again (another process may have stored it); a
        put does not: the writer lock means no one else stores anything meanwhile."""
        writer = self._writer
        span = writer.blobs.get(sha256) if writer is not None else None
        if writer is not None and span is not None:
            return Stored(sha256, location(writer.name, *span), writer.path, *span)
        prefix = sha256[:2]
        name = self._folder(prefix).get(sha256)
        if name is not None and (self.root / prefix / name).exists():
            return Stored(sha256, f"{prefix}/{name}", self.root / prefix / name)
        hit = self.packs.locate(sha256, fresh=fresh)
        if hit is not None:
            pack, offset, length = hit
            return Stored(sha256, location(pack.name, offset, length), pack, offset, length)
        if fresh:
            self._folders.pop(prefix, None)  # stale (a file added or removed by another process)
            name = self._folder(prefix).get(sha256)
            if name is not None:
                return Stored(sha256, f"{prefix}/{name}", self.root / prefix / name)
        return None

    def find(self, sha256: str) -> Stored | None:
        """Where the bytes of ``sha256`` are kept (a loose file or a packed blob), or None.

        A blob of the pack being written is handed to the OS first, so it can be read."""
        if self._writer is not None and sha256 in self._writer.blobs:
            self._drain()
        return self._locate(sha256, fresh=True)

    def get(self, sha256: str) -> bytes:
        """The bytes for ``sha256``, re-hashed so a corrupted file or blob is never parsed silently."""
        stored = self.find(sha256)
        if stored is None:
            raise RawStoreError(f"raw payload {sha256} is not in the raw store at {self.root}")
        try:
            data = stored.read()
        except OSError as exc:
            raise RawStoreError(f"cannot read raw payload {stored}: {exc}") from exc
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha256:
            raise RawStoreError(f"raw payload {stored} no longer matches its hash (now {actual})")
        return data

    def recover(self) -> dict[str, int]:
        """Clean up after a writer that died mid-write (kill -9, power loss), so the next one starts
        from a store where every name is the hash of its bytes:

        - ``.tmp-*`` files (a loose file or a pack index never renamed into place) are removed;
        - a torn last line of the manifest (a fetch whose line was half written) is cut off;
        - a pack without an index is read from the start and every blob re-hashed; its torn tail
          (a blob or header running past the end) is cut off and its index written, and a pack
          with no complete blob is removed. A complete blob that does not match its hash is not
          guessed about, nor is a pack whose first bytes are not the pack magic: such a pack is left
          as it is (``damaged_packs``) for ``verify`` to report.

        No committed row names a blob of a torn tail: a run settles (syncs and indexes) its pack
        before its rows commit. Call it only while holding the warehouse's writer lock: another
        writer's ``.tmp-*`` file or open pack is its bytes in flight. Returns what it did."""
        done = dict.fromkeys(
            (
                "temporary_files",
                "torn_manifest_bytes",
                "packs_sealed",
                "torn_pack_bytes",
                "empty_packs",
                "damaged_packs",
            ),
            0,
        )
        if not self.root.is_dir():
            return done
        for path in [*self.root.glob("??/.tmp-*"), *self.root.glob("packs/.tmp-*")]:
            path.unlink(missing_ok=True)
            done["temporary_files"] += 1
        if self.manifest_path.is_file():
            done["torn_manifest_bytes"] = _cut_torn_line(self.manifest_path)
        for pack in self.packs.paths():
            if not index_path(pack).is_file():
                self._seal_left(pack, done)
        self.packs.close()  # listed again by the next lookup
        return done

    @staticmethod
    def _seal_left(pack: Path, done: dict[str, int]) -> None:
        """Cut a pack left unsealed back to its last complete blob and write its index."""
        found = scan(pack, hashing=True)
        if found.corrupt or found.foreign:
            done["damaged_packs"] += 1
            return
        if not found.blobs:
            pack.unlink()
            done["empty_packs"] += 1
            return
        with open(pack, "r+b") as fh:
            if found.torn:
                fh.truncate(found.end)
                done["torn_pack_bytes"] += found.torn
            os.fsync(fh.fileno())
        write_index(pack, {sha: (offset, length) for sha, offset, length in found.blobs}, found.end)
        done["packs_sealed"] += 1

    def verify(self) -> StoreCheck:
        """Re-hash every stored object, loose files and packed blobs, naming each damaged one by
        its storage path (a pack's torn tail, left by a killed writer, is no object: ``recover``
        cuts it)."""
        check = StoreCheck()
        if not self.root.is_dir():
            return check
        for path in sorted(self.root.glob("??/*")):
            if path.name.startswith(".tmp-"):
                continue
            check.objects += 1
            expected = path.name.split(".")[0]
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
            if actual != expected:
                check.damaged.append(Damage(expected, str(path.relative_to(self.root)), f"sha256 is now {actual}"))
        for pack in self.packs.paths():
            objects, problems = verify_pack(pack)
            check.objects += objects
            check.damaged.extend(Damage(*problem) for problem in problems)
        return check


def _cut_torn_line(path: Path, chunk: int = 1 << 16) -> int:
    """Cut a half-written last line off the manifest; the bytes cut. Only the end is read (the
    manifest grows every night): back from its last byte to the previous newline."""
    with open(path, "r+b") as fh:
        size = fh.seek(0, os.SEEK_END)
        if size == 0:
            return 0
        fh.seek(size - 1)
        if fh.read(1) == b"\n":
            return 0
        end = size
        while end > 0:
            start = max(0, end - chunk)
            fh.seek(start)
            found = fh.read(end - start).rfind(b"\n")
            if found >= 0:
                keep = start + found + 1
                break
            end = start
        else:
            keep = 0
        fh.truncate(keep)
        return size - keep
