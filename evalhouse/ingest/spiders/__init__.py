"""The scrapy project: crawls of HTML leaderboards, feeding the same raw store and parsers as httpx.

Layout (a standard scrapy project, importable as a package)::

    settings.py     robots.txt obeyed, AutoThrottle, concurrency and download-size limits, UA
    items.py        PageItem (bytes + fetch facts) and FailedPage, with their shape checks
    pipelines.py    ItemShapeCheck (refuses malformed items, counts them) and Collector
    spiders/        one spider per crawled source; the follow rules are the source's pure
                    ``follow()`` function, so the spider only schedules and records
    crawl.py        runs one crawl in-process on a reactor started once (see its docstring)

A spider never parses scores: it hands every page's bytes back to ``evalhouse refresh``, which
stores them in the raw store and runs the source's pure ``parse()`` on them, exactly as for a
page fetched by :mod:`evalhouse.ingest.http`. Outside evalhouse the project runs with plain
scrapy too: ``SCRAPY_SETTINGS_MODULE=evalhouse.ingest.spiders.settings scrapy list``.
"""
