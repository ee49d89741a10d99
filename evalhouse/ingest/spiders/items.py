"""What a spider yields: a fetched page (its bytes and fetch facts) or a page that failed.

Items are checked for shape before they are collected (``pipelines.ItemShapeCheck``), so a
spider bug - a page without bytes, a failure without a reason - is counted and reported instead
of reaching the raw store.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

from evalhouse.ingest.fetch import FetchErrorKind

FAILURE_KINDS: frozenset[str] = frozenset(
    {"timeout", "connection", "http_status", "too_large", "too_many_redirects", "invalid_url", "robots"}
)


@dataclass
class PageItem:
    """One page as fetched: ``url`` is the live URL it stands for, ``fetched_url`` where it came from."""

    url: str
    fetched_url: str
    status: int
    body: bytes
    content_type: str | None
    headers: dict[str, str]
    retrieved_at: datetime
    elapsed_s: float
    label: str | None = None
    depth: int = 0
    etag: str | None = None
    last_modified: str | None = None


@dataclass
class FailedPage:
    """A page the crawl could not fetch, with the fetch error kind the ledger uses."""

    url: str
    kind: FetchErrorKind | str
    message: str
    status: int | None = None
    label: str | None = None
    depth: int = 0
    planned: bool = False
    extra: dict[str, str] = field(default_factory=dict)


def shape_problems(item: object) -> list[str]:
    """Why an item is malformed (empty when it is fine): the spider-side contract on items."""
    if isinstance(item, PageItem):
        problems = []
        if not item.url.startswith(("http://", "https://", "file://")):
            problems.append(f"url {item.url!r} is not absolute")
        if not isinstance(item.body, bytes):
            problems.append(f"body is {type(item.body).__name__}, not bytes")
        if not 200 <= item.status < 300:
            problems.append(f"status {item.status} is not a 2xx")
        if item.retrieved_at.tzinfo is None:
            problems.append("retrieved_at has no time zone")
        return problems
    if isinstance(item, FailedPage):
        problems = [] if item.message.strip() else ["a failure without a message"]
        if item.kind not in FAILURE_KINDS:
            problems.append(f"unknown failure kind {item.kind!r}")
        return problems
    return [f"unexpected item type {type(item).__name__}"]
