"""Item pipelines: refuse malformed items (counted in the crawl stats), collect the rest."""

from __future__ import annotations

from typing import Any

from scrapy.exceptions import DropItem

from evalhouse.ingest.spiders.items import shape_problems


class ItemShapeCheck:
    """Drops an item whose shape is wrong and remembers why; the crawl then reports it."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> ItemShapeCheck:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        problems = shape_problems(item)
        if problems:
            self.crawler.stats.inc_value("evalhouse/items_malformed")
            collector = getattr(self.crawler.spider, "collector", None)
            if collector is not None:
                collector.malformed.append(f"{type(item).__name__} {getattr(item, 'url', '?')}: {'; '.join(problems)}")
            raise DropItem("; ".join(problems))
        return item


class Collector:
    """Hands every well-formed item to the collector the crawl passed to the spider."""

    def __init__(self, crawler: Any) -> None:
        self.crawler = crawler

    @classmethod
    def from_crawler(cls, crawler: Any) -> Collector:
        return cls(crawler)

    def process_item(self, item: Any) -> Any:
        self.crawler.spider.collector.add(item)
        return item
