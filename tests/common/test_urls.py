"""Which stored URLs may become links: http(s) with a host, read as a browser reads them."""

from __future__ import annotations

import re
from importlib import resources

import pytest

from evalhouse.common.urls import link_target
from evalhouse.site.build import environment


@pytest.mark.parametrize(
    "url",
    [
        "javascript:alert(1)",
        " \tjavascript:alert(1)",
        "JaVaScRiPt:alert(1)",
        "java\nscript:alert(1)",
        "jav\tascript:alert(1)",
        "\x00javascript:alert(1)",
        "vbscript:msgbox(1)",
        "data:text/html,<script>alert(1)</script>",
        "file:///etc/passwd",
        "//evil.example/x",
        "https:",
        "https:///no-host",
        "https://[::1",
        "https://a b/",
        "https://x.org:99999/",
        "https://%00/",
        "",
        None,
        42,
    ],
)
def test_other_schemes_and_malformed_urls_are_not_links(url: object) -> None:
    assert link_target(url) is None


@pytest.mark.parametrize(
    ("url", "href"),
    [
        ("https://arxiv.org/abs/2501.00001", "https://arxiv.org/abs/2501.00001"),
        ("HTTP://Example.org/a?b=c#d", "HTTP://Example.org/a?b=c#d"),
        ("  https://example.org/x\n", "https://example.org/x"),
        ("https://exa\tmple.org/", "https://example.org/"),  # what the browser would open
    ],
)
def test_http_urls_are_links_as_the_browser_reads_them(url: str, href: str) -> None:
    assert link_target(url) == href


def test_the_link_macro_shows_a_refused_url_as_text() -> None:
    env = environment()
    macro = env.from_string('{% import "macros.html.j2" as m %}{{ m.link(u) }}|{{ m.link(u, "the paper") }}')
    hostile = macro.render(u=" \tJaVaScRiPt:alert(1)")
    assert "<a" not in hostile and "href" not in hostile
    assert "JaVaScRiPt:alert(1)" in hostile and "the paper" in hostile
    fine = macro.render(u="https://example.org/p")
    assert fine.count('<a href="https://example.org/p" rel="nofollow noopener noreferrer">') == 2


def test_every_href_in_the_site_templates_is_a_page_of_the_site_or_checked() -> None:
    """A new template that puts a stored URL straight into an href fails here."""
    allowed = re.compile(
        r"^(\.\./)?\{\{ (root|data\.(model|benchmark|audit)_page\(|data\.score_pages\[|data_docs|v\.path|href|"
        r"s\.homepage \| link_target)"
    )
    found = 0
    for entry in resources.files("evalhouse.site").joinpath("templates").iterdir():
        for href in re.findall(r'href="([^"]*)"', entry.read_text(encoding="utf-8")):
            found += 1
            assert allowed.match(href), f"{entry.name}: href={href!r} does not go through link_target"
    assert found > 10
