"""The content-addressed raw store: bytes are kept before anything parses them.

Files are named by their sha256 (``ab/abcdef….<ext>``), so storing the same bytes twice stores
them once; every fetch still gets its own manifest line (``manifest.jsonl``) and its own
``raw_snapshot`` row, because *when* and *from where* a payload was seen is provenance even when
the bytes are old news. A parser bug therefore never loses a source, and a re-parse needs no
re-fetch.
"""

from __future__ import annotations

import hashlib
import json
import mimetypes
import os
import threading
import uuid
from collections import deque
from collections.abc import Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import asdict, dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any, TextIO

from evalhouse.errors import RunFailed

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
    storage_path: str
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


class RawStore:
    """A directory of content-addressed payloads plus an append-only ``manifest.jsonl``."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        # sha256 -> stored file name, per two-hex-digit folder, read once per folder: a store of
        # 10^6 payloads is not listed again for every put
        self._folders: dict[str, dict[str, str]] = {}
        self._manifest: TextIO | None = None
        self._made: set[str] = set()  # folders this store created or found
        self._behind: ThreadPoolExecutor | None = None
        self._queued: deque[tuple[Future[None] | None, str, str]] = deque()  # writes in flight: job, digest, line
        self._max_queued = 256
        self._pending: set[str] = set()  # digests queued for writing behind
        self._error: OSError | None = None
        self.failed: set[str] = set()  # digests whose bytes could not be written (their fetches are not kept)

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

        ``sha256`` is the bytes' digest when the caller has just computed it (it is trusted)."""
        digest = sha256 or hashlib.sha256(data).hexdigest()
        folder = self._folder(digest[:2])
        existing = folder.get(digest)
        duplicate = existing is not None and (digest in self._pending or (self.root / digest[:2] / existing).exists())
        rel = f"{digest[:2]}/{existing}" if duplicate else f"{digest[:2]}/{digest}{extension_for(content_type, url)}"
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
            duplicate=duplicate,
        )
        line = json.dumps(entry.__dict__, sort_keys=True) + "\n"
        if self._behind is not None:
            self._pending.add(digest)
            self._queue(None if duplicate else rel, digest, data, line)
        else:
            if not duplicate:
                self._write(rel, data)
            self._append_manifest(line)
        folder[digest] = rel[3:]
        return entry

    @contextmanager
    def writing_behind(self, writers: int = 4, queued: int = 256) -> Iterator[None]:
        """Write payload files on ``writers`` background threads while the caller goes on parsing
        (creating thousands of small files is the file system's inode allocation, off the parser's path).

        At most ``queued`` files are in flight. Manifest lines are appended in put order once their
        files are written; :meth:`flush` waits for all of them and raises the first write error
        (the digests not written are in :attr:`failed`), so a caller flushes before it commits
        rows that name the payloads. Leaving the block flushes too."""
        self._behind = ThreadPoolExecutor(max_workers=writers, thread_name_prefix="raw-store-writer")
        self._max_queued = queued
        try:
            yield
        except BaseException:
            self._stop_behind()
            self._error = None  # the caller's own failure is what it reports
            raise
        self._stop_behind()
        self._raise_write_error()

    def _stop_behind(self) -> None:
        try:
            self._settle_queued()
        finally:
            if self._behind is not None:
                self._behind.shutdown(wait=True)
            self._behind = None
            self._pending.clear()
            self.failed.clear()

    def flush(self) -> None:
        """Wait until every queued payload and its manifest line is written (see :meth:`writing_behind`)."""
        self._settle_queued()
        self._raise_write_error()

    def _queue(self, rel: str | None, digest: str, data: bytes, line: str) -> None:
        job = None if rel is None or self._behind is None else self._behind.submit(self._write, rel, data)
        self._queued.append((job, digest, line))
        if len(self._queued) > self._max_queued:
            self._settle_queued(keep=self._max_queued // 2)

    def _settle_queued(self, keep: int = 0) -> None:
        """Wait for the oldest queued writes (all but ``keep``) and append their manifest lines in
        order; a write that failed gets no line, its digest goes to :attr:`failed`."""
        while len(self._queued) > keep:
            job, digest, line = self._queued.popleft()
            try:
                if job is not None:
                    job.result()
            except OSError as exc:  # kept and raised by flush(): the run fails, nothing is committed
                self._error = self._error or exc
                self.failed.add(digest)
                continue
            try:
                self._append_manifest(line)
            except OSError as exc:  # the bytes are stored; the manifest cannot say so
                self._error = self._error or exc

    def _raise_write_error(self) -> None:
        if self._error is not None:
            error, self._error = self._error, None
            raise RawStoreError(f"cannot write to the raw store at {self.root}: {error}") from error

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

    def _append_manifest(self, line: str) -> None:
        """One line per fetch, written through at once (the handle stays open between puts)."""
        if self._manifest is None or self._manifest.closed:
            self.root.mkdir(parents=True, exist_ok=True)
            self._manifest = open(self.manifest_path, "a", encoding="utf-8")  # noqa: SIM115 - kept open across puts
        self._manifest.write(line)
        self._manifest.flush()

    def close(self) -> None:
        if self._manifest is not None:
            self._manifest.close()

    def find(self, sha256: str) -> Path | None:
        """The stored file for ``sha256`` whatever its extension, or None."""
        if sha256 in self._pending:
            self.flush()
        name = self._folder(sha256[:2]).get(sha256)
        if name is not None and (self.root / sha256[:2] / name).exists():
            return self.root / sha256[:2] / name
        self._folders.pop(sha256[:2], None)  # stale (a file added or removed by another process)
        name = self._folder(sha256[:2]).get(sha256)
        return None if name is None else self.root / sha256[:2] / name

    def get(self, sha256: str) -> bytes:
        """The bytes for ``sha256``, re-hashed so a corrupted file is never parsed silently."""
        path = self.find(sha256)
        if path is None:
            raise RawStoreError(f"raw payload {sha256} is not in the raw store at {self.root}")
        data = path.read_bytes()
        actual = hashlib.sha256(data).hexdigest()
        if actual != sha256:
            raise RawStoreError(f"raw payload {path} no longer matches its hash (now {actual})")
        return data

    def recover(self) -> dict[str, int]:
        """Clean up after a writer that died mid-``put`` (kill -9, power loss): ``.tmp-*`` files whose
        bytes were never renamed under their hash are removed, and a torn last line of the manifest
        (a fetch whose line was half written) is cut off, so the next line starts on its own.

        Call it only while holding the warehouse's writer lock: another writer's ``.tmp-*`` file
        is its bytes in flight. Returns what it removed.
        """
        removed = {"temporary_files": 0, "torn_manifest_bytes": 0}
        if not self.root.is_dir():
            return removed
        for path in self.root.glob("??/.tmp-*"):
            path.unlink(missing_ok=True)
            removed["temporary_files"] += 1
        if self.manifest_path.is_file():
            data = self.manifest_path.read_bytes()
            if data and not data.endswith(b"\n"):
                keep = data.rfind(b"\n") + 1
                with open(self.manifest_path, "r+b") as fh:
                    fh.truncate(keep)
                removed["torn_manifest_bytes"] = len(data) - keep
        return removed

    def verify(self) -> list[tuple[str, str]]:
        """``(path, problem)`` for every stored file whose bytes no longer match its name."""
        problems = []
        if not self.root.is_dir():
            return problems
        for path in sorted(self.root.glob("??/*")):
            if path.name.startswith(".tmp-"):
                continue
            expected = path.name.split(".")[0]
            actual = hashlib.sha256(path.read_bytes()).hexdigest()
            if actual != expected:
                problems.append((str(path.relative_to(self.root)), f"sha256 is now {actual}"))
        return problems
