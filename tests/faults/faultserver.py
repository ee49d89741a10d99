"""The faults a source's server can throw at the nightly refresh, as scripted loopback replies.

Each :class:`Fault` turns the good payload of a URL into the replies the server sends instead
(see ``tests/httpserver.py``: retries consume the list in order, the last reply repeats). What a
refresh must do about it is part of the fault: ``recover`` faults (a 429 with Retry-After, one
500, a redirect to another host) end with the source's data as it was and the run not failed;
every other fault ends with the source ``failed`` with a reason containing one of ``words``,
nothing loaded and the other sources untouched.
"""

from __future__ import annotations

import csv
import gzip
import io
import json
import re
import zipfile
from collections.abc import Callable
from dataclasses import dataclass

from httpserver import Reply

#: The fault client's limits: small, so the oversize and bomb faults stay cheap.
MAX_BYTES = 2 * 1024 * 1024
TIMEOUT = 1.0
DEADLINE = 2.5  # seconds per source (the slow-drip fault must end within it)
HTTP_POLICY = {
    "timeout": TIMEOUT,
    "max_retries": 1,
    "backoff_base": 0.001,
    "backoff_max": 0.01,
    "max_bytes": MAX_BYTES,
    "source_deadline": DEADLINE,
    "trust_env": False,
}
CRAWL_SETTINGS = {
    "DOWNLOAD_MAXSIZE": MAX_BYTES,
    "DOWNLOAD_WARNSIZE": MAX_BYTES,
    "DOWNLOAD_TIMEOUT": 4 * DEADLINE,  # scrapy's timeout is per whole download: the source deadline comes first
    "RETRY_TIMES": 1,
    "CLOSESPIDER_TIMEOUT": DEADLINE,
    "AUTOTHROTTLE_ENABLED": False,
    "DOWNLOAD_DELAY": 0.0,
}

Make = Callable[[bytes, "Context"], list[Reply]]


@dataclass(frozen=True)
class Context:
    """What a fault may need besides the good payload: its own path and another server's URL."""

    path: str  # the mirror path being faulted
    other_origin: str  # a second loopback server (another origin) serving the same tree


@dataclass(frozen=True)
class Fault:
    name: str
    make: Make
    recover: bool = False
    words: tuple[str, ...] = ()  # one of these is in the failed run's error (any reason when empty)


# -- payload transformations ------------------------------------------------------------------

_DECIMAL = re.compile(r"(?<![\w.\-])(\d+\.\d+)(?![\w.])")


def _scale_text(text: str, factor: float) -> str:
    return _DECIMAL.sub(lambda m: repr(float(m.group(1)) * factor), text)


def _scale_csv(text: str, factor: float) -> str:
    rows = list(csv.reader(io.StringIO(text)))
    scores = {i for i, name in enumerate(rows[0] if rows else []) if "score" in name.lower()}
    for row in rows[1:]:
        for i, cell in enumerate(row):
            if "." in cell or (i in scores and cell.strip()):
                try:
                    row[i] = repr(float(cell) * factor)
                except ValueError:
                    continue
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue()


def _scale_json(value: object, factor: float) -> object:
    if isinstance(value, float):
        return value * factor
    if isinstance(value, list):
        return [_scale_json(v, factor) for v in value]
    if isinstance(value, dict):
        return {k: _scale_json(v, factor) for k, v in value.items()}
    return value


def rescaled(body: bytes, factor: float) -> bytes:
    """The same payload with every decimal value multiplied by ``factor`` (a unit switch)."""
    if body[:2] == b"PK":
        out = io.BytesIO()
        with zipfile.ZipFile(io.BytesIO(body)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
            for info in src.infolist():
                data = src.read(info)
                if info.filename.endswith(".csv"):
                    data = _scale_csv(data.decode("utf-8"), factor).encode()
                dst.writestr(info, data)
        return out.getvalue()
    text = body.decode("utf-8", "replace")
    try:
        return json.dumps(_scale_json(json.loads(text), factor)).encode()
    except ValueError:
        pass
    first = text.split("\n", 1)[0]
    if "," in first and "<" not in first and ":" not in first:
        return _scale_csv(text, factor).encode()
    return _scale_text(text, factor).encode()


def zip_bomb() -> bytes:
    """A zip whose one member inflates to 256 MiB of zeros (about 250 KB on the wire)."""
    out = io.BytesIO()
    with (
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as archive,
        archive.open(zipfile.ZipInfo("gpqa_diamond.csv"), "w", force_zip64=True) as member,
    ):
        chunk = b"\0" * (1 << 20)
        for _ in range(256):
            member.write(chunk)
    return out.getvalue()


def gzip_bomb() -> bytes:
    """A gzip stream inflating to 256 MiB of spaces, sent as Content-Encoding: gzip."""
    out = io.BytesIO()
    with gzip.GzipFile(fileobj=out, mode="wb", compresslevel=9) as stream:
        chunk = b" " * (1 << 20)
        for _ in range(256):
            stream.write(chunk)
    return out.getvalue()


_ZIP_BOMB: list[bytes] = []
_GZIP_BOMB: list[bytes] = []


def _cached(store: list[bytes], build: Callable[[], bytes]) -> bytes:
    if not store:
        store.append(build())
    return store[0]


HTML = b"<!DOCTYPE html><html><head><title>Service update</title></head><body><h1>We moved</h1></body></html>"
OK = Reply  # readability in the table below

FAULTS: tuple[Fault, ...] = (
    Fault(
        "429 with Retry-After, then success",
        lambda b, c: [Reply(429, headers={"Retry-After": "0"}), OK(200, b)],
        recover=True,
    ),
    Fault("500, then success", lambda b, c: [Reply(500, b"oops"), OK(200, b)], True),
    Fault("always 500", lambda b, c: [Reply(500, b"internal error")], words=("HTTP 500",)),
    Fault("hang (no answer)", lambda b, c: [Reply(200, b, delay=30)], words=("timeout", "deadline exceeded")),
    Fault(
        "slow drip (1 byte every 0.5 s)",
        lambda b, c: [Reply(200, b, drip=0.5, drip_bytes=1)],
        words=("deadline exceeded",),
    ),
    Fault(
        "reset mid-body",
        lambda b, c: [Reply(200, b, reset_after=max(1, len(b) // 2))],
        words=("connection", "ReadError", "reset", "ConnectionLost", "ConnectionDone"),
    ),
    Fault(
        "truncated body",
        lambda b, c: [Reply(200, b[: len(b) // 2], content_length=len(b))],
        words=("connection", "RemoteProtocolError", "peer closed", "PotentialDataLoss", "ConnectionLost", "truncated"),
    ),
    Fault("corrupt body", lambda b, c: [OK(200, bytes(x ^ 0x5A for x in b))]),
    Fault("empty body", lambda b, c: [OK(200, b"")]),
    Fault("half the body (a half zip)", lambda b, c: [OK(200, b[: len(b) // 2])]),
    Fault("zip bomb", lambda b, c: [OK(200, _cached(_ZIP_BOMB, zip_bomb))]),
    Fault(
        "gzip bomb",
        lambda b, c: [OK(200, _cached(_GZIP_BOMB, gzip_bomb), headers={"Content-Encoding": "gzip"})],
        words=("oversize body", "larger than", "maxsize", "too_large"),
    ),
    Fault(
        "oversize, with Content-Length",
        lambda b, c: [OK(200, b"x" * 65536, repeat=MAX_BYTES // 65536 + 2)],
        words=("oversize body", "too_large"),
    ),
    Fault(
        "oversize, without Content-Length",
        lambda b, c: [OK(200, b"x" * 65536, repeat=MAX_BYTES // 65536 + 2, content_length=False)],
        words=("oversize body", "too_large"),
    ),
    Fault("redirect loop", lambda b, c: [Reply(302, headers={"Location": c.path})], words=("redirect loop",)),
    Fault(
        "redirect to another host",
        lambda b, c: [Reply(302, headers={"Location": c.other_origin + c.path})],
        recover=True,
    ),
    Fault(
        "redirect to file://",
        lambda b, c: [Reply(302, headers={"Location": "file:///etc/passwd"})],
        words=("unsupported location", "file", "invalid_url", "Unsupported URL scheme"),
    ),
    Fault("HTML where data was expected", lambda b, c: [OK(200, HTML, headers={"Content-Type": "text/html"})]),
    Fault("values ÷100 (unit switch)", lambda b, c: [OK(200, rescaled(b, 0.01))], words=("scale changed",)),
    Fault(
        "values ×100 (unit switch)",
        lambda b, c: [OK(200, rescaled(b, 100.0))],
        words=("scale changed", "values outside registry bounds"),
    ),
)
