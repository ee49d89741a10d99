"""The one module that touches the network: a bounded, retrying, secret-redacting GET.

Every source adapter plans :class:`FetchRequest` values and hands them here; nothing else in
evalhouse opens a socket. Compared with EEE's ``helpers/fetch.py`` (one plain ``GET``, 60 s
timeout, fail on any non-2xx, body read whole) this layer:

* retries what is worth retrying (429, 500, 502, 503, 504, timeouts, dropped connections) with
  capped exponential backoff and full jitter, and honours ``Retry-After``, so a flaky night does
  not turn a source red;
* follows a bounded number of redirects itself, dropping credentials when a redirect leaves the
  original origin (httpx would forward ``x-api-key`` to any host);
* enforces a byte cap *while streaming* (the same 64 MiB cap EEE's raw capture applies per
  payload), so a runaway response cannot exhaust memory;
* supports conditional GET (``If-None-Match`` / ``If-Modified-Since`` → ``not_modified``);
* never lets an API key reach a result, an error message or a log line - including httpx's own
  ``HTTP Request: GET …`` log lines - while still sending it to the server;
* reads ``file://`` URLs and plain paths through the same code path, and can replay a pinned
  mirror (:mod:`evalhouse.ingest.mirror`) instead of live hosts.
"""

from __future__ import annotations

import logging
import math
import mimetypes
import os
import random
import re
import time
from collections.abc import Callable, Iterable, Mapping
from contextvars import ContextVar
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from pathlib import Path
from types import MappingProxyType, TracebackType
from typing import Literal, Self
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit
from urllib.request import url2pathname

import httpx

from evalhouse import __version__

__all__ = [
    "DEFAULT_MAX_BYTES",
    "DEFAULT_SECRET_HEADERS",
    "DEFAULT_SECRET_PARAMS",
    "DEFAULT_USER_AGENT",
    "REDACTED",
    "RETRY_STATUSES",
    "FetchError",
    "FetchErrorKind",
    "FetchRequest",
    "FetchResult",
    "HttpClient",
    "is_secret_header",
    "is_secret_param",
    "parse_retry_after",
    "redact_text",
    "redact_url",
]

logger = logging.getLogger("evalhouse.http")

FetchErrorKind = Literal["timeout", "connection", "http_status", "too_large", "too_many_redirects", "invalid_url"]

REDACTED = "[REDACTED]"
DEFAULT_MAX_BYTES = 64 * 1024 * 1024
DEFAULT_USER_AGENT = f"evalhouse/{__version__} (+https://github.com/evalhouse; AI evaluation warehouse)"
RETRY_STATUSES: frozenset[int] = frozenset({429, 500, 502, 503, 504})
REDIRECT_STATUSES: frozenset[int] = frozenset({301, 302, 303, 307, 308})

# Query parameters redacted even when a request does not declare them: keys that leaderboard APIs
# and signed CDN URLs (S3 / CloudFront / HF LFS redirects) use for credentials.
DEFAULT_SECRET_PARAMS: frozenset[str] = frozenset(
    {
        "api_key",
        "apikey",
        "key",
        "token",
        "access_token",
        "secret",
        "password",
        "sig",
        "signature",
        "auth",
        "client_secret",
    }
)
# Substrings that mark a parameter name as secret (``x-amz-signature``, ``refresh_token``, …).
_SECRET_PARAM_HINTS = ("token", "secret", "password", "passwd", "signature", "api_key", "apikey")

DEFAULT_SECRET_HEADERS: frozenset[str] = frozenset(
    {
        "authorization",
        "proxy-authorization",
        "x-api-key",
        "api-key",
        "apikey",
        "x-auth-token",
        "cookie",
    }
)
_SECRET_HEADER_HINTS = ("auth", "token", "secret", "api-key", "apikey", "api_key", "password")

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

# Secret strings of the fetch in progress, so the log filter can scrub third-party log lines too.
_ACTIVE_SECRETS: ContextVar[frozenset[str]] = ContextVar("evalhouse_http_active_secrets", default=frozenset())
_MIN_SCRUB_LEN = 3  # shorter "secrets" would mangle every message and protect nothing
_ERROR_SNIPPET_BYTES = 2048


# --------------------------------------------------------------------------------------------
# Redaction


def _norm_param(name: str) -> str:
    return unquote_plus(name).strip().lower().replace("-", "_")


def is_secret_param(name: str, declared: Iterable[str] = ()) -> bool:
    """True when a query parameter name looks like (or is declared as) a credential."""
    norm = _norm_param(name)
    if norm in DEFAULT_SECRET_PARAMS or norm in {_norm_param(d) for d in declared}:
        return True
    return any(hint in norm for hint in _SECRET_PARAM_HINTS)


def is_secret_header(name: str, declared: Iterable[str] = ()) -> bool:
    """True when a request header name looks like (or is declared as) a credential."""
    norm = name.strip().lower()
    if norm in DEFAULT_SECRET_HEADERS or norm in {d.strip().lower() for d in declared}:
        return True
    return any(hint in norm for hint in _SECRET_HEADER_HINTS)


def _redact_query(query: str, secret_params: Iterable[str]) -> str:
    pieces = []
    for piece in query.split("&"):
        name, eq, _value = piece.partition("=")
        secret = eq and is_secret_param(name, secret_params)
        pieces.append(f"{name}={REDACTED}" if secret else piece)
    return "&".join(pieces)


def redact_url(url: str, secret_params: Iterable[str] = ()) -> str:
    """Return ``url`` with secret-looking query values and any userinfo password replaced.

    Only the values change; names and the other parameters stay byte-identical, so a redacted
    URL still tells a reader which endpoint and page were fetched.
    """
    secret_params = tuple(secret_params)
    try:
        parts = urlsplit(url)
    except ValueError:  # e.g. a malformed IPv6 literal: fall back to free-text redaction
        return redact_text(url, secret_params=secret_params)
    netloc = parts.netloc
    if "@" in netloc:
        userinfo, _, hostport = netloc.rpartition("@")
        if ":" in userinfo:
            netloc = f"{userinfo.split(':', 1)[0]}:{REDACTED}@{hostport}"
    query = _redact_query(parts.query, secret_params) if parts.query else parts.query
    fragment = parts.fragment
    if "=" in fragment:  # OAuth implicit flow puts access_token in the fragment
        fragment = _redact_query(fragment, secret_params)
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


_QUERY_PAIR_RE = re.compile(r"(?P<lead>[?&#;])(?P<name>[^=&\s#\"'<>?]+)=(?P<value>[^&\s#\"'<>]*)")
_USERINFO_RE = re.compile(r"(?P<lead>://[^:/@\s]+:)[^@/\s]+(?P<at>@)")


def redact_text(text: str, secrets: Iterable[str] = (), secret_params: Iterable[str] = ()) -> str:
    """Scrub known secret values and secret-looking ``name=value`` query pairs from free text.

    Used for messages we do not build ourselves (exception texts, error bodies, third-party
    log lines), where the secret may appear raw or percent-encoded.
    """
    secret_params = tuple(secret_params)
    for secret in sorted(set(secrets), key=len, reverse=True):
        if len(secret) >= _MIN_SCRUB_LEN:
            text = text.replace(secret, REDACTED)

    def _pair(match: re.Match[str]) -> str:
        if is_secret_param(match["name"], secret_params):
            return f"{match['lead']}{match['name']}={REDACTED}"
        return match.group(0)

    text = _QUERY_PAIR_RE.sub(_pair, text)
    return _USERINFO_RE.sub(lambda m: f"{m['lead']}{REDACTED}{m['at']}", text)


def _secret_forms(value: str) -> set[str]:
    """The ways a secret can show up in text: raw, percent-encoded, and a bare bearer token."""
    forms = {value, quote(value, safe=""), quote_plus(value, safe="")}
    scheme, _, token = value.partition(" ")
    if token and scheme.isalpha():  # "Bearer abc…", "Token abc…"
        forms |= {token.strip(), quote(token.strip(), safe="")}
    return {f for f in forms if len(f) >= _MIN_SCRUB_LEN}


class _RedactingFilter(logging.Filter):
    """Rewrites log records that might carry a secret (httpx logs every request URL at INFO)."""

    evalhouse_redactor = True

    def filter(self, record: logging.LogRecord) -> bool:
        try:
            message = record.getMessage()
        except (TypeError, ValueError):  # a malformed record: leave it to logging's own handling
            return True
        redacted = redact_text(message, _ACTIVE_SECRETS.get())
        if redacted != message:
            record.msg = redacted
            record.args = None
        return True


def _install_log_redaction() -> None:
    names = (
        "evalhouse.http",
        "httpx",
        "httpcore.connection",
        "httpcore.http11",
        "httpcore.http2",
        "httpcore.proxy",
        "httpcore.socks",
    )
    for name in names:
        target = logging.getLogger(name)
        if not any(getattr(f, "evalhouse_redactor", False) for f in target.filters):
            target.addFilter(_RedactingFilter())


_install_log_redaction()


# --------------------------------------------------------------------------------------------
# Values


def _frozen_mapping(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType({str(k): str(v) for k, v in value.items()})


@dataclass(frozen=True, repr=False)
class FetchRequest:
    """One GET an adapter wants made; secrets are declared so they can be redacted everywhere.

    ``etag`` / ``last_modified`` are the validators from the previous fetch of this URL; when
    set, the client makes a conditional GET and a 304 comes back as ``not_modified``.
    """

    url: str
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    secret_headers: frozenset[str] = frozenset()
    secret_params: frozenset[str] = frozenset()
    label: str | None = None
    etag: str | None = None
    last_modified: str | None = None

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.strip():
            raise ValueError("FetchRequest.url must be a non-empty string")
        object.__setattr__(self, "params", _frozen_mapping(self.params))
        object.__setattr__(self, "headers", _frozen_mapping(self.headers))
        object.__setattr__(self, "secret_headers", frozenset(h.strip().lower() for h in self.secret_headers))
        object.__setattr__(self, "secret_params", frozenset(self.secret_params))

    def __repr__(self) -> str:  # requests get logged; their credentials must not
        return (
            f"FetchRequest(url={redact_url(self.url, self.secret_params)!r}, "
            f"request_params={self.redacted_params()!r}, label={self.label!r}, "
            f"etag={self.etag!r}, last_modified={self.last_modified!r})"
        )

    def redacted_params(self) -> dict[str, dict[str, str]]:
        """What was asked for, safe to store: params and headers with secret values masked."""
        return {
            "params": {k: REDACTED if is_secret_param(k, self.secret_params) else v for k, v in self.params.items()},
            "headers": {
                k: REDACTED if is_secret_header(k, self.secret_headers) else v for k, v in self.headers.items()
            },
        }

    def secret_values(self) -> frozenset[str]:
        """Every string that must never be written anywhere (raw and encoded forms)."""
        values: set[str] = set()
        for k, v in self.headers.items():
            if is_secret_header(k, self.secret_headers):
                values |= _secret_forms(v)
        pairs = list(self.params.items())
        try:
            parts = urlsplit(self.url)
            pairs += list(httpx.QueryParams(parts.query).multi_items())
            if parts.password:
                values |= _secret_forms(parts.password)
        except ValueError:  # malformed URL: fetch() reports it as invalid_url
            pass
        for k, v in pairs:
            if is_secret_param(k, self.secret_params):
                values |= _secret_forms(v)
        return frozenset(values)


@dataclass(frozen=True)
class FetchResult:
    """What came back, with everything a raw store needs and nothing secret.

    ``url`` is the final URL after redirects (redacted); ``body`` is ``None`` only for a 304.
    ``elapsed_s`` is wall time from the first attempt to the last byte, backoff included.
    ``request_params`` is JSON-able: ``{"params": {...}, "headers": {...}}`` with secret values
    replaced by ``"[REDACTED]"``. ``mirrored_from`` is the (redacted) live URL when the bytes
    came from a ``--mirror``.
    """

    url: str
    status: int
    body: bytes | None
    content_type: str | None
    etag: str | None
    last_modified: str | None
    retrieved_at: datetime
    elapsed_s: float
    attempts: int
    request_params: dict[str, dict[str, str]]
    not_modified: bool
    headers: dict[str, str]
    label: str | None = None
    mirrored_from: str | None = None

    def __repr__(self) -> str:  # keep multi-megabyte bodies out of logs and test output
        size = "None" if self.body is None else f"<{len(self.body)} bytes>"
        return (
            f"FetchResult(url={self.url!r}, status={self.status}, body={size}, "
            f"content_type={self.content_type!r}, attempts={self.attempts}, "
            f"not_modified={self.not_modified})"
        )


def _rebuild_fetch_error(message: str, kind: FetchErrorKind, url: str, status: int | None, attempts: int) -> FetchError:
    return FetchError(message, kind=kind, url=url, status=status, attempts=attempts)


class FetchError(Exception):
    """A fetch that did not produce a usable payload; ``kind`` says why, the message is redacted.

    ``attempts`` counts requests made from the original URL (redirect hops are not attempts).
    """

    def __init__(
        self,
        message: str,
        *,
        kind: FetchErrorKind,
        url: str,
        status: int | None = None,
        attempts: int = 0,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.kind: FetchErrorKind = kind
        self.url = url
        self.status = status
        self.attempts = attempts

    def __reduce__(self) -> tuple[object, ...]:  # picklable across worker processes
        return (
            _rebuild_fetch_error,
            (self.message, self.kind, self.url, self.status, self.attempts),
        )


def parse_retry_after(value: str | None, *, now: datetime | None = None) -> float | None:
    """Seconds to wait from a ``Retry-After`` header (delta-seconds or HTTP-date), else None."""
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        seconds = float(text)
    except ValueError:
        pass
    else:
        return max(0.0, seconds) if math.isfinite(seconds) else None
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    now = now or datetime.now(UTC)
    return max(0.0, (when - now).total_seconds())


# --------------------------------------------------------------------------------------------
# Client


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


def _origin(url: httpx.URL) -> tuple[str, str, int | None]:
    return (url.scheme, url.host, url.port)


def _guess_type(path: Path) -> str:
    suffix = path.suffix.lower()
    if suffix in _EXTRA_TYPES:
        return _EXTRA_TYPES[suffix]
    guessed, _ = mimetypes.guess_type(path.name)
    return guessed or "application/octet-stream"


class HttpClient:
    """One httpx connection pool with evalhouse's retry, redirect, size and redaction policy.

    Use as a context manager. ``sleep`` and ``rng`` are injectable so tests can assert the
    backoff schedule without waiting; ``transport`` lets a test swap the wire entirely.
    ``mirror`` (a directory or base URL) replays pinned payloads instead of live hosts: secrets
    and conditional headers are never sent to a mirror, so a replay is deterministic.
    """

    def __init__(
        self,
        *,
        timeout: float = 30.0,
        max_retries: int = 4,
        backoff_base: float = 1.0,
        backoff_max: float = 60.0,
        jitter: bool = True,
        rng: random.Random | None = None,
        max_redirects: int = 5,
        max_bytes: int = DEFAULT_MAX_BYTES,
        user_agent: str = DEFAULT_USER_AGENT,
        sleep: Callable[[float], object] = time.sleep,
        transport: httpx.BaseTransport | None = None,
        mirror: str | os.PathLike[str] | None = None,
        retry_statuses: Iterable[int] = RETRY_STATUSES,
        trust_env: bool = True,
    ) -> None:
        if timeout <= 0:
            raise ValueError(f"timeout must be > 0, got {timeout}")
        if max_retries < 0:
            raise ValueError(f"max_retries must be >= 0, got {max_retries}")
        if backoff_base < 0 or backoff_max < 0:
            raise ValueError("backoff_base and backoff_max must be >= 0")
        if max_redirects < 0:
            raise ValueError(f"max_redirects must be >= 0, got {max_redirects}")
        if max_bytes <= 0:
            raise ValueError(f"max_bytes must be > 0, got {max_bytes}")
        if not user_agent.strip():
            raise ValueError("user_agent must not be empty")
        self.timeout = timeout
        self.max_retries = max_retries
        self.backoff_base = backoff_base
        self.backoff_max = backoff_max
        self.jitter = jitter
        self.rng = rng if rng is not None else random.Random()
        self.max_redirects = max_redirects
        self.max_bytes = max_bytes
        self.user_agent = user_agent
        self.retry_statuses = frozenset(retry_statuses)
        self.mirror = os.fspath(mirror) if mirror is not None else None
        self._sleep = sleep
        self._client = httpx.Client(
            timeout=httpx.Timeout(timeout),
            follow_redirects=False,  # we follow them ourselves: bounded, and secrets stay home
            headers={"User-Agent": user_agent},
            transport=transport,
            trust_env=trust_env,
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
        """GET one URL (or read one local file) under the client's policy.

        Raises :class:`FetchError` for anything that is not a 2xx payload or a 304 answer to a
        conditional request.
        """
        req = request if isinstance(request, FetchRequest) else FetchRequest(url=request)
        token = _ACTIVE_SECRETS.set(req.secret_values())
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
            _ACTIVE_SECRETS.reset(token)

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
            redact_text(message, _ACTIVE_SECRETS.get()),
            kind=kind,
            url=redact_text(url, _ACTIVE_SECRETS.get()),
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
            return _Target(full_url, redact_url(full_url, req.secret_params), headers, None)

        from evalhouse.ingest.mirror import mirror_url  # mirror imports this module

        try:
            mirrored = mirror_url(full_url, self.mirror, secret_params=req.secret_params)
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

    def _fetch_http(self, req: FetchRequest, target: _Target) -> FetchResult:
        start = time.monotonic()
        attempts = self.max_retries + 1
        for attempt in range(1, attempts + 1):
            logger.debug("GET %s (attempt %d/%d)", target.shown, attempt, attempts)
            try:
                return self._attempt(req, target, attempt, start)
            except _Retryable as failure:
                detail = redact_text(failure.detail, _ACTIVE_SECRETS.get())
                if attempt == attempts:
                    raise self._error(
                        f"GET {target.shown} failed after {attempt} attempt(s): {detail}",
                        kind=failure.kind,
                        url=target.shown,
                        status=failure.status,
                        attempts=attempt,
                    ) from None
                if failure.retry_after is not None:
                    delay = min(failure.retry_after, self.backoff_max)
                else:
                    delay = self._backoff(attempt)
                logger.warning(
                    "GET %s: %s; retry %d/%d in %.2fs",
                    target.shown,
                    detail,
                    attempt,
                    self.max_retries,
                    delay,
                )
                self._sleep(delay)
        raise AssertionError("unreachable: the loop returns or raises")  # pragma: no cover

    def _attempt(self, req: FetchRequest, target: _Target, attempt: int, start: float) -> FetchResult:
        """One request from the original URL, following redirects; raises _Retryable."""
        url = httpx.URL(target.url)
        origin = _origin(url)
        headers = dict(target.headers)
        shown = target.shown
        for hop in range(self.max_redirects + 1):
            try:
                with self._client.stream("GET", url, headers=headers) as response:
                    status = response.status_code
                    location = response.headers.get("location")
                    if status in REDIRECT_STATUSES and location:
                        url, shown = self._next_hop(req, response, location, shown, attempt)
                        if _origin(url) != origin:  # never hand credentials to another host
                            headers = {k: v for k, v in headers.items() if not is_secret_header(k, req.secret_headers)}
                        logger.debug("redirect %d (hop %d) -> %s", status, hop + 1, shown)
                        continue
                    return self._finish(
                        req,
                        target=target,
                        response=response,
                        shown=shown,
                        attempt=attempt,
                        start=start,
                    )
            except httpx.TimeoutException as exc:
                raise _Retryable("timeout", f"{type(exc).__name__} (timeout={self.timeout}s)") from None
            except (httpx.NetworkError, httpx.RemoteProtocolError, httpx.ProxyError) as exc:
                raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from None
            except httpx.DecodingError as exc:  # a corrupt gzip stream is usually a cut-off one
                raise _Retryable("connection", f"{type(exc).__name__}: {exc}") from None
            except (httpx.UnsupportedProtocol, httpx.InvalidURL) as exc:
                raise self._error(
                    f"GET {shown}: {type(exc).__name__}: {exc}",
                    kind="invalid_url",
                    url=shown,
                    attempts=attempt,
                ) from None
            except httpx.LocalProtocolError as exc:  # e.g. a header value httpx cannot send
                raise self._error(
                    f"GET {shown}: cannot send request: {type(exc).__name__}: {exc}",
                    kind="connection",
                    url=shown,
                    attempts=attempt,
                ) from None
        raise self._error(
            f"GET {target.shown}: more than {self.max_redirects} redirect(s), last to {shown}",
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
                f"GET {shown}: redirect to unsupported location {bad}",
                kind="invalid_url",
                url=shown,
                status=response.status_code,
                attempts=attempt,
            )
        return nxt, redact_url(str(nxt), req.secret_params)

    def _finish(
        self,
        req: FetchRequest,
        *,
        target: _Target,
        response: httpx.Response,
        shown: str,
        attempt: int,
        start: float,
    ) -> FetchResult:
        """Turn a non-redirect response into a result, an error or a _Retryable."""
        status = response.status_code
        conditional = "If-None-Match" in target.headers or "If-Modified-Since" in target.headers
        if status in self.retry_statuses:
            retry_after = parse_retry_after(response.headers.get("retry-after"))
            snippet = self._snippet(response)
            raise _Retryable(
                "http_status",
                f"HTTP {status}{': ' + snippet if snippet else ''}",
                status=status,
                retry_after=retry_after,
            )
        if status == 304 and conditional:
            return self._result(
                req,
                target=target,
                response=response,
                shown=shown,
                body=None,
                attempt=attempt,
                start=start,
            )
        if not 200 <= status < 300:
            snippet = self._snippet(response)
            raise self._error(
                f"GET {shown}: HTTP {status}{': ' + snippet if snippet else ''}",
                kind="http_status",
                url=shown,
                status=status,
                attempts=attempt,
            )
        try:
            body = self._read_capped(response)
        except _TooLarge as exc:
            size = f" (Content-Length {exc.declared})" if exc.declared is not None else ""
            raise self._error(
                f"GET {shown}: body larger than max_bytes={self.max_bytes}{size}",
                kind="too_large",
                url=shown,
                status=status,
                attempts=attempt,
            ) from None
        return self._result(
            req,
            target=target,
            response=response,
            shown=shown,
            body=body,
            attempt=attempt,
            start=start,
        )

    def _read_capped(self, response: httpx.Response) -> bytes:
        """Stream the body, stopping as soon as it exceeds max_bytes (decoded size)."""
        declared = response.headers.get("content-length", "").strip()
        if declared.isdigit() and int(declared) > self.max_bytes:
            raise _TooLarge(int(declared))
        buffer = bytearray()
        for chunk in response.iter_bytes():
            buffer += chunk
            if len(buffer) > self.max_bytes:
                raise _TooLarge(None)
        return bytes(buffer)

    def _snippet(self, response: httpx.Response) -> str:
        """The start of an error body (servers explain 4xx/5xx there), redacted and one-lined."""
        data = bytearray()
        try:
            for chunk in response.iter_bytes():
                data += chunk
                if len(data) >= _ERROR_SNIPPET_BYTES:
                    break
        except (httpx.TransportError, httpx.DecodingError):
            pass  # the status already says what matters
        text = " ".join(bytes(data[:_ERROR_SNIPPET_BYTES]).decode("utf-8", "replace").split())
        return redact_text(text[:300], _ACTIVE_SECRETS.get())

    def _result(
        self,
        req: FetchRequest,
        *,
        target: _Target,
        response: httpx.Response,
        shown: str,
        body: bytes | None,
        attempt: int,
        start: float,
    ) -> FetchResult:
        not_modified = body is None
        etag = response.headers.get("etag") or (req.etag if not_modified else None)
        last_modified = response.headers.get("last-modified") or (req.last_modified if not_modified else None)
        kept = {
            name: redact_text(response.headers[name], _ACTIVE_SECRETS.get())
            for name in _USEFUL_HEADERS
            if name in response.headers
        }
        elapsed = time.monotonic() - start
        if not_modified:
            logger.info("GET %s: 304 not modified (%d attempt(s))", shown, attempt)
        else:
            logger.info(
                "GET %s: %d, %d bytes, %d attempt(s), %.2fs",
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
