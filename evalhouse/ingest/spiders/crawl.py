"""Run one crawl in-process and hand back its pages: a CrawlerRunner on a reactor started once.

Twisted's reactor cannot be restarted, so ``CrawlerProcess`` (which starts and stops it) works
once per process - a second refresh in the same process, or a second test, would hang. Instead
the first crawl starts the reactor in a daemon thread (``installSignalHandlers=False``, so
Ctrl-C still reaches the main thread) and every crawl is scheduled onto it with
``blockingCallFromThread``: the calling thread waits for that crawl's Deferred and gets the
collected pages back. Starting scrapy costs its import (~0.5 s) once; each further crawl costs
only its requests, so tests and the nightly job run many crawls cheaply.
"""

from __future__ import annotations

import threading
from dataclasses import dataclass, field
from typing import Any
from urllib.parse import unquote, urlsplit, urlunsplit

from scrapy.crawler import CrawlerRunner
from scrapy.settings import Settings
from twisted.internet import reactor as _reactor
from twisted.internet.threads import blockingCallFromThread

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import SourceModule
from evalhouse.ingest.spiders import settings as project_settings
from evalhouse.ingest.spiders.items import FailedPage, PageItem
from evalhouse.ingest.spiders.spiders import spider_for

reactor: Any = _reactor
_start_lock = threading.Lock()
_thread: threading.Thread | None = None


@dataclass
class Collector:
    """What one crawl produced (filled on the reactor thread, read after the crawl ends)."""

    pages: list[PageItem] = field(default_factory=list)
    failures: list[FailedPage] = field(default_factory=list)
    malformed: list[str] = field(default_factory=list)

    def add(self, item: PageItem | FailedPage) -> None:
        (self.pages if isinstance(item, PageItem) else self.failures).append(item)


@dataclass(frozen=True)
class CrawlOutcome:
    pages: list[PageItem]
    failures: list[FailedPage]
    malformed: list[str]
    stats: dict[str, Any]


def _ensure_reactor() -> None:
    global _thread  # noqa: PLW0603 - one reactor thread per process, by design
    with _start_lock:
        if _thread is not None and _thread.is_alive():
            return
        _thread = threading.Thread(
            target=reactor.run, kwargs={"installSignalHandlers": False}, name="evalhouse-reactor", daemon=True
        )
        _thread.start()


def crawl_settings(mirror: str | None, overrides: dict[str, Any] | None = None) -> Settings:
    settings = Settings()
    settings.setmodule(project_settings, priority="project")
    if mirror is not None:
        settings.setdict(project_settings.MIRROR_OVERRIDES, priority="project")
    if overrides:
        settings.setdict(overrides, priority="cmdline")
    deadline = settings.getfloat("CLOSESPIDER_TIMEOUT")
    if deadline > 0 and settings.getfloat("DOWNLOAD_TIMEOUT") > deadline:
        # closing the spider at the deadline does not cancel downloads in flight: none may outlive it
        settings.set("DOWNLOAD_TIMEOUT", deadline, priority="cmdline")
    return settings


def _split_credentials(mirror: str | None) -> tuple[str | None, dict[str, str]]:
    """A mirror base URL without its userinfo, and the credentials as scrapy's HttpAuth settings.

    Scrapy cannot fetch ``http://user:pass@host/…`` (it takes the userinfo for part of the host,
    and would print the password in every log line and error); sent as Basic auth to the mirror's
    host only, the credentials never appear in a URL.
    """
    if mirror is None:
        return None, {}
    parts = urlsplit(mirror)
    if parts.scheme.lower() not in ("http", "https") or "@" not in parts.netloc:
        return mirror, {}
    hostport = parts.netloc.rpartition("@")[2]
    clean = urlunsplit((parts.scheme, hostport, parts.path, parts.query, parts.fragment))
    auth = {
        "http_user": unquote(parts.username or ""),
        "http_pass": unquote(parts.password or ""),
        "http_auth_domain": parts.hostname or "",
    }
    return clean, auth


def crawl(
    module: SourceModule,
    requests: list[FetchRequest],
    *,
    mirror: str | None = None,
    overrides: dict[str, Any] | None = None,
) -> CrawlOutcome:
    """Crawl ``module``'s planned ``requests`` (following its ``follow()`` rules); block until done."""
    spider_cls = spider_for(module.SPIDER)  # type: ignore[attr-defined]
    mirror, auth = _split_credentials(mirror)
    settings = crawl_settings(mirror, overrides)
    collector = Collector()
    stats: dict[str, Any] = {}
    _ensure_reactor()

    def start() -> Any:
        runner = CrawlerRunner(settings)
        crawler = runner.create_crawler(spider_cls)
        deferred = runner.crawl(crawler, module=module, requests=requests, mirror=mirror, collector=collector, **auth)
        deferred.addCallback(lambda _: stats.update(crawler.stats.get_stats()))
        return deferred

    blockingCallFromThread(reactor, start)
    failures = list(collector.failures)
    if stats.get("finish_reason") == "closespider_timeout":
        limit = settings.getfloat("CLOSESPIDER_TIMEOUT")
        url = requests[0].url if requests else "(crawl)"
        message = f"deadline exceeded ({limit:g} s per source): the crawl was closed before it finished"
        failures.insert(0, FailedPage(url, "deadline", message, planned=True))  # the run's reason
    return CrawlOutcome(collector.pages, failures, collector.malformed, stats)
