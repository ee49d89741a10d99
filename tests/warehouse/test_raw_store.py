"""The content-addressed raw store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evalhouse.warehouse.raw.store import RawStore, RawStoreError


def test_same_bytes_are_stored_once_but_every_fetch_is_listed(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    a = store.put(b"a,b\n1,2\n", source_key="s", url="https://x/a.csv", content_type="text/csv")
    b = store.put(b"a,b\n1,2\n", source_key="s", url="https://mirror/a.csv", content_type="text/csv")
    assert a.sha256 == b.sha256 == hashlib.sha256(b"a,b\n1,2\n").hexdigest()
    assert not a.duplicate and b.duplicate
    assert len([p for p in (tmp_path / "raw").rglob("*") if p.is_file() and p.name != "manifest.jsonl"]) == 1
    lines = [json.loads(line) for line in store.manifest_path.read_text().splitlines()]
    assert [line["url"] for line in lines] == ["https://x/a.csv", "https://mirror/a.csv"]
    assert a.storage_path.endswith(".csv") and store.get(a.sha256) == b"a,b\n1,2\n"


def test_a_corrupted_file_is_detected_not_parsed(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    entry = store.put(b'{"x": 1}', source_key="s", url="https://x/a", content_type="application/json")
    (store.root / entry.storage_path).write_bytes(b'{"x": 2}')
    with pytest.raises(RawStoreError, match="no longer matches"):
        store.get(entry.sha256)
    check = store.verify()
    assert check.objects == 1 and [(d.sha256, d.storage_path) for d in check.damaged] == [
        (entry.sha256, entry.storage_path)
    ]
    with pytest.raises(RawStoreError, match="not in the raw store"):
        store.get("0" * 64)


def test_find_says_where_a_loose_payload_is(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    entry = store.put(b"a,b\n", source_key="s", url="https://x/a.csv", content_type="text/csv")
    stored = RawStore(store.root).find(entry.sha256)  # another process's view
    assert stored is not None and stored.storage_path == entry.storage_path
    assert stored.file == store.root / entry.storage_path and str(stored) == str(stored.file)
    assert stored.read() == b"a,b\n" and stored.offset is None


def test_recover_reads_only_the_manifest_s_end_and_cuts_a_long_torn_line(tmp_path: Path) -> None:
    """The manifest grows every night: recover reads back from its end to the last newline, across
    as many chunks as a torn line spans, and cuts exactly the torn bytes."""
    from evalhouse.warehouse.raw.store import _cut_torn_line

    manifest = tmp_path / "manifest.jsonl"
    whole = b"".join(b'{"line": %d}\n' % i for i in range(1000))
    manifest.write_bytes(whole + b'{"torn": "' + b"x" * 200_000)
    assert _cut_torn_line(manifest, chunk=4096) == 200_000 + len(b'{"torn": "')
    assert manifest.read_bytes() == whole
    assert _cut_torn_line(manifest, chunk=4096) == 0  # whole lines: nothing cut
    manifest.write_bytes(b"no newline at all")
    assert _cut_torn_line(manifest) == len(b"no newline at all") and manifest.read_bytes() == b""
