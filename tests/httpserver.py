"""A real HTTP server on 127.0.0.1 for tests: scripted replies per path, or a static tree.

Tests drive the real httpx client over loopback instead of mocking it, so retries, timeouts,
resets, truncation and redirects are exercised the way they happen at night.

Usage (from a test module one folder below ``tests/``)::

    sys.path.insert(0, str(Path(__file__).parents[1]))
    from httpserver import Reply, serve

    replies = [Reply(503, headers={"Retry-After": "1"}), Reply(200, b"{}")]
    with serve({"/data.json": replies}) as srv:
        client.fetch(srv.url_for("/data.json"))
        assert srv.requests_for("/data.json")[0].headers["user-agent"].startswith("evalhouse/")

A route is a list of replies consumed in order; the last one repeats once the others are used.
Paths without a route are served from ``static_dir`` when given (``SimpleHTTPRequestHandler``,
so a mirror tree written by ``evalhouse.ingest.mirror.build_mirror`` replays as-is), else 404.
Every request is recorded (method, path, query, headers, the body a POST sent, how many body bytes
were sent back). A POST is answered by the route of its path; a static tree answers GETs only.
"""

from __future__ import annotations

import contextlib
import functools
import logging
import os
import socket
import struct
import threading
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import pytest

__all__ = ["RecordedRequest", "Reply", "ScriptedServer", "http_server", "serve"]

log = logging.getLogger("tests.httpserver")


@dataclass(frozen=True)
class Reply:
    """One scripted response.

    ``content_length``: ``None`` declares the real length; ``False`` omits the header and closes
    the connection after the body (close-delimited); an ``int`` is declared as given, so a value
    larger than the body makes a truncated response. ``repeat`` sends ``body`` that many times,
    so a test can stream megabytes without holding them. ``delay`` waits before answering (client
    timeouts); ``body_delay`` waits between the headers and the body; ``reset`` aborts the
    connection with a TCP RST instead of answering. ``drip`` > 0 writes the body ``drip_bytes``
    at a time with ``drip`` seconds between writes (a slow-drip server); ``reset_after`` sends
    that many body bytes, then a TCP RST.
    """

    status: int = 200
    body: bytes = b""
    headers: Mapping[str, str] = field(default_factory=dict)
    delay: float = 0.0
    body_delay: float = 0.0
    reset: bool = False
    content_length: int | bool | None = None
    repeat: int = 1
    drip: float = 0.0
    drip_bytes: int = 1
    reset_after: int | None = None


@dataclass
class RecordedRequest:
    """What the server saw; header names are lower-cased."""

    method: str
    path: str
    query: dict[str, list[str]]
    headers: dict[str, str]
    raw_path: str
    body: bytes = b""  # what a POST sent
    bytes_sent: int = 0
    aborted: bool = False  # the client hung up before the whole body was written


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = True

    def __init__(self, static_dir: Path | None) -> None:
        self.routes: dict[str, list[Reply]] = {}
        self.requests: list[RecordedRequest] = []
        self.lock = threading.Lock()
        self.stopping = threading.Event()
        self.static_dir = static_dir
        handler = functools.partial(_Handler, directory=os.fspath(static_dir) if static_dir else os.devnull)
        super().__init__(("127.0.0.1", 0), handler)

    def next_reply(self, path: str) -> Reply | None:
        with self.lock:
            queue = self.routes.get(path)
            if not queue:
                return None
            return queue.pop(0) if len(queue) > 1 else queue[0]

    def handle_error(self, request: object, client_address: object) -> None:
        log.debug("handler error for %s", client_address, exc_info=True)


class _Handler(SimpleHTTPRequestHandler):
    protocol_version = "HTTP/1.1"  # keep-alive, like real hosts; httpx reuses connections
    # headers and body go out as separate writes: with Nagle's algorithm on, the body waits for the
    # client's delayed ACK of the headers (≈ 40 ms on Linux loopback), per response on a kept-alive
    # connection; real hosts send both at once
    disable_nagle_algorithm = True
    server: _Server

    def log_message(self, format: str, *args: object) -> None:
        log.debug("%s " + format, self.address_string(), *args)

    def do_GET(self) -> None:
        self._dispatch(head=False)

    def do_HEAD(self) -> None:
        self._dispatch(head=True)

    def do_POST(self) -> None:
        self._dispatch(head=False, body=self.rfile.read(int(self.headers.get("Content-Length") or 0)))

    def _dispatch(self, *, head: bool, body: bytes = b"") -> None:
        parts = urlsplit(self.path)
        record = RecordedRequest(
            method=self.command,
            path=parts.path,
            query=parse_qs(parts.query, keep_blank_values=True),
            headers={k.lower(): v for k, v in self.headers.items()},
            raw_path=self.path,
            body=body,
        )
        with self.server.lock:
            self.server.requests.append(record)
        reply = self.server.next_reply(parts.path)
        if reply is not None:
            self._scripted(reply, record, head=head)
        elif self.command == "POST":
            self.send_error(405, "a static tree answers GETs only")
        elif self.server.static_dir is not None and head:
            super().do_HEAD()
        elif self.server.static_dir is not None:
            super().do_GET()
        else:
            self.send_error(404, "no route")

    def _scripted(self, reply: Reply, record: RecordedRequest, *, head: bool) -> None:
        if reply.delay and self.server.stopping.wait(reply.delay):
            self.close_connection = True
            return
        if reply.reset:
            self._reset()
            return
        try:
            self._head(reply)
            if reply.body_delay and self.server.stopping.wait(reply.body_delay):
                self.close_connection = True
                return
            if head or reply.status in (204, 304):
                return
            if reply.drip or reply.reset_after is not None:
                self._trickle(reply, record)
                return
            for _ in range(reply.repeat):
                self.wfile.write(reply.body)
                record.bytes_sent += len(reply.body)
        except (BrokenPipeError, ConnectionResetError, ConnectionAbortedError):
            record.aborted = True
            self.close_connection = True

    def _head(self, reply: Reply) -> None:
        total = len(reply.body) * reply.repeat
        self.send_response(reply.status)
        for name, value in reply.headers.items():
            self.send_header(name, value)
        if reply.content_length is False:
            self.send_header("Connection", "close")
            self.close_connection = True
        elif reply.content_length is None:
            if reply.status not in (204, 304):
                self.send_header("Content-Length", str(total))
        else:
            self.send_header("Content-Length", str(int(reply.content_length)))
            if int(reply.content_length) != total:
                self.close_connection = True  # truncated: hang up after what we have
        self.end_headers()

    def _trickle(self, reply: Reply, record: RecordedRequest) -> None:
        """Drip the body slowly, or cut it with a reset after ``reset_after`` bytes."""
        body = reply.body * reply.repeat
        limit = len(body) if reply.reset_after is None else min(reply.reset_after, len(body))
        step = max(1, reply.drip_bytes) if reply.drip else max(1, limit)
        for offset in range(0, limit, step):
            self.wfile.write(body[offset : min(offset + step, limit)])
            self.wfile.flush()
            record.bytes_sent += min(step, limit - offset)
            if reply.drip and self.server.stopping.wait(reply.drip):
                self.close_connection = True
                return
        if reply.reset_after is not None:
            self._reset()

    def _reset(self) -> None:
        """Close with SO_LINGER 0, so the client sees a TCP RST (ECONNRESET), not a clean FIN."""
        self.connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
        self.close_connection = True
        self.rfile.close()  # makefile() holds a reference; the fd closes with the last one
        self.connection.close()

    def finish(self) -> None:
        with contextlib.suppress(OSError):  # the socket is already gone (reset, hang-up)
            super().finish()


class ScriptedServer:
    """Handle on a running server: its base URL, routes and the requests it recorded."""

    def __init__(self, server: _Server) -> None:
        self._server = server
        host, port = server.server_address[:2]
        self.host = str(host)
        self.port = int(port)
        self.url = f"http://{self.host}:{self.port}"

    def url_for(self, path: str) -> str:
        return self.url + (path if path.startswith("/") else "/" + path)

    def route(self, path: str, *replies: Reply) -> None:
        """Script ``path``; replaces any replies not yet consumed."""
        if not replies:
            raise ValueError("a route needs at least one reply")
        with self._server.lock:
            self._server.routes[path] = list(replies)

    @property
    def requests(self) -> list[RecordedRequest]:
        with self._server.lock:
            return list(self._server.requests)

    def requests_for(self, path: str) -> list[RecordedRequest]:
        return [r for r in self.requests if r.path == path]


@contextmanager
def serve(
    routes: Mapping[str, Reply | Sequence[Reply]] | None = None,
    *,
    static_dir: str | os.PathLike[str] | None = None,
) -> Iterator[ScriptedServer]:
    """Run a server on 127.0.0.1:<free port> in a background thread for the ``with`` block."""
    server = _Server(Path(static_dir) if static_dir is not None else None)
    handle = ScriptedServer(server)
    for path, replies in (routes or {}).items():
        handle.route(path, *([replies] if isinstance(replies, Reply) else replies))
    thread = threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05}, daemon=True)
    thread.start()
    try:
        yield handle
    finally:
        server.stopping.set()  # wake handlers sleeping in a scripted delay
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.fixture
def http_server() -> Iterator[ScriptedServer]:
    """An empty scripted server; add routes with ``http_server.route(path, Reply(...))``."""
    with serve() as srv:
        yield srv
