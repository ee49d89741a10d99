"""The explorer: a static, self-contained web site over one verified snapshot.

``evalhouse site [--snapshot DIR] OUT_DIR`` writes ``index.html`` (search over models and
benchmarks), a page per base model (configurations, every score with source, tier and who ran it,
cells where sources disagree highlighted, release-date evidence), a page per benchmark (every
model's canonical value on its canonical metric, family and version links), an audit page per
evaluation record (each score's chain: raw sha256, URL, locator, canonicalisation steps), and the
analyses' figures. Pages need no server and no JavaScript for their content; a small script adds
search-as-you-type and sortable tables. It sits above ``analytics`` (the figures) and reads a
snapshot through :func:`evalhouse.warehouse.snapshot.reader.open_snapshot`.
"""

from evalhouse.site.build import SiteSummary, build_site

__all__ = ["SiteSummary", "build_site"]
