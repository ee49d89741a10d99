"""``--mirror DIR_OR_URL``: replay pinned payloads instead of live hosts.

A mirror is a plain directory tree (or the same tree served over HTTP) laid out by URL::

    https://api.example.com/v1/models.json?page=2&api_key=K
      -> <mirror>/api.example.com/v1/models__qbc7c7eb0ad0afdec.json

so a night can be re-run byte-for-byte and tests never reach the internet.

Mapping rules (deterministic, documented because ``make fixture`` writes trees by them):

* the scheme and fragment are dropped (http and https share a tree); a non-default port is kept
  as ``host_port``; the host is lower-cased;
* each path segment is percent-decoded and re-encoded canonically, keeping only characters
  that are safe in file names on every platform; ``.`` and ``..`` become ``%2E`` / ``%2E%2E``
  so a URL can never climb out of the mirror; an empty path or one ending in ``/`` maps to
  ``_index``;
* the query string is not kept in the path. Secret-looking and declared secret parameters are
  dropped (a recording made with one API key replays with another, and keys never reach a
  path), the rest are sorted and hashed: ``name__q<16 hex of sha256>.ext``. No query (or only
  secrets) means no suffix. So pages of one endpoint get distinct files, and parameter order
  does not matter. A cache-busting parameter (``_=<timestamp>``) would defeat this; sources
  must not plan one.
* a POST's body is hashed the same way into ``__b<16 hex>`` after any query suffix: a JSON body
  in its canonical form (keys sorted, no spaces), so key order and spacing do not matter, any
  other body as its bytes. ``POST /functions/v1/read {"name": "a"}`` and ``{"name": "b"}`` are
  two files; the mirror serves each to a plain GET of its path (a mirror is static files).
* a URL that is not http(s) (a local file) is returned unchanged: it is already pinned.

A caveat of laying URLs out as paths: ``/a`` and ``/a/b`` cannot both be mirrored (``a``
would have to be a file and a directory); :func:`build_mirror` raises in that case.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePosixPath
from urllib.parse import parse_qsl, quote, unquote, urlencode, urlsplit
from urllib.request import url2pathname

from evalhouse.common.redaction import is_secret_param, redact_url

__all__ = ["INDEX_NAME", "MirrorKey", "build_mirror", "holds_nothing_of", "mirror_relpath", "mirror_url"]

#: What names a payload in a mirror: a URL (GET), or a URL and the body POSTed to it.
MirrorKey = str | tuple[str, bytes]

INDEX_NAME = "_index"
# Characters left unencoded in a mirror file name: portable on POSIX and Windows file systems.
_SAFE = "-._~+,=@"
_DEFAULT_PORTS = {"http": 80, "https": 443}


def _segment(raw: str) -> str:
    name = quote(unquote(raw), safe=_SAFE)
    if name in (".", ".."):
        return name.replace(".", "%2E")
    return name


def _is_remote(url: str) -> bool:
    return urlsplit(url).scheme.lower() in ("http", "https")


def _body_digest(body: bytes) -> str:
    """16 hex of the sha256 of a POST body, JSON in its canonical form."""
    try:
        canonical = json.dumps(json.loads(body), sort_keys=True, separators=(",", ":"), ensure_ascii=False).encode()
    except (ValueError, RecursionError):  # not JSON (or not UTF-8): the bytes as sent
        canonical = body
    return hashlib.sha256(canonical).hexdigest()[:16]


def mirror_relpath(original_url: str, *, secret_params: Iterable[str] = (), body: bytes | None = None) -> PurePosixPath:
    """The path of ``original_url`` (POSTed ``body``, if any) inside any mirror (``host/seg/…/file``),
    see module doc."""
    parts = urlsplit(original_url)
    scheme = parts.scheme.lower()
    if scheme not in _DEFAULT_PORTS:
        raise ValueError(f"only http(s) URLs can be mirrored, got scheme {scheme!r}")
    if not parts.hostname:
        raise ValueError("a URL without a host cannot be mirrored")
    host = parts.hostname.lower()
    if parts.port is not None and parts.port != _DEFAULT_PORTS[scheme]:
        host = f"{host}_{parts.port}"
    segments = [_segment(s) for s in parts.path.split("/") if s]
    if not segments or parts.path.endswith("/"):
        segments.append(INDEX_NAME)
    kept = sorted(
        (k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if not is_secret_param(k, secret_params)
    )
    suffix = ""
    if kept:
        suffix += "__q" + hashlib.sha256(urlencode(kept).encode("utf-8")).hexdigest()[:16]
    if body is not None:
        suffix += "__b" + _body_digest(body)
    if suffix:
        stem, dot, ext = segments[-1].rpartition(".")
        segments[-1] = f"{stem}{suffix}.{ext}" if stem and dot else f"{segments[-1]}{suffix}"
    return PurePosixPath(_segment(host), *segments)


def _mirror_dir(mirror: str | os.PathLike[str]) -> Path | None:
    """The directory a mirror spec names, or None when it is an http(s) base URL."""
    text = os.fspath(mirror)
    parts = urlsplit(text)
    scheme = parts.scheme.lower()
    if scheme in ("http", "https"):
        if parts.query or parts.fragment:
            raise ValueError("a mirror base URL must not have a query or fragment")
        return None
    if scheme == "file":
        return Path(url2pathname(parts.path)).resolve()
    return Path(text).expanduser().resolve()


def mirror_url(
    original_url: str,
    mirror: str | os.PathLike[str],
    *,
    secret_params: Iterable[str] = (),
    body: bytes | None = None,
) -> str:
    """Where ``original_url`` (POSTed ``body``, if any) lives in ``mirror``: a ``file://`` URL for a
    directory mirror, an ``http(s)://`` URL under the base for a URL mirror; non-http(s) URLs come
    back unchanged.
    """
    if not _is_remote(original_url):
        return original_url
    rel = mirror_relpath(original_url, secret_params=secret_params, body=body)
    directory = _mirror_dir(mirror)
    if directory is not None:
        return directory.joinpath(*rel.parts).as_uri()
    base = os.fspath(mirror).rstrip("/")
    # The on-disk names may contain '%'; quote again so a static server maps back to them.
    return base + "/" + "/".join(quote(part, safe=_SAFE) for part in rel.parts)


def holds_nothing_of(mirror: str | os.PathLike[str], urls: Iterable[str]) -> bool:
    """True when ``mirror`` is a directory with no file beside any of ``urls``' mirror paths: it
    holds nothing of the source that fetches them (a URL mirror cannot be listed: False)."""
    directory = _mirror_dir(mirror)
    if directory is None:
        return False
    for url in urls:
        if not _is_remote(url):
            return False
        folder = directory.joinpath(*mirror_relpath(url).parts).parent
        if folder.is_dir() and any(p.is_file() for p in folder.iterdir()):
            return False
    return True


def build_mirror(
    directory: str | os.PathLike[str],
    mapping: Mapping[MirrorKey, bytes],
    *,
    secret_params: Iterable[str] = (),
) -> dict[MirrorKey, Path]:
    """Write ``{url: bytes}`` (a POST's payload under ``(url, body)``) as a mirror tree under
    ``directory``; return ``{key: file}``.

    Raises ``ValueError`` when two URLs with different bytes map to one file (they differ only
    in secret parameters, say), rather than silently keeping one of them.
    """
    root = Path(directory)
    secret_params = tuple(secret_params)
    written: dict[Path, tuple[str, bytes]] = {}
    out: dict[MirrorKey, Path] = {}
    for key, data in mapping.items():
        url, body = (key, None) if isinstance(key, str) else key
        dest = root.joinpath(*mirror_relpath(url, secret_params=secret_params, body=body).parts)
        previous = written.get(dest)
        if previous is not None and previous[1] != data:
            first, second = (redact_url(u, secret_params) for u in (previous[0], url))
            raise ValueError(f"{second} and {first} map to the same mirror file {dest} with different bytes")
        dest.parent.mkdir(parents=True, exist_ok=True)
        tmp = dest.with_name(dest.name + ".tmp")
        tmp.write_bytes(data)
        tmp.replace(dest)
        written[dest] = (url, data)
        out[key] = dest
    return out
