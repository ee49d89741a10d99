"""The content-addressed raw store."""

from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from evalhouse.warehouse.raw_store import RawStore, RawStoreError


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
    assert [p for p, _ in store.verify()] == [entry.storage_path]
    with pytest.raises(RawStoreError, match="not in the raw store"):
        store.get("0" * 64)


def test_writing_behind_stores_the_same_files_and_manifest_lines_in_order(tmp_path: Path) -> None:
    payloads = [json.dumps({"n": i % 7}).encode() for i in range(40)]  # repeats: some are duplicates
    now, later = RawStore(tmp_path / "now"), RawStore(tmp_path / "later")
    direct = [
        now.put(p, source_key="s", url=f"https://x/{i}", content_type="application/json")
        for i, p in enumerate(payloads)
    ]
    with later.writing_behind(queued=4):
        behind = [
            later.put(p, source_key="s", url=f"https://x/{i}", content_type="application/json")
            for i, p in enumerate(payloads)
        ]
        assert later.get(behind[3].sha256) == payloads[3]  # a payload still queued is waited for, not missed
    assert [(e.sha256, e.storage_path, e.duplicate) for e in behind] == [
        (e.sha256, e.storage_path, e.duplicate) for e in direct
    ]
    lines = [json.loads(line) for line in later.manifest_path.read_text().splitlines()]
    assert [line["url"] for line in lines] == [f"https://x/{i}" for i in range(40)]
    assert later.verify() == [] and sorted(p.name for p in later.root.glob("??/*")) == sorted(
        p.name for p in now.root.glob("??/*")
    )


def test_a_write_error_behind_is_raised_by_flush_and_nothing_claims_unwritten_bytes(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    store.root.mkdir()
    (store.root / "manifest.jsonl").mkdir()  # appending a manifest line fails: OSError (a directory)
    with pytest.raises(RawStoreError, match="cannot write to the raw store"), store.writing_behind():
        entry = store.put(b"x", source_key="s", url="https://x/a", content_type="text/plain")
        store.flush()
    assert (store.root / entry.storage_path).is_file()  # the bytes were written before the manifest failed
    assert not store.failed
    store.flush()  # the error was raised once; the store is usable for what follows


def test_a_block_left_by_an_exception_leaves_no_stale_error(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    store = RawStore(tmp_path / "raw")

    def no_space(self: RawStore, rel: str, data: bytes) -> None:
        raise OSError(28, "No space left on device")

    with monkeypatch.context() as patch:
        patch.setattr(RawStore, "_write", no_space)
        with pytest.raises(KeyError), store.writing_behind():
            store.put(b"lost", source_key="s", url="https://x/a", content_type="text/plain")
            raise KeyError("the caller's own failure")
    with store.writing_behind():  # the next import on the same store starts clean
        kept = store.put(b"kept", source_key="s", url="https://x/b", content_type="text/plain")
        store.flush()
    assert store.get(kept.sha256) == b"kept" and not store.failed
