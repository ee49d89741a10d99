"""Secrets never leave a request: redaction of URLs, text and log lines.

A source declares which headers and query parameters carry credentials; on top of those, names
that APIs and signed CDN URLs commonly use (``api_key``, ``token``, ``x-amz-signature`` ...) are
always treated as secret. Redacted forms are what the raw store, the warehouse, error messages
and logs see — including httpx's own ``HTTP Request: GET …`` lines, scrubbed by a log filter
while a fetch is in progress.
"""

from __future__ import annotations

import logging
import re
from collections.abc import Iterable, Mapping
from contextvars import ContextVar
from typing import Any
from urllib.parse import quote, quote_plus, unquote_plus, urlsplit, urlunsplit

REDACTED = "[REDACTED]"

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


# Secret strings of the fetch in progress, so the log filter can scrub third-party log lines too.
ACTIVE_SECRETS: ContextVar[frozenset[str]] = ContextVar("evalhouse_http_active_secrets", default=frozenset())
_MIN_SCRUB_LEN = 3  # shorter "secrets" would mangle every message and protect nothing


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
        elif userinfo != REDACTED:  # a bare token as the user name (https://TOKEN@host)
            netloc = f"{REDACTED}@{hostport}"
    query = _redact_query(parts.query, secret_params) if parts.query else parts.query
    fragment = parts.fragment
    if "=" in fragment:  # OAuth implicit flow puts access_token in the fragment
        fragment = _redact_query(fragment, secret_params)
    return urlunsplit((parts.scheme, netloc, parts.path, query, fragment))


_QUERY_PAIR_RE = re.compile(r"(?P<lead>[?&#;])(?P<name>[^=&\s#\"'<>?]+)=(?P<value>[^&\s#\"'<>]*)")
_USERINFO_RE = re.compile(r"(?P<lead>://[^:/@\s]+:)[^@/\s]+(?P<at>@)")
_BARE_USER_RE = re.compile(r"(?P<lead>://)(?!\[REDACTED\]@)[^:/@\s\[\]]+(?P<at>@)")


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
    text = _USERINFO_RE.sub(lambda m: f"{m['lead']}{REDACTED}{m['at']}", text)
    return _BARE_USER_RE.sub(lambda m: f"{m['lead']}{REDACTED}{m['at']}", text)


def redact_stored(value: Any, secrets: Iterable[str] = ()) -> Any:
    """``value`` (a string, or JSON-able lists and mappings of them) with every URL secret scrubbed.

    What every stored or printed field passes through: run details and errors, raw-store
    manifest lines, labels. Query values under secret-looking names, URL userinfo and the
    given ``secrets`` (plus those of the fetch in progress) become ``[REDACTED]``; everything
    else is kept as it was, so a stored URL still names the endpoint.
    """
    known = frozenset(secrets) | ACTIVE_SECRETS.get()
    if isinstance(value, str):
        return redact_text(value, known) if _may_hold_secret(value, known) else value
    if isinstance(value, Mapping):
        return {redact_stored(k, known): redact_stored(v, known) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [redact_stored(v, known) for v in value]
    return value


_URL_CREDENTIALS_RE = re.compile(r"://(?P<user>[^:/@\s\[\]]+)(?::(?P<password>[^@/\s]+))?@")


def url_secrets(value: Any) -> frozenset[str]:
    """Secret strings carried by the URLs inside ``value``: userinfo passwords (or a bare user
    token) and the values of secret-looking query parameters, in raw and encoded forms.

    A run stores several texts that name one URL (its details, its error); collecting the
    secrets first lets :func:`redact_stored` scrub them wherever they reappear, even in an
    error message that quotes a password without the URL around it.
    """
    found: set[str] = set()
    stack = [value]
    while stack:
        item = stack.pop()
        if isinstance(item, Mapping):
            stack.extend(item.keys())
            stack.extend(item.values())
        elif isinstance(item, list | tuple):
            stack.extend(item)
        elif isinstance(item, str) and ("@" in item or "=" in item):
            for match in _URL_CREDENTIALS_RE.finditer(item):
                secret = match["password"] or (match["user"] if match["password"] is None else None)
                if secret and secret != REDACTED:
                    found |= secret_forms(unquote_plus(secret)) | secret_forms(secret)
            for match in _QUERY_PAIR_RE.finditer(item):
                if is_secret_param(match["name"]) and match["value"] and match["value"] != REDACTED:
                    found |= secret_forms(unquote_plus(match["value"])) | secret_forms(match["value"])
    return frozenset(found)


def _may_hold_secret(text: str, secrets: frozenset[str]) -> bool:
    return "=" in text or "@" in text or any(s in text for s in secrets if len(s) >= _MIN_SCRUB_LEN)


def secret_forms(value: str) -> set[str]:
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
        redacted = redact_text(message, ACTIVE_SECRETS.get())
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
