"""Decompression bombs built on the fly, in seconds and without inflating them.

A member is deflated once per distinct chunk: a chunk compressed with a full flush (which resets
the compressor's window) deflates to the same bytes wherever it sits, so a 900 MB member of
spaces is one compressed 4 MiB chunk repeated 225 times, its CRC-32 computed the same way. The
zip itself (local headers, central directory) is written here by the format's specification, so
a member can declare any size it truly inflates to.

``inspect_eval`` and ``epoch_zip`` are the two archives of the issue they reproduce (an Inspect
``.eval`` of 8 members of 900 MB, an Epoch export of 120 CSVs of 60 MB: each about 7 MB);
``samples_line`` writes a ``_samples.jsonl`` holding one line of 400 MB.
"""

from __future__ import annotations

import json
import struct
import subprocess
import sys
import tempfile
import zlib
from dataclasses import dataclass
from pathlib import Path

MiB = 1024 * 1024
CHUNK = 4 * MiB


@dataclass(frozen=True)
class Member:
    name: str
    data: bytes  # raw deflate stream
    crc: int
    size: int  # what it inflates to


def deflated(head: bytes, fill: int, count: int, tail: bytes) -> tuple[bytes, int, int]:
    """``(raw deflate, crc32, size)`` of ``head + bytes([fill]) * count + tail`` (count a multiple
    of :data:`CHUNK` plus anything), built from one compressed chunk."""
    chunk = bytes([fill]) * CHUNK
    whole, rest = divmod(count, CHUNK)
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    parts = [comp.compress(head) + comp.flush(zlib.Z_FULL_FLUSH)]
    block = comp.compress(chunk) + comp.flush(zlib.Z_FULL_FLUSH)
    parts.append(block * whole)
    parts.append(comp.compress(bytes([fill]) * rest + tail) + comp.flush())
    crc = zlib.crc32(head)
    for _ in range(whole):
        crc = zlib.crc32(chunk, crc)
    crc = zlib.crc32(bytes([fill]) * rest + tail, crc)
    return b"".join(parts), crc, len(head) + count + len(tail)


def zip_bytes(members: list[Member]) -> bytes:
    """A plain (non-ZIP64) zip of already-deflated members: every size must stay under 4 GiB."""
    out, central = bytearray(), bytearray()
    for m in members:
        name = m.name.encode()
        offset = len(out)
        out += struct.pack("<IHHHHHIIIHH", 0x04034B50, 20, 0, 8, 0, 0x21, m.crc, len(m.data), m.size, len(name), 0)
        out += name + m.data
        central += struct.pack(
            "<IHHHHHHIIIHHHHHII",
            0x02014B50,
            20,
            20,
            0,
            8,
            0,
            0x21,
            m.crc,
            len(m.data),
            m.size,
            len(name),
            0,
            0,
            0,
            0,
            0o644 << 16,
            offset,
        )
        central += name
    start = len(out)
    out += central
    out += struct.pack("<IHHHHIIH", 0x06054B50, 0, 0, len(members), len(members), len(central), start, 0)
    return bytes(out)


def _stored(name: str, data: bytes) -> Member:
    comp = zlib.compressobj(9, zlib.DEFLATED, -15)
    return Member(name, comp.compress(data) + comp.flush(), zlib.crc32(data), len(data))


def inspect_eval(members: int = 8, size: int = 900 * MiB) -> bytes:
    """An Inspect ``.eval``: a real-looking header and ``members`` samples of ``size`` bytes each
    (a JSON object padded with spaces: each would parse, were it inflated)."""
    header = {"eval": {"task": "bomb", "model": "org/model", "eval_id": "e1", "run_id": "r1"}, "plan": {}}
    data, crc, n = deflated(b'{"id": 1, "epoch": 1', ord(" "), size - 22, b"}\n")
    samples = [Member(f"samples/{i}_epoch_1.json", data, crc, n) for i in range(1, members + 1)]
    return zip_bytes([_stored("header.json", json.dumps(header).encode()), *samples])


def epoch_zip(header: bytes, members: int = 120, size: int = 60 * MiB) -> bytes:
    """An Epoch export of ``members`` CSVs of ``size`` bytes: ``header`` then blank lines."""
    data, crc, n = deflated(header, ord("\n"), size - len(header), b"")
    return zip_bytes([Member(f"bomb_{i:03d}.csv", data, crc, n) for i in range(members)])


def samples_line(path: Path, size: int = 400 * MiB) -> None:
    """One JSON line of ``size`` bytes (a string of ``a``), written in chunks."""
    head, tail = b'{"sample_id": "1", "input": {"raw": "', b'"}}\n'
    with path.open("wb") as out:
        out.write(head)
        left = size - len(head) - len(tail)
        while left > 0:
            n = min(left, CHUNK)
            out.write(b"a" * n)
            left -= n
        out.write(tail)


#: Runs argv[2:], waits, and writes the child's peak resident bytes to the file argv[1]. It runs in a
#: small process of its own: on Linux ``ru_maxrss`` is kept across ``execve``, so a command spawned
#: straight from a large pytest worker would report the worker's size, not its own.
_MEASURE = (
    "import os, subprocess, sys\n"
    "proc = subprocess.Popen(sys.argv[2:])\n"
    "_, status, usage = os.wait4(proc.pid, 0)\n"
    "open(sys.argv[1], 'w').write(str(usage.ru_maxrss * 1024))\n"
    "sys.exit(os.waitstatus_to_exitcode(status))\n"
)


def run_measured(args: list[str], **kw) -> tuple[int, str, str, int]:
    """Run a command; ``(exit code, stdout, stderr, peak resident bytes of the process)``."""
    with tempfile.TemporaryDirectory() as tmp:
        peak, out_path, err_path = (Path(tmp) / name for name in ("peak", "out", "err"))
        with out_path.open("wb") as out, err_path.open("wb") as err:
            proc = subprocess.run(
                [sys.executable, "-c", _MEASURE, str(peak), *args], stdout=out, stderr=err, check=False, **kw
            )
        return proc.returncode, out_path.read_text(), err_path.read_text(), int(peak.read_text())
