"""LEXam: one leaderboard page with two tables (open questions, multiple choice)."""

from __future__ import annotations

from evalhouse.ingest.spiders.spiders.base import SourceSpider


class LexamSpider(SourceSpider):
    """One page and no links to follow; scrapy still applies robots.txt, throttling and limits."""

    name = "lexam"
