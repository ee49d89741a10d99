"""Scrapy settings of evalhouse's crawls: polite by default, bounded always.

Every crawl obeys robots.txt, throttles itself to the host's latency (AutoThrottle), caps
concurrency, body size and redirects, and names itself with the same User-Agent as the httpx
client. Nothing listens on a port (the telnet console is off) and no cookies are kept.
"""

from __future__ import annotations

from evalhouse.ingest.http import DEFAULT_MAX_BYTES, DEFAULT_USER_AGENT

BOT_NAME = "evalhouse"
SPIDER_MODULES = ["evalhouse.ingest.spiders.spiders"]
NEWSPIDER_MODULE = "evalhouse.ingest.spiders.spiders"

USER_AGENT = DEFAULT_USER_AGENT
ROBOTSTXT_OBEY = True

# Politeness: AutoThrottle adapts the delay to the host's latency; concurrency stays low.
AUTOTHROTTLE_ENABLED = True
AUTOTHROTTLE_START_DELAY = 1.0
AUTOTHROTTLE_MAX_DELAY = 30.0
AUTOTHROTTLE_TARGET_CONCURRENCY = 1.0
CONCURRENT_REQUESTS = 8
CONCURRENT_REQUESTS_PER_DOMAIN = 2
DOWNLOAD_DELAY = 0.5
DOWNLOAD_TIMEOUT = 60

# Bounds: the same per-payload cap as the httpx client; a redirect loop ends after 5 hops.
DOWNLOAD_MAXSIZE = DEFAULT_MAX_BYTES
DOWNLOAD_WARNSIZE = DEFAULT_MAX_BYTES // 2
REDIRECT_MAX_TIMES = 5
RETRY_ENABLED = True
RETRY_TIMES = 3
RETRY_HTTP_CODES = [429, 500, 502, 503, 504]
# Scrapy's default retry exceptions but CannotResolveHostError (scrapy's wrapper of every DNS
# failure): a name that does not resolve (no network) is not retried
RETRY_EXCEPTIONS = [
    "scrapy.exceptions.DownloadConnectionRefusedError",
    "scrapy.exceptions.DownloadFailedError",
    "scrapy.exceptions.DownloadTimeoutError",
    "scrapy.exceptions.ResponseDataLossError",
    "twisted.internet.error.ConnectionDone",
    "twisted.internet.error.ConnectError",
    "twisted.internet.error.ConnectionLost",
    OSError,
    "scrapy.core.downloader.handlers.http11.TunnelError",
]

COOKIES_ENABLED = False
TELNETCONSOLE_ENABLED = False
REMOTE_CONTROL_ENABLED = False
HTTPCACHE_ENABLED = False
DEPTH_LIMIT = 3
CLOSESPIDER_PAGECOUNT = 2000
# The source deadline: a crawl still running after this many seconds is closed and its run fails
# with "deadline exceeded" (a slow-drip server must not hold the warehouse lock all night).
CLOSESPIDER_TIMEOUT = 300

ITEM_PIPELINES = {
    "evalhouse.ingest.spiders.pipelines.ItemShapeCheck": 100,
    "evalhouse.ingest.spiders.pipelines.Collector": 900,
}

# The crawl runs on a reactor evalhouse starts once per process (crawl.py); no reactor check.
TWISTED_REACTOR = None
LOG_LEVEL = "WARNING"

#: Overrides for a replay from a mirror (a directory or a server of ours): there is no remote host
#: to be polite to, and AutoThrottle never shortens its delay on 404s (a partial crawl of 100+
#: missing pages would take ~10 s), so throttling is off and the per-host cap is the global one.
MIRROR_OVERRIDES = {"AUTOTHROTTLE_ENABLED": False, "DOWNLOAD_DELAY": 0.0, "CONCURRENT_REQUESTS_PER_DOMAIN": 8}
