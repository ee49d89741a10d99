"""What the crawled and fetched leaderboard parsers share: layout errors, HTML and JS readers.

Two whole-payload errors name a drift guard instead of a generic parse failure, so the refresh
can say *why* a page stopped yielding rows:

* :class:`LayoutChanged` - the selectors a parser relies on find nothing ("layout changed: no
  table under #leaderboard");
* :class:`EmptyPlaceholder` - the container is there but holds no rows (a page that moved its
  table to client-side rendering serves the empty shell).

HTML is read with beautifulsoup4 (lxml tree builder) — or, for large pages read only for a few
elements, with parsel (scrapy's selectors: CSS over lxml, ten times faster on a 600 kB page) — and
JavaScript object literals with ``chompjs``, never with regular expressions over markup.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any
from urllib.parse import urljoin, urlsplit

import chompjs
import parsel
from bs4 import BeautifulSoup, SoupStrainer, Tag

from evalhouse.ingest.source import LayoutChanged, ParseError
from evalhouse.ingest.sources import _common as common


def soup(body: bytes, what: str, *, only: str | None = None) -> BeautifulSoup:
    """The page as a tree; ``only`` keeps just the elements of that tag name (and their contents),
    which a parser that checks one element of a large page builds in a third of the time."""
    strainer = SoupStrainer(only) if only is not None else None
    return BeautifulSoup(common.decode_text(body, what), "lxml", parse_only=strainer)


def selector(body: bytes, what: str) -> parsel.Selector:
    """The page as a parsel selector (``.css("table.x td a::attr(href)")``) on lxml's HTML tree."""
    text = common.decode_text(body, what)
    try:
        return parsel.Selector(text=text, type="html")
    except ValueError as exc:  # lxml refuses some strings (NUL and other control characters)
        raise ParseError(f"{what} is not readable as HTML: {exc}") from exc


def text_of(sel: parsel.Selector | parsel.SelectorList) -> str:
    """An element's visible text, whitespace collapsed (``""`` for no element)."""
    return " ".join(" ".join(sel.xpath(".//text()").getall()).split())


def cell_text(tag: Tag) -> str:
    """A cell's visible text, whitespace collapsed."""
    return " ".join(tag.get_text(" ", strip=True).split())


def js_object(text: str, name: str, what: str) -> Any:
    """The object literal assigned to the JS variable ``name`` (``const name = {...}``)."""
    for keyword in ("const", "let", "var"):
        start = text.find(f"{keyword} {name}")
        if start >= 0:
            break
    else:
        raise LayoutChanged(f"layout changed: no JavaScript variable {name!r} in {what}")
    brace = text.find("=", start)
    try:
        return chompjs.parse_js_object(text[brace + 1 :])
    except ValueError as exc:
        raise ParseError(f"the {name} object literal in {what} does not parse: {exc}") from exc


def same_site_link(base: str, href: str | None) -> str | None:
    """``href`` made absolute against ``base``, or None when it leaves the site or is a fragment."""
    if not href or href.startswith(("#", "?", "mailto:", "javascript:")):
        return None
    url = urljoin(base, href)
    a, b = urlsplit(base), urlsplit(url)
    if (a.scheme, a.netloc) != (b.scheme, b.netloc):
        return None
    return url.split("#", 1)[0]


def text_fact(value: Any) -> str | None:
    return common.fact_text(value)


def first(mapping: Mapping[str, Any], *keys: str) -> Any:
    """The first present, non-empty value among ``keys``."""
    for key in keys:
        value = mapping.get(key)
        if value not in (None, ""):
            return value
    return None
