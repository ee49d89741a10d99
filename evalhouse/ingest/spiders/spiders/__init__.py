"""The spiders, one per crawled source (looked up by the source module's ``SPIDER`` name)."""

from __future__ import annotations

from evalhouse.ingest.spiders.spiders.base import SourceSpider
from evalhouse.ingest.spiders.spiders.lexam import LexamSpider
from evalhouse.ingest.spiders.spiders.swallow import SwallowSpider

SPIDERS: dict[str, type[SourceSpider]] = {s.name: s for s in (SwallowSpider, LexamSpider)}


def spider_for(name: str) -> type[SourceSpider]:
    if name not in SPIDERS:
        raise KeyError(f"no spider named {name!r}; known: {', '.join(sorted(SPIDERS))}")
    return SPIDERS[name]
