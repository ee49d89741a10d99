"""The one module that touches the network: a bounded, retrying, secret-redacting GET (or POST).

Every source adapter plans :class:`FetchRequest` values and hands them here; nothing else in
evalhouse opens a socket. Compared with EEE's ``helpers/fetch.py`` (one plain ``GET``, 60 s
timeout, fail on any non-2xx, body read whole) this layer:

* retries what is worth retrying (429, 500, 502, 503, 504, timeouts, dropped connections) with
  capped exponential backoff and full jitter, and honours ``Retry-After``, so a flaky night does
  not turn a source red; a host name that does not resolve (no network) is never retried, and
  the client's other requests to that host fail at once;
* follows a bounded number of redirects itself, dropping credentials when a redirect leaves the
  original origin (httpx would forward ``x-api-key`` to any host);
* bounds the total time of a fetch, not only each read: a ``deadline`` per request (every
  attempt, redirect, backoff and byte included) and a ``source_deadline`` for everything one
  client fetches (a client serves one source's run), so a server that drips one byte every few
  seconds - which never trips a per-read timeout - ends as ``deadline exceeded``;
* enforces a byte cap *while streaming* (the same 64 MiB cap EEE's raw capture applies per
  payload), so a runaway response cannot exhaust memory;
* supports conditional GET (``If-None-Match`` / ``If-Modified-Since`` → ``not_modified``), and
  POST with a body (an API that is read by posting a query); a mirror names a POST's payload by
  its URL and body and serves it to a GET;
* never lets an API key reach a result, an error message or a log line - including httpx's own
  ``HTTP Request: GET …`` log lines - while still sending it to the server;
* reads ``file://`` URLs and plain paths through the same code path, and can replay a pinned
  mirror (:mod:`evalhouse.ingest.mirror`) instead of live hosts.
"""

from __future__ import annotations

import logging
import mimetypes
import os
import random
import socket
import ssl
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType
from typing import Any, Self
from urllib.parse import urlsplit
from urllib.request import url2pathname

from evalhouse.common.redaction import ACTIVE_SECRETS, is_secret_header, redact_text, redact_url
from evalhouse.ingest._httpx import httpx
from evalhouse.ingest.fetch import FetchError, FetchErrorKind, FetchRequest, FetchResult, parse_retry_after
from evalhouse.ingest.mirror import mirror_url
from evalhouse.version import __version__

logger = logging.getLogger("evalhouse.http")

DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_DEADLINE = 120.0  # seconds for one request: every attempt, redirect, backoff and byte
DEFAULT_SOURCE_DEADLINE = 300.0  # seconds for everything one client (one source's run) fetches
DEFAULT_USER_AGENT = f"evalhouse/{__version__} (+https://github.com/evalhouse; AI evaluation warehouse)"
RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES: frozenset[int] = frozenset({301, 302, 303, 307, 308})

# Response headers worth keeping with a payload (provenance, caching, rate limits). Never cookies.
_USEFUL_HEADERS = (
    "content-type",
    "content-length",
    "content-encoding",
    "etag",
    "last-modified",
    "cache-control",
    "expires",
    "age",
    "date",
    "server",
    "x-ratelimit-limit",
    "x-ratelimit-remaining",
    "x-ratelimit-reset",
)

# Extensions mimetypes does not know (or knows differently across platforms).
_EXTRA_TYPES = {
    ".json": "application/json",
    ".jsonl": "application/jsonl",
    ".ndjson": "application/x-ndjson",
    ".csv": "text/csv",
    ".parquet": "application/vnd.apache.parquet",
    ".yaml": "application/yaml",
    ".yml": "application/yaml",
    ".md": "text/markdown",
}

_ERROR_SNIPPET_BYTES = 2048


class _Retryable(Exception):
    """Internal: this attempt failed in a way another attempt may fix."""

    def __init__(
        self,
        kind: FetchErrorKind,
        detail: str,
        status: int | None = None,
        retry_after: float | None = None,
    ) -> None:
        super().__init__(detail)
        self.kind: FetchErrorKind = kind
        self.detail = detail
        self.status = status
        self.retry_after: float | None = retry_after


class _DeadlineExceeded(Exception):
    """Internal: the request's or the source's deadline passed; never retried."""


class _TooLarge(Exception):
    def __init__(self, declared: int | None) -> None:
        super().__init__(declared)
        self.declared = declared


@dataclass(frozen=True)
class _Target:
    """Where one fetch actually goes, after params are merged and a mirror is applied."""

    url: str  # what is requested (may carry secrets)
    shown: str  # redacted form of ``url``
    headers: dict[str, str]
    mirrored_from: str | None
    method: str = "GET"
    body: bytes | None = None


@dataclass(frozen=True)
class _Try:
    """One attempt of one fetch: what was asked, where it goes, which attempt, since when."""

    req: FetchRequest
    target: _Target
    attempt: int
    start: float
    end: float = float("inf")  # monotonic time by which the whole fetch must be done


def _dns_failure(exc: BaseException) -> str | None:
    """The name-resolution error behind a connect error (httpx chains it as a cause), if any."""
    seen: BaseException | None = exc
    while seen is not None:
        if isinstance(seen, socket.gaierror):
            return f"{type(seen).__name__}: {seen}"
        seen = seen.__cause__ or seen.__context__
    return None


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _guess_type(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in _EXTRA_TYPES:
        return _EXTRA_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


@dataclass(frozen=True)
class HttpPolicy:
    """How patient and how strict a client is: timeouts, retries, redirects, size, identity."""

    timeout: float = 30.0
    deadline: float = DEFAULT_DEADLINE
    source_deadline: float = DEFAULT_SOURCE_DEADLINE
    max_retries: int = 4
    backoff_base: float = 1.0
    backoff_max: float = 60.0
    jitter: bool = True
    max_redirects: int = 5
    max_bytes: int = DEFAULT_MAX_BYTES
    user_agent: str = DEFAULT_USER_AGENT
    retry_statuses: frozenset[int] = RETRY_STATUSES
    trust_env: bool = True

    def __post_init__(self) -> None:
        object.__setattr__(self, "retry_statuses", frozenset(self.retry_statuses))
        problems = [
            (self.timeout <= 0, f"timeout must be > 0, got {self.timeout}"),
            (self.deadline <= 0, f"deadline must be > 0, got {self.deadline}"),
            (self.source_deadline <= 0, f"source_deadline must be > 0, got {self.source_deadline}"),
            (self.max_retries < 0, f"max_retries must be >= 0, got {self.max_retries}"),
            (self.backoff_base < 0 or self.backoff_max < 0, "backoff_base and backoff_max must be >= 0"),
            (self.max_redirects < 0, f"max_redirects must be >= 0, got {self.max_redirects}"),
            (self.max_bytes <= 0, f"max_bytes must be > 0, got {self.max_bytes}"),
            (not self.user_agent.strip(), "user_agent must not be empty"),
        ]
        for bad, message in problems:
            if bad:
                raise ValueError(message)


class _TlsWhenNeeded(httpx.BaseTransport):
    """httpx's own transport, with the TLS context (≈ 25 ms: the CA bundle) built on the first
    https request instead of with every client: a loopback ``http://`` mirror never needs one.

    Plain http goes through a transport whose context trusts no certificate at all, so if it
    were ever asked for TLS it would refuse, never connect unverified.
    """

    def __init__(self, *, trust_env: bool) -> None:
        self._trust_env = trust_env
        self._plain = httpx.HTTPTransport(verify=ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT), trust_env=trust_env)
        self._tls: httpx.HTTPTransport | None = None

    def handle_request(self, request: httpx.Request) -> httpx.Response:
        if request.url.scheme != "https":
            return self._plain.handle_request(request)
        if self._tls is None:
            self._tls = httpx.HTTPTransport(trust_env=self._trust_env)  # httpx's defaults, verify=True
        return self._tls.handle_request(request)

    def close(self) -> None:
        self._plain.close()
        if self._tls is not None:
            self._tls.close()


class HttpClient:
    """One httpx connection pool with evalhouse's retry, redirect, size and redaction policy.

    Use as a context manager. ``policy`` fields (``timeout``, ``max_retries``, ``max_bytes`` ...)
    can be given as keywords. ``sleep`` and ``rng`` are injectable so tests can assert the
    backoff schedule without waiting; ``transport`` lets a test swap the wire entirely.
    ``mirror`` (a directory or base URL) replays pinned payloads instead of live hosts: secrets
    and conditional headers are never sent to a mirror, so a replay is deterministic.
    """

    def __init__(
        self,
        *,
        mirror: str | os.PathLike[str] | None = None,
        sleep: Callable[[float], object] = time.sleep,
        rng: random.Random | None = None,
        transport: httpx.BaseTransport | None = None,
        **policy: Any,
    ) -> None:
        p = HttpPolicy(**policy)
        self.policy = p
        self.timeout = p.timeout
        self.deadline = p.deadline
        self.source_deadline = p.source_deadline
        self._opened = time.monotonic()  # the source deadline counts from here
        self.max_retries = p.max_retries
        self.backoff_base = p.backoff_base
        self.backoff_max = p.backoff_max
        self.jitter = p.jitter
        self.rng = rng if rng is not None else random.Random()
        self.max_redirects = p.max_redirects
        self.max_bytes = p.max_bytes
        self.user_agent = p.user_agent
        self.retry_statuses = p.retry_statuses
        self.mirror = os.fspath(mirror) if mirror is not None else None
        self._sleep = sleep
        self._unresolved: dict[str, str] = {}  # host -> why its name did not resolve (never asked again)
        self._client = httpx.Client(
            timeout=httpx.Timeout(p.timeout),
            follow_redirects=False,  # we follow them ourselves: bounded, and secrets stay home
            headers={"User-Agent": p.user_agent},
            transport=transport if transport is not None else _TlsWhenNeeded(trust_env=p.trust_env),
            trust_env=p.trust_env,
        )

    def __enter__(self) -> Self:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def close(self) -> None:
        self._client.close()

    # ---------------------------------------------------------------------------------------

    def fetch(self, request: FetchRequest | str) -> FetchResult:
        """GET (or POST) one URL, or read one local file, under the client's policy.

        Raises :class:`FetchError` for anything that is not a 2xx payload or a 304 answer to a
        conditional request.
        """
        req = request if isinstance(request, FetchRequest) else FetchRequest(url=request)
        token = ACTIVE_SECRETS.set(req.secret_values())
        try:
            local = self._local_path(req.url, req.secret_params)
            if local is not None:
                return self._fetch_file(req, local, mirrored_from=None)
            target = self._target(req)
            mirrored = self._local_path(target.url, req.secret_params)
            if mirrored is not None:  # a directory mirror
                return self._fetch_file(req, mirrored, mirrored_from=target.mirrored_from)
            return self._fetch_http(req, target)
        finally:
            ACTIVE_SECRETS.reset(token)

    # ---------------------------------------------------------------------------------------
    # helpers

    def _error(
        self,
        message: str,
        *,
        kind: FetchErrorKind,
        url: str,
        status: int | None = None,
        attempts: int = 1,
    ) -> FetchError:
        return FetchError(
            redact_text(message, ACTIVE_SECRETS.get()),
            kind=kind,
            url=redact_text(url, ACTIVE_SECRETS.get()),
            status=status,
            attempts=attempts,
        )

    def _local_path(self, url: str, secret_params: frozenset[str]) -> Path | None:
        """A filesystem path for ``file://`` URLs and plain paths; None for http(s)."""
        url = url.strip()
        try:
            parts = urlsplit(url)
        except ValueError:
            shown = redact_url(url, secret_params)
            raise self._error(f"invalid URL {shown}", kind="invalid_url", url=shown) from None
        scheme = parts.scheme.lower()
        if scheme in ("http", "https"):
            return None
        if scheme == "file":
            if parts.netloc not in ("", "localhost"):
                raise self._error(
                    f"file URL with a remote host is not supported: {url}",
                    kind="invalid_url",
                    url=url,
                )
            return Path(url2pathname(parts.path))
        if scheme == "" or (len(scheme) == 1 and os.name == "nt"):  # C:\… on Windows
            return Path(url).expanduser()
        shown = redact_url(url, secret_params)
        raise self._error(
            f"unsupported URL scheme {scheme!r} in {shown} (use http, https, file or a path)",
            kind="invalid_url",
            url=shown,
        )

    def _target(self, req: FetchRequest) -> _Target:
        try:
            full = httpx.URL(req.url)
            if req.params:
                full = full.copy_merge_params(dict(req.params))
        except (httpx.InvalidURL, ValueError) as exc:
            shown = redact_url(req.url, req.secret_params)
            raise self._error(f"invalid URL {shown}: {exc}", kind="invalid_url", url=shown) from None
        full_url = str(full)
        if self.mirror is None:
            headers = dict(req.headers)
            if req.etag:
                headers["If-None-Match"] = req.etag
            if req.last_modified:
                headers["If-Modified-Since"] = req.last_modified
            return _Target(full_url, redact_url(full_url, req.secret_params), headers, None, req.method, req.body)

        try:  # a mirror is static files: a POST's payload is the file its URL and body name, read by a GET
            mirrored = mirror_url(full_url, self.mirror, secret_params=req.secret_params, body=req.body)
        except ValueError as exc:  # no host, or a malformed mirror spec
            shown = redact_url(full_url, req.secret_params)
            raise self._error(
                f"cannot map {shown} into mirror {self.mirror}: {exc}",
                kind="invalid_url",
                url=shown,
            ) from None
        headers = {k: v for k, v in req.headers.items() if not is_secret_header(k, req.secret_headers)}
        return _Target(
            mirrored,
            redact_url(mirrored, req.secret_params),
            headers,
            redact_url(full_url, req.secret_params),
        )

    def _network_failure(self, exc: Exception, host: str, shown: str, attempt: int) -> Exception:
        """A dropped or refused connection is worth retrying; a name that does not resolve is not."""
        unresolved = _dns_failure(exc)
        if unresolved is None:
            return _Retryable("connection", f"{type(exc).__name__}: {exc}")
        self._unresolved[host] = unresolved
        return self._unresolvable(host, shown, attempt)

    def _unresolvable(self, host: str, shown: str, attempts: int, *, again: bool = False) -> FetchError:
        """A host whose name does not resolve: no network, or no such host. Never retried (a retry
        cannot help either), and remembered, so a source's other requests to it fail at once."""
        when = "earlier in this run; not asked again" if again else "not retried"
        return self._error(
            f"GET {shown}: cannot resolve host {host!r} ({self._unresolved[host]}): a DNS failure, {when}"
            " (no network, or no such host)",
            kind="connection",
            url=shown,
            attempts=attempts,
        )

    def _backoff(self, failures: int) -> float:
        """Full jitter: uniform(0, min(max, base * 2**(failures-1)))."""
        ceiling = min(self.backoff_max, self.backoff_base * 2.0 ** min(failures - 1, 60))
        return self.rng.uniform(0.0, ceiling) if self.jitter else ceiling

    # ---------------------------------------------------------------------------------------
    # local files

    def _fetch_file(self, req: FetchRequest, path: Path, *, mirrored_from: str | None) -> FetchResult:
        start = time.monotonic()
        path = path.resolve()
        shown = path.as_uri()
        try:
            if path.is_dir():
                raise IsADirectoryError(str(path))
            size = path.stat().st_size
            if size > self.max_bytes:
                raise _TooLarge(size)
            with path.open("rb") as handle:
                body = handle.read(self.max_bytes + 1)
            if len(body) > self.max_bytes:  # the file grew after stat()
                raise _TooLarge(None)
        except (FileNotFoundError, IsADirectoryError, NotADirectoryError):
            raise self._error(f"no such file: {shown}", kind="http_status", url=shown, status=404) from None
        except PermissionError:
            raise self._error(f"permission denied: {shown}", kind="http_status", url=shown, status=403) from None
        except _TooLarge:
            raise self._error(
                f"{shown} is larger than max_bytes={self.max_bytes}", kind="too_large", url=shown
            ) from None
        except OSError as exc:
            raise self._error(
                f"cannot read {shown}: {type(exc).__name__}: {exc.strerror}",
                kind="connection",
                url=shown,
            ) from None
        content_type = _guess_type(path)
        logger.info("read %s: %d bytes", shown, len(body))
        return FetchResult(
            url=shown,
            status=200,
            body=body,
            content_type=content_type,
            etag=None,
            last_modified=None,
            retrieved_at=datetime.now(UTC),
            elapsed_s=time.monotonic() - start,
            attempts=1,
            request_params=req.redacted_params(),
            not_modified=False,
            headers={"content-type": content_type, "content-length": str(len(body))},
            label=req.label,
            mirrored_from=mirrored_from,
        )

    # ---------------------------------------------------------------------------------------
    # http

    def _deadline(self, start: float) -> tuple[float, str]:
        """When this fetch must be done, and which bound that is (for the error message)."""
        per_request = start + self.deadline
        per_source = self._opened + self.source_deadline
        if per_source < per_request:
            return per_source, f"{self.source_deadline:g} s per source"
        return per_request, f"{self.deadline:g} s per request"

    def _deadline_error(self, t: _Try, shown: str, note: str, bound: str) -> FetchError:
        elapsed = time.monotonic() - t.start
        return self._error(
            f"{t.target.method} {shown}: deadline exceeded ({bound}) after {elapsed:.1f}s and "
            f"{t.attempt} attempt(s){note}",
            kind="deadline",
            url=shown,
            attempts=t.attempt,
        )

    def _fetch_http(self, req: FetchRequest, target: _Target) -> FetchResult:
        host = httpx.URL(target.url).host
        if host in self._unresolved:  # its name failed to resolve earlier in this run: not asked again
            raise self._unresolvable(host, target.shown, 0, again=True)
        start = time.monotonic()
        end, bound = self._deadline(start)
        attempts = self.max_retries + 1
        verb = target.method
        for attempt in range(1, attempts + 1):
            logger.debug("%s %s (attempt %d/%d)", verb, target.shown, attempt, attempts)
            t = _Try(req, target, attempt, start, end)
            if time.monotonic() >= end:
                raise self._deadline_error(t, target.shown, "", bound)
            try:
                return self._attempt(t)
            except _DeadlineExceeded as exc:
                raise self._deadline_error(t, target.shown, f": {exc}", bound) from None
            except _Retryable as failure:
                detail = redact_text(failure.detail, ACTIVE_SECRETS.get())
                if attempt == attempts:
                    raise self._error(
                        f"{verb} {target.shown} failed after {attempt} attempt(s): {detail}",
                        kind=failure.kind,
                        url=target.shown,
                        status=failure.status,
                        attempts=attempt,
                    ) from None
                if failure.retry_after is not None:
                    delay = min(failure.retry_after, self.backoff_max)
                else:
                    delay = self._backoff(attempt)
                if time.monotonic() + delay >= end:  # the next attempt could not start in time
                    raise self._deadline_error(t, target.shown, f"; last attempt: {detail}", bound) from None
                logger.warning(
                    "%s %s: %s; retry %d/%d in %.2fs",
                    verb,
                    target.shown,
                    detail,
                    attempt,
                    self.max_retries,
                    delay,
                )
                self._sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _attempt(self, t: _Try) -> FetchResult:
        """One request from the original URL, following redirects; raises _Retryable."""
        req, target, attempt = t.req, t.target, t.attempt
        url = httpx.URL(target.url)
        origin = _origin(url)
        headers = dict(target.headers)
        shown = target.shown
        method, body = target.method, target.body
        for hop in range(self.max_redirects + 1):
            remaining = t.end - time.monotonic()
            if remaining <= 0:
                raise _DeadlineExceeded(f"during redirect hop {hop}")
            try:
                timeout = httpx.Timeout(min(self.timeout, remaining))
                with self._client.stream(method, url, headers=headers, content=body, timeout=timeout) as response:
                    status = response.status_code
                    location = response.headers.get("location")
                    if status in REDIRECT_STATUSES and location:
                        url, shown = self._next_hop(req, response, location, shown, attempt)
                        if status not in (307, 308):  # 301/302/303 turn a POST into a GET (RFC 9110 15.4)
                            method, body = "GET", None
                        if _origin(url) != origin:  # never hand credentials to another host
                            headers = {k: v for k, v in headers.items() if not is_secret_header(k, req.secret_headers)}
                        logger.debug("redirect %d (hop %d) -> %s", status, hop + 1, shown)
                        continue
                    return self._finish(t, response, shown)
            except httpx.TimeoutException as exc:
                if time.monotonic() >= t.end:
                    raise _DeadlineExceeded(f"{type(exc).__name__} at the deadline") from None
                raise _Retryable("timeout", f"{type(exc).__name__} (timeout={self.timeout}s)") from None
            except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
                raise self._network_failure(exc, url.host, shown, attempt) from None
            except httpx.DecodingError as exc:  # a corrupt gzip stream is usually a cut-off one
                raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from None
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise self._error(
                    f"{method} {shown}: {type(exc).__name__}: {exc}",
                    kind="invalid_url",
                    url=shown,
                    attempts=attempt,
                ) from None
            except httpx.LocalProtocolError as exc:  # e.g. a header value httpx cannot send
                raise self._error(
                    f"{method} {shown}: cannot send request: {type(exc).__name__}: {exc}",
                    kind="connection",
                    url=shown,
                    attempts=attempt,
                ) from None
        raise self._error(
            f"{target.method} {target.shown}: more than {self.max_redirects} redirect(s), last to {shown}",
            kind="too_many_redirects",
            url=shown,
            attempts=attempt,
        )

    def _next_hop(
        self,
        req: FetchRequest,
        response: httpx.Response,
        location: str,
        shown: str,
        attempt: int,
    ) -> tuple[httpx.URL, str]:
        try:
            nxt = response.url.join(location)
        except (httpx.InvalidURL, ValueError):
            nxt = None
        if nxt is None or nxt.scheme not in ("http", "https"):
            bad = redact_url(location, req.secret_params)
            raise self._error(
                f"{req.method} {shown}: redirect to unsupported location {bad}",
                kind="invalid_url",
                url=shown,
                status=response.status_code,
                attempts=attempt,
            )
        return nxt, redact_url(str(nxt), req.secret_params)

    def _finish(self, t: _Try, response: httpx.Response, shown: str) -> FetchResult:
        """Turn a non-redirect response into a result, an error or a _Retryable."""
        target, attempt = t.target, t.attempt
        status = response.status_code
        conditional = "If-None-Match" in target.headers or "If-Modified-Since" in target.headers
        if status in self.retry_statuses:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            snippet = self._snippet(response, t.end)
            raise _Retryable(
                "http_status",
                f"HTTP {status}{': ' + snippet if snippet else ''}",
                status=status,
                retry_after=retry_after,
            )
        if status == 304 and conditional:
            return self._result(t, response, shown, None)
        if not 200 <= status < 300:
            snippet = self._snippet(response, t.end)
            raise self._error(
                f"{target.method} {shown}: HTTP {status}{': ' + snippet if snippet else ''}",
                kind="http_status",
                url=shown,
                status=status,
                attempts=attempt,
            )
        try:
            body = self._read_capped(response, t.end)
        except _TooLarge as exc:
            size = f" (Content-Length {exc.declared})" if exc.declared is not None else ""
            raise self._error(
                f"{target.method} {shown}: body larger than max_bytes={self.max_bytes}{size}",
                kind="too_large",
                url=shown,
                status=status,
                attempts=attempt,
            ) from None
        return self._result(t, response, shown, body)

    def _read_capped(self, response: httpx.Response, end: float) -> bytes:
        """Stream the body, stopping as soon as it exceeds max_bytes (decoded size) or the deadline passes."""
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise _TooLarge(int(declared))
        buffer = bytearray()
        for chunk in response.iter_bytes():
            buffer += chunk
            if len(buffer) > self.max_bytes:
                raise _TooLarge(None)
            if time.monotonic() >= end:
                raise _DeadlineExceeded(f"{len(buffer)} bytes of the body received")
        return bytes(buffer)

    def _snippet(self, response: httpx.Response, end: float) -> str:
        """The start of an error body (servers explain 4xx/5xx there), redacted and one-lined."""
        data = bytearray()
        try:
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) >= _ERROR_SNIPPET_BYTES or time.monotonic() >= end:
                    break
        except (httpx.TransportError, httpx.DecodingError) as exc:  # the status already says what matters
            data += f" [rest of the body unreadable: {type(exc).__name__}]".encode()
        text = " ".join(bytes(data[:_ERROR_SNIPPET_BYTES]).decode("utf-8", "replace").split())
        return redact_text(text[:300], ACTIVE_SECRETS.get())

    def _result(self, t: _Try, response: httpx.Response, shown: str, body: bytes | None) -> FetchResult:
        req, target, attempt, start = t.req, t.target, t.attempt, t.start
        not_modified = body is None
        etag = response.headers.get("etag") or (req.etag if not_modified else None)
        last_modified = response.headers.get("last-modified") or (req.last_modified if not_modified else None)
        kept = {
            name: redact_text(response.headers[name], ACTIVE_SECRETS.get())
            for name in _USEFUL_HEADERS
            if name in response.headers
        }
        elapsed = time.monotonic() - start
        if not_modified:
            logger.info("GET %s: 304 not modified (%d attempt(s))", shown, attempt)
        else:
            logger.info(
                "%s %s: %d, %d bytes, %d attempt(s), %.2fs",
                target.method,
                shown,
                response.status_code,
                len(body or b""),
                attempt,
                elapsed,
            )
        return FetchResult(
            url=shown,
            status=response.status_code,
            body=body,
            content_type=response.headers.get("content-type"),
            etag=etag,
            last_modified=last_modified,
            retrieved_at=datetime.now(UTC),
            elapsed_s=elapsed,
            attempts=attempt,
            request_params=req.redacted_params(),
            not_modified=not_modified,
            headers=kept,
            label=req.label,
            mirrored_from=target.mirrored_from,
        )
