"""The spider every crawled source uses: schedule, record, follow the source's own rules.

It works in *live URL space*: every request names the page's real URL, and only the URL that is
actually downloaded is mapped into ``--mirror`` (directory or base URL) when one is given, so the
raw store records the same URLs a live night would, links resolve against the live page, and a
mirror replay never leaves this machine. Which links to follow is the source module's pure
``follow(body, meta=...)`` function, tested offline like its parser.
"""

from __future__ import annotations

import mimetypes
import time
from collections.abc import AsyncIterator, Iterator
from datetime import UTC, datetime
from typing import Any
from urllib.parse import urlsplit

import scrapy
from scrapy.exceptions import IgnoreRequest
from scrapy.http import Response
from scrapy.spidermiddlewares.httperror import HttpError
from twisted.python.failure import Failure

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.mirror import mirror_url
from evalhouse.ingest.source import FetchMeta, ParseError, SourceModule
from evalhouse.ingest.spiders.items import FailedPage, PageItem

_KEEP_HEADERS = ("content-type", "etag", "last-modified", "date", "server", "cache-control")


class SourceSpider(scrapy.Spider):
    """Crawl ``requests`` for ``module``; each page becomes a PageItem, each failure a FailedPage."""

    name = "source"

    def __init__(
        self,
        *,
        module: SourceModule,
        requests: list[FetchRequest],
        mirror: str | None,
        collector: Any,
        **kwargs: Any,
    ) -> None:
        super().__init__(**kwargs)
        self.module = module
        self.planned = requests
        self.mirror = mirror
        self.collector = collector
        self._seen: set[str] = set()

    async def start(self) -> AsyncIterator[scrapy.Request]:
        for request in self.planned:
            if (req := self._request(request, depth=0, planned=True)) is not None:
                yield req

    def _request(self, request: FetchRequest, *, depth: int, planned: bool) -> scrapy.Request | None:
        if request.url in self._seen:
            return None
        self._seen.add(request.url)
        target = mirror_url(request.url, self.mirror) if self.mirror else request.url
        headers = dict(request.headers) if not self.mirror else {}  # secrets never go to a mirror
        info = {"url": request.url, "label": request.label, "depth": depth, "planned": planned, "t0": time.monotonic()}
        return scrapy.Request(
            target,
            headers=headers,
            callback=self.parse_page,
            errback=self.failed,
            meta={"evalhouse": info},
            dont_filter=True,
        )

    def parse_page(self, response: Response) -> Iterator[Any]:
        info = response.meta["evalhouse"]
        headers = {
            name: response.headers.get(name).decode("latin-1") for name in _KEEP_HEADERS if response.headers.get(name)
        }
        content_type = headers.get("content-type") or _guess_type(response.url)
        page = PageItem(
            url=info["url"],
            fetched_url=response.url,
            status=response.status,
            body=response.body,
            content_type=content_type,
            headers=headers,
            retrieved_at=datetime.now(UTC),
            elapsed_s=time.monotonic() - info["t0"],
            label=info["label"],
            depth=info["depth"],
            etag=headers.get("etag"),
            last_modified=headers.get("last-modified"),
        )
        yield page
        follow = getattr(self.module, "follow", None)
        if follow is None:
            return
        meta = FetchMeta(self.module.SOURCE.key, page.url, "", page.retrieved_at, content_type, page.label)
        try:
            found = follow(response.body, meta=meta)
        except ParseError:  # the page's parse reports why; an unreadable page links nowhere
            return
        for nxt in found:
            if (req := self._request(nxt, depth=info["depth"] + 1, planned=False)) is not None:
                yield req

    def failed(self, failure: Failure) -> Iterator[FailedPage]:
        request = failure.request  # type: ignore[attr-defined]
        info = request.meta["evalhouse"]
        kind, status, message = classify(failure)
        yield FailedPage(
            url=info["url"],
            kind=kind,
            message=f"{message} ({request.url})" if request.url != info["url"] else message,
            status=status,
            label=info["label"],
            depth=info["depth"],
            planned=info["planned"],
        )


def classify(failure: Failure) -> tuple[str, int | None, str]:
    """``(fetch error kind, HTTP status, message)`` for a failed download, in the ledger's terms."""
    exc = failure.value
    name = type(exc).__name__
    text = str(exc)
    if isinstance(exc, HttpError):
        status = exc.response.status
        location = exc.response.headers.get("Location")
        if 300 <= status < 400 and location:  # a redirect scrapy would not follow (file://, ftp://…)
            where = location.decode("latin-1")
            return "invalid_url", status, f"HTTP {status}: redirect to unsupported location {where}"
        return "http_status", status, f"HTTP {status}"
    if isinstance(exc, IgnoreRequest):
        if "DOWNLOAD_MAXSIZE" in text:  # a body (or its decompression: a gzip bomb) over the size cap
            return "too_large", None, f"body larger than DOWNLOAD_MAXSIZE: {text}"
        if "robots" in text.lower():
            return "robots", None, "forbidden by robots.txt"
        if "redirect" in text.lower():
            return "too_many_redirects", None, f"redirect loop: {text}"
        return "connection", None, f"request ignored: {text}"
    if name in ("DownloadCancelledError", "CancelledError"):
        return "too_large", None, f"body larger than DOWNLOAD_MAXSIZE ({text or 'download cancelled'})"
    if name in ("DownloadTimeoutError", "TimeoutError", "TCPTimedOutError"):
        return "timeout", None, f"timeout: {text or name}"
    if isinstance(exc, FileNotFoundError | IsADirectoryError | NotADirectoryError):
        return "http_status", 404, "no such file in the mirror"
    return "connection", None, f"{name}: {text}"


def _guess_type(url: str) -> str | None:
    path = urlsplit(url).path
    if path.endswith((".js", ".mjs")):
        return "application/javascript"
    return mimetypes.guess_type(path)[0]
