"""Pack files in the raw store: a bulk run's payloads in one file, found by sha256 like loose ones."""

from __future__ import annotations

import errno
import hashlib
import json
import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from evalhouse.warehouse.raw.packs import BIG_BLOB, PACK_MAGIC, PackWriter, index_path, parse_location
from evalhouse.warehouse.raw.store import RawEntry, RawStore, RawStoreError


def put(store: RawStore, data: bytes, n: int = 0) -> RawEntry:
    return store.put(data, source_key="s", url=f"file:///tree/{n}.json", content_type="application/json")


def packs(store: RawStore) -> list[Path]:
    return sorted((store.root / "packs").glob("*.pack"))


def payloads(n: int) -> list[bytes]:
    return [json.dumps({"n": i, "pad": "x" * (i % 50)}).encode() for i in range(n)]


def test_a_packed_run_round_trips_each_payload_once_and_lists_every_fetch(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    data = [p for p in payloads(40) for _ in range(2)]  # every payload fetched twice
    with store.packing():
        entries = [put(store, d, i) for i, d in enumerate(data)]
    (pack,) = packs(store)
    assert index_path(pack).is_file() and not list(store.root.glob("??/*"))  # no loose file
    for entry, d in zip(entries, data, strict=True):
        name, offset, length = parse_location(entry.storage_path)
        assert name == pack.name and length == len(d) == entry.size_bytes
        assert pack.read_bytes()[offset : offset + length] == d  # the storage path is where the bytes are
    assert [e.duplicate for e in entries] == [False, True] * 40
    assert all(a.storage_path == b.storage_path for a, b in zip(entries[::2], entries[1::2], strict=True))
    assert pack.stat().st_size == len(PACK_MAGIC) + sum(40 + len(d) for d in data[::2])  # each stored once
    lines = [json.loads(line) for line in store.manifest_path.read_text().splitlines()]
    assert [line["url"] for line in lines] == [f"file:///tree/{i}.json" for i in range(80)]
    assert [line["storage_path"] for line in lines] == [e.storage_path for e in entries]
    reader = RawStore(store.root)  # another process: through the index
    assert all(reader.get(e.sha256) == d for e, d in zip(entries, data, strict=True))
    found = reader.find(entries[0].sha256)
    assert found is not None and found.storage_path == entries[0].storage_path
    assert str(found) == f"{pack}#{found.offset}+{found.length}" and found.read() == data[0]
    assert reader.verify().objects == 40 and reader.verify().damaged == []


def test_manifest_lines_are_written_in_batches_after_the_bytes_they_name(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    with store.packing():
        entry = put(store, b'{"a": 1}')
        assert not store.manifest_path.exists()  # held back with the buffered bytes
        assert store.get(entry.sha256) == b'{"a": 1}'  # a blob still buffered is handed over and read
        assert len(store.manifest_path.read_text().splitlines()) == 1  # its line follows its bytes
        put(store, b'{"a": 2}', 1)
        store.settle()  # the run's rows may commit now: bytes synced, pack indexed, lines written
        assert len(store.manifest_path.read_text().splitlines()) == 2
        (sealed,) = packs(store)
        assert index_path(sealed).is_file()
        third = put(store, b'{"a": 3}', 2)  # after a settle, new bytes go to the next pack
    assert len(packs(store)) == 2 and parse_location(third.storage_path)[0] != sealed.name


def test_the_same_bytes_are_stored_once_across_runs_and_kinds(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    loose = put(store, b"loose first")
    with store.packing():
        again = put(store, b"loose first")
        packed = put(store, b"packed first", 1)
    assert again.duplicate and again.storage_path == loose.storage_path  # not copied into the pack
    assert packed.storage_path.startswith("packs/") and not packed.duplicate
    later = RawStore(store.root)  # a later run
    with later.packing():
        assert put(later, b"packed first").storage_path == packed.storage_path
        assert put(later, b"loose first").storage_path == loose.storage_path
    assert len(packs(later)) == 1  # a run with nothing new writes no pack
    refetch = put(RawStore(store.root), b"packed first")  # a loose put of packed bytes
    assert refetch.duplicate and refetch.storage_path == packed.storage_path
    assert [p.name for p in store.root.glob("??/*")] == [loose.storage_path[3:]]
    assert RawStore(store.root).verify().objects == 2


def test_lookups_through_the_index_find_every_blob_and_nothing_else(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    data = payloads(3000)
    big = os.urandom(BIG_BLOB + 7)  # written straight from the caller's bytes
    with store.packing():
        entries = [put(store, d, i) for i, d in enumerate(data)]
        huge = put(store, big)
    reader = RawStore(store.root)
    assert all(reader.find(e.sha256).storage_path == e.storage_path for e in entries)
    assert reader.get(huge.sha256) == big
    assert reader.find(hashlib.sha256(b"never stored").hexdigest()) is None
    assert reader.find("00" * 32) is None and reader.find("ff" * 32) is None


def _flip(path: Path, at: int) -> None:
    with open(path, "r+b") as fh:
        fh.seek(at)
        byte = fh.read(1)[0]
        fh.seek(at)
        fh.write(bytes([byte ^ 0x01]))


def test_a_flipped_byte_in_a_packed_blob_is_named_by_its_location(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    with store.packing():
        entries = [put(store, d, i) for i, d in enumerate(payloads(5))]
    pack, offset, length = parse_location(entries[2].storage_path)
    _flip(store.root / "packs" / pack, offset + length - 1)
    reader = RawStore(store.root)
    with pytest.raises(RawStoreError, match=r"\.pack#\d+\+\d+ no longer matches its hash"):
        reader.get(entries[2].sha256)
    assert reader.get(entries[3].sha256)  # its neighbours are intact
    check = reader.verify()
    assert check.objects == 5
    assert [(d.sha256, d.storage_path) for d in check.damaged] == [(entries[2].sha256, entries[2].storage_path)]
    _flip(store.root / "packs" / pack, parse_location(entries[4].storage_path)[1] - 40)  # its header's sha256
    problems = {d.storage_path: d.problem for d in RawStore(store.root).verify().damaged}
    assert problems[entries[4].storage_path] == "the blob's header names another sha256"


KILLED_WRITER = textwrap.dedent(
    """
    import os, signal, sys
    from pathlib import Path
    from evalhouse.warehouse.raw.packs import PackWriter
    from evalhouse.warehouse.raw.store import RawStore

    write_out = PackWriter._write_out
    calls = []

    def torn(self, data):
        calls.append(1)
        if len(calls) == 5:  # the fifth blob: half of it reaches the file, then the process dies
            os.write(self._fd, bytes(data)[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
        write_out(self, data)

    PackWriter._write_out = torn
    store = RawStore(Path(sys.argv[1]))
    store.pack_buffer = 0
    with store.packing():
        for i in range(10):
            store.put(b'{"n": %d, "pad": "%s"}' % (i, b"x" * 200), source_key="s", url=f"file:///{i}")
    """
)


def test_recover_cuts_the_torn_tail_of_a_killed_writers_pack_and_indexes_the_rest(tmp_path: Path) -> None:
    root = tmp_path / "raw"
    proc = subprocess.run([sys.executable, "-c", KILLED_WRITER, str(root)], check=False, capture_output=True)
    assert proc.returncode == -9, proc.stderr.decode()[-2000:]
    store = RawStore(root)
    (pack,) = packs(store)
    assert not index_path(pack).exists()  # killed before sealing
    named = [json.loads(line) for line in store.manifest_path.read_text().splitlines()]
    assert len(named) == 4  # the fifth blob's line was never written: its bytes never were whole
    # before recovery: readers scan the unsealed pack; its torn tail is no object and no damage
    assert [store.get(line["sha256"]) for line in named]
    check = RawStore(root).verify()
    assert (check.objects, check.damaged) == (4, [])
    torn_size = pack.stat().st_size
    done = RawStore(root).recover()
    assert done["packs_sealed"] == 1 and done["torn_pack_bytes"] == torn_size - pack.stat().st_size > 0
    assert index_path(pack).is_file()
    after = RawStore(root)
    assert all(after.get(line["sha256"]) for line in named)  # no byte a manifest line names is lost
    assert after.find(hashlib.sha256(b'{"n": 4, "pad": "%s"}' % (b"x" * 200)).hexdigest()) is None  # never served
    assert (after.verify().objects, after.verify().damaged) == (4, [])
    assert RawStore(root).recover()["packs_sealed"] == 0  # nothing left to do
    with after.packing():  # the next run stores the lost payload again, in a pack of its own
        fifth = put(after, b'{"n": 4, "pad": "%s"}' % (b"x" * 200))
    assert not fifth.duplicate and parse_location(fifth.storage_path)[0] != pack.name


def test_recover_removes_a_pack_with_no_whole_blob_and_leaves_a_damaged_one_to_verify(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    with store.packing():
        entries = [put(store, d, i) for i, d in enumerate(payloads(3))]
    (sealed,) = packs(store)
    folder = store.root / "packs"
    (folder / "20000101T000000Z-torn.pack").write_bytes(PACK_MAGIC + b"\x01" * 20)  # half a header
    damaged = folder / "29991231T000000Z-damaged.pack"
    damaged.write_bytes(sealed.read_bytes())  # the same blobs, unsealed, one of them flipped
    _flip(damaged, parse_location(entries[1].storage_path)[1])
    (folder / ".tmp-1-x.idx").write_bytes(b"half an index")
    (folder / "20000101T000000Z-empty.pack").write_bytes(PACK_MAGIC[:3])  # killed before its first write
    foreign = folder / "29991231T000001Z-foreign.pack"
    foreign.write_bytes(b"\x00" * 8 + sealed.read_bytes()[8:])  # its magic overwritten
    done = RawStore(store.root).recover()
    assert (done["empty_packs"], done["damaged_packs"], done["temporary_files"]) == (2, 2, 1)
    assert foreign.stat().st_size == sealed.stat().st_size  # nothing guessed, nothing removed
    assert not (folder / "20000101T000000Z-torn.pack").exists() and not index_path(damaged).exists()
    problems = RawStore(store.root).verify().damaged
    assert [(d.sha256, d.storage_path.split("#")[0]) for d in problems] == [
        (entries[1].sha256, f"packs/{damaged.name}"),
        ("", f"packs/{foreign.name}"),
    ]
    assert RawStore(store.root).get(entries[1].sha256)  # the sealed copy, listed first, still serves it


def test_a_write_error_fails_the_put_loses_only_unwritten_blobs_and_the_next_pack_starts_clean(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = RawStore(tmp_path / "raw")
    store.pack_buffer = 0
    write_out = PackWriter._write_out
    full = {"at": 3}

    def disk(self: PackWriter, data: bytes) -> None:
        full["at"] -= 1
        if full["at"] == 0:
            raise OSError(errno.ENOSPC, "No space left on device")
        write_out(self, data)

    monkeypatch.setattr(PackWriter, "_write_out", disk)
    with store.packing():
        kept = [put(store, d, i) for i, d in enumerate(payloads(2))]
        with pytest.raises(RawStoreError, match="No space left on device"):
            put(store, b"third")
        assert store.failed == {hashlib.sha256(b"third").hexdigest()}
        with pytest.raises(RawStoreError, match="No space left on device"):
            put(store, b"fourth")  # the pack is broken: no further bytes go to it
        store.settle()  # the error was raised already; the blobs written before it are sealed
        full["at"] = -1  # space again
        fifth = put(store, b"fifth")
        assert not store.failed  # a new pack: the last one's losses were settled
    assert [store.get(e.sha256) for e in kept] and store.get(fifth.sha256) == b"fifth"
    assert store.find(hashlib.sha256(b"third").hexdigest()) is None
    assert [json.loads(line)["url"] for line in store.manifest_path.read_text().splitlines()] == [
        "file:///tree/0.json",
        "file:///tree/1.json",
        "file:///tree/0.json",
    ]
    assert all(index_path(p).is_file() for p in packs(store)) and RawStore(store.root).verify().damaged == []


def test_a_manifest_that_cannot_be_written_fails_the_settle_but_the_bytes_are_stored(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    store.root.mkdir()
    store.manifest_path.mkdir()  # appending a manifest line fails: OSError (a directory)
    with pytest.raises(RawStoreError, match="cannot write to the raw store"), store.packing():
        entry = put(store, b"x")
        store.settle()
    assert store.get(entry.sha256) == b"x" and not store.failed
    store.settle()  # the error was raised once; the store is usable for what follows


def test_an_exception_leaving_the_block_is_what_is_raised_and_the_pack_is_still_sealed(tmp_path: Path) -> None:
    store = RawStore(tmp_path / "raw")
    with pytest.raises(KeyError), store.packing():
        entry = put(store, b"kept")
        raise KeyError("the caller's own failure")
    (pack,) = packs(store)
    assert index_path(pack).is_file() and RawStore(store.root).get(entry.sha256) == b"kept"
