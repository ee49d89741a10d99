"""The values a fetch is made of: what a source asks for, what comes back, why it failed."""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from email.utils import parsedate_to_datetime
from types import MappingProxyType
from typing import Any, Literal
from urllib.parse import urlsplit

from evalhouse.common.redaction import REDACTED, is_secret_header, is_secret_param, redact_url, secret_forms
from evalhouse.errors import RunFailed
from evalhouse.ingest._httpx import httpx

FetchErrorKind = Literal[
    "timeout", "deadline", "connection", "http_status", "too_large", "too_many_redirects", "invalid_url"
]


def _frozen_mapping(value: Mapping[str, str]) -> Mapping[str, str]:
    return MappingProxyType({str(k): str(v) for k, v in value.items()})


@dataclass(frozen=True, repr=False)
class FetchRequest:
    """One request an adapter wants made; secrets are declared so they can be redacted everywhere.

    A GET, or a POST when ``body`` is set (:meth:`post_json` builds one with a JSON body; a body
    never carries a secret: it is stored with the payload and names the payload in a mirror).
    ``etag`` / ``last_modified`` are the validators from the previous fetch of this URL; when
    set, the client makes a conditional GET and a 304 comes back as ``not_modified``.
    ``optional``: a probe for something that may not exist (a release a changelog names but the
    site never published): a refresh counts a 404 of it as absent, not as a page gone missing.
    """

    url: str
    params: Mapping[str, str] = field(default_factory=dict)
    headers: Mapping[str, str] = field(default_factory=dict)
    secret_headers: frozenset[str] = frozenset()
    secret_params: frozenset[str] = frozenset()
    label: str | None = None
    etag: str | None = None
    last_modified: str | None = None
    body: bytes | None = None  # a POST's body; None: a GET
    optional: bool = False

    def __post_init__(self) -> None:
        if not isinstance(self.url, str) or not self.url.strip():
            raise ValueError("FetchRequest.url must be a non-empty string")
        if self.body is not None and (self.etag or self.last_modified):
            raise ValueError("a POST is never conditional: give it no etag or last_modified")
        object.__setattr__(self, "params", _frozen_mapping(self.params))
        object.__setattr__(self, "headers", _frozen_mapping(self.headers))
        object.__setattr__(self, "secret_headers", frozenset(h.strip().lower() for h in self.secret_headers))
        object.__setattr__(self, "secret_params", frozenset(self.secret_params))

    @classmethod
    def post_json(cls, url: str, payload: object, **fields: object) -> FetchRequest:
        """A POST of ``payload`` as JSON (``Content-Type: application/json``); ``fields`` as for
        the class (``label``, ``headers`` ...)."""
        headers = {"Content-Type": "application/json", **dict(fields.pop("headers", None) or {})}  # type: ignore[call-overload]
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
        return cls(url=url, headers=headers, body=body, **fields)  # type: ignore[arg-type]

    @property
    def method(self) -> str:
        return "GET" if self.body is None else "POST"

    def __repr__(self) -> str:  # requests get logged; their credentials must not
        return (
            f"FetchRequest(method={self.method!r}, url={redact_url(self.url, self.secret_params)!r}, "
            f"request_params={self.redacted_params()!r}, label={self.label!r}, "
            f"etag={self.etag!r}, last_modified={self.last_modified!r})"
        )

    def redacted_params(self) -> dict[str, dict[str, str] | str]:
        """What was asked for, safe to store: params and headers with secret values masked, and a
        POST's method and body (as text)."""
        asked: dict[str, dict[str, str] | str] = {
            "params": {k: REDACTED if is_secret_param(k, self.secret_params) else v for k, v in self.params.items()},
            "headers": {
                k: REDACTED if is_secret_header(k, self.secret_headers) else v for k, v in self.headers.items()
            },
        }
        if self.body is not None:
            asked["method"] = "POST"
            asked["body"] = self.body.decode("utf-8", "replace")
        return asked

    def secret_values(self) -> frozenset[str]:
        """Every string that must never be written anywhere (raw and encoded forms)."""
        values: set[str] = set()
        for k, v in self.headers.items():
            if is_secret_header(k, self.secret_headers):
                values |= secret_forms(v)
        pairs = list(self.params.items())
        try:
            parts = urlsplit(self.url)
            pairs += list(httpx.QueryParams(parts.query).multi_items())
            if parts.password:
                values |= secret_forms(parts.password)
        except ValueError:  # malformed URL: fetch() reports it as invalid_url
            pass
        for k, v in pairs:
            if is_secret_param(k, self.secret_params):
                values |= secret_forms(v)
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
    request_params: dict[str, Any]
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


class FetchError(RunFailed):
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
