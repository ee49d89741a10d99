"""The Swallow LLM Leaderboard: index pages -> the JS data files and every per-model page."""

from __future__ import annotations

from evalhouse.ingest.spiders.spiders.base import SourceSpider


class SwallowSpider(SourceSpider):
    """Follows what ``swallow_leaderboard.follow()`` finds: ``<script src>`` data and model links."""

    name = "swallow"
