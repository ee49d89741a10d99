"""Property tests of what evalhouse writes for people to read: links, cells, terminal text,
file names and log-scaled figures, each over hundreds of seeded hostile inputs.

* a stored URL becomes a link only when Chromium itself reads its href as http(s);
* CSV/TSV cells never start a spreadsheet formula and give back every row and value;
* terminal output carries no control sequence but rich's own colours;
* a bounded path part fits a file system, is stable, and keeps different names apart;
* the cost/noise figure draws over any mix of zero, negative, missing and infinite costs.

Each input counts in ``figures.fuzzed``; an exception that escapes counts as unhandled.
"""

from __future__ import annotations

import csv
import io
import math

import pytest
from hypothesis import HealthCheck, given, seed, settings
from hypothesis import strategies as st
from sizes import examples

SEED = 18
FUZZ = settings(
    max_examples=examples(200),
    deadline=None,
    database=None,
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large, HealthCheck.function_scoped_fixture],
)

# -- URLs --------------------------------------------------------------------------------------

SCHEMES = ["javascript", "vbscript", "data", "file", "http", "https", "ftp", "blob", "about", "ht tp", ""]
JUNK = st.sampled_from(["", " ", "\t", "\n", "\r", "\x00", "\x01", "\x1f", "\x0b", "\x0c", "\u00a0", "\u200b"])


@st.composite
def scheme_spelling(draw: st.DrawFn) -> str:
    """A scheme in random case with tabs, newlines or controls slipped in (browsers drop some)."""
    word = draw(st.sampled_from(SCHEMES))
    out = []
    for ch in word:
        out.append(ch.upper() if draw(st.booleans()) else ch)
        if draw(st.integers(0, 6)) == 0:
            out.append(draw(JUNK))
    return "".join(out)


@st.composite
def hostile_url(draw: st.DrawFn) -> str:
    head = "".join(draw(st.lists(JUNK, max_size=3)))
    slashes = draw(st.sampled_from(["", "/", "//", "///", "\\\\", "/\t/"]))
    host = draw(st.sampled_from(["example.org", "", "[::1]", "[::1", "a b", "x.y:99", "%00"]))
    rest = draw(st.sampled_from(["", "/p?q=1#f", "alert(1)", "window.__x=1", ",<script>1</script>"]))
    tail = "".join(draw(st.lists(JUNK, max_size=2)))
    return f"{head}{draw(scheme_spelling())}:{slashes}{host}{rest}{tail}"


@pytest.mark.slow
def test_a_stored_url_is_a_link_only_when_chromium_reads_it_as_http(browser, figures) -> None:
    """The oracle is the browser: each URL goes through the site's link macro, and every href the
    page ends up with must have an http(s) protocol as Chromium parses it."""
    from evalhouse.site.build import environment

    macro = environment().from_string(
        '{% import "macros.html.j2" as m %}{% for u in urls %}<p>{{ m.link(u) }}</p>{% endfor %}'
    )
    batches: list[list[str]] = []

    @seed(SEED)
    @settings(FUZZ, max_examples=examples(20))
    @given(urls=st.lists(hostile_url(), min_size=50, max_size=50))
    def collect(urls: list[str]) -> None:
        batches.append(urls)

    collect()
    refused_by_us_not_by_chromium = 0
    page = browser.new_page()
    try:
        for urls in batches:
            figures.fuzzed["site links (URL schemes)"] += len(urls)
            page.set_content(macro.render(urls=urls))
            linked = page.evaluate("() => [...document.querySelectorAll('a')].map(a => a.protocol)")
            bad = page.evaluate(
                "() => [...document.querySelectorAll('a')].filter(a => !['http:', 'https:'].includes(a.protocol))"
                ".map(a => a.getAttribute('href'))"
            )
            assert not bad, bad
            # what Chromium would make of each URL as an href, for the count of cautious refusals
            read = page.evaluate(
                "urls => urls.map(u => { const a = document.createElement('a'); a.href = u; return a.protocol; })",
                urls,
            )
            shown = page.evaluate("() => document.querySelectorAll('p').length")
            assert shown == len(urls)  # every URL is on the page, as a link or as text
            refused_by_us_not_by_chromium += sum(r in ("http:", "https:") for r in read) - len(linked)
    finally:
        page.close()
    print(f"{sum(map(len, batches))} URLs; {refused_by_us_not_by_chromium} http(s) to Chromium shown as text (no host)")


# -- CSV, TSV and terminal cells ------------------------------------------------------------------

CELL_TEXT = st.text(
    alphabet=st.one_of(
        st.sampled_from(list("=+-@\t\r\n,;\"' 0123456789.eE")),
        st.characters(min_codepoint=0, max_codepoint=0x9F),
        st.sampled_from(["\u202e", "\u2066", "é", "—", "\x1b", "\x9b", "\x07"]),
    ),
    max_size=24,
)
FORMULA_START = ("=", "+", "-", "@", "\t", "\r")


def _plain_number(text: str) -> bool:
    try:
        return (
            math.isfinite(float(text))
            and text.strip() == text
            and "_" not in text
            and text.lower() not in ("infinity", "nan")
        )
    except ValueError:
        return False


@pytest.mark.slow
@pytest.mark.parametrize("sep", [",", "\t"])
def test_delimited_cells_never_start_a_formula_and_lose_no_row(sep: str, figures, monkeypatch) -> None:
    import duckdb

    from evalhouse.cli import _common
    from evalhouse.warehouse.sql_guard import run_guarded

    monkeypatch.setattr(_common, "is_terminal", lambda stream=None: False)

    @seed(SEED)
    @FUZZ
    @given(values=st.lists(CELL_TEXT, min_size=1, max_size=12))
    def run(values: list[str]) -> None:
        figures.fuzzed["sql CSV/TSV cells"] += len(values)
        con = duckdb.connect()
        con.execute("CREATE TABLE t (i INTEGER, v VARCHAR)")
        con.executemany("INSERT INTO t VALUES (?, ?)", list(enumerate(values)))
        buffer = io.StringIO()
        monkeypatch.setattr("sys.stdout", buffer)
        try:
            result = run_guarded(con, "SELECT v FROM t ORDER BY i")
            _common.print_rows(result, csv_out=sep == ",")
        except Exception:
            figures.unhandled["sql CSV/TSV output"] += 1
            raise
        finally:
            monkeypatch.undo()
            monkeypatch.setattr(_common, "is_terminal", lambda stream=None: False)
            con.close()
        rows = list(csv.reader(io.StringIO(buffer.getvalue(), newline=""), delimiter=sep))[1:]
        figures.rows_lost += max(0, len(values) - len(rows))
        assert len(rows) == len(values)
        for (cell,), value in zip(rows, values, strict=True):
            assert not cell.startswith(FORMULA_START) or _plain_number(cell), repr(cell)
            assert cell in (value, "'" + value)  # nothing else changed

    run()


@pytest.mark.slow
def test_terminal_tables_carry_no_control_sequence_but_colours(figures) -> None:
    import re

    from rich.table import Table

    from evalhouse.cli._common import _safe_console_class

    colours = re.compile(r"\x1b\[[0-9;]*m")
    control = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")

    @seed(SEED)
    @FUZZ
    @given(values=st.lists(CELL_TEXT, min_size=1, max_size=8), header=CELL_TEXT)
    def run(values: list[str], header: str) -> None:
        figures.fuzzed["terminal table cells"] += len(values) + 1
        buffer = io.StringIO()
        console = _safe_console_class()(file=buffer, force_terminal=True, width=300, color_system="standard")
        grid = Table()
        grid.add_column(header)
        for v in values:
            grid.add_row(v)
        console.print(grid)
        console.print(f"error: {values[0]}")
        left = control.findall(colours.sub("", buffer.getvalue()).replace("\r\n", "\n"))
        assert not left, left

    run()


# -- path parts -------------------------------------------------------------------------------


def test_bounded_names_fit_are_stable_and_keep_names_apart(figures) -> None:
    from evalhouse.common.naming import NAME_MAX_BYTES, bounded_name

    seen: dict[str, str] = {}

    @seed(SEED)
    @settings(FUZZ, max_examples=examples(500))
    @given(name=st.text(min_size=1, max_size=400), reserve=st.sampled_from([0, 6, 11, 17]))
    def run(name: str, reserve: int) -> None:
        figures.fuzzed["path-part names"] += 1
        part = bounded_name(name, reserve=reserve)
        assert len(part.encode()) <= NAME_MAX_BYTES - reserve
        assert part == bounded_name(name, reserve=reserve)
        if len(name.encode()) <= NAME_MAX_BYTES - reserve:
            assert part == name
        key = f"{reserve}:{part}"
        assert seen.setdefault(key, name) == name, (name, seen[key])

    run()


# -- figures on a log scale ----------------------------------------------------------------------

COSTS = st.lists(
    st.one_of(st.floats(allow_nan=True, allow_infinity=True), st.just(0.0), st.none(), st.floats(0, 1e6)), max_size=30
)


@pytest.mark.slow
def test_the_cost_noise_figure_draws_over_any_costs(figures) -> None:
    import pandas as pd

    from evalhouse.analytics.items.report import cost_noise_figure

    @seed(SEED)
    @settings(FUZZ, max_examples=examples(120))
    @given(costs=COSTS, excluded=st.lists(st.booleans(), min_size=30, max_size=30))
    def run(costs: list[float | None], excluded: list[bool]) -> None:
        figures.fuzzed["cost/noise figure (log scale)"] += 1
        n = len(costs)
        items = pd.DataFrame(
            {
                "item_id": [f"q{i}" for i in range(n)],
                "benchmark": ["b"] * n,
                "marginal_cost": pd.array(costs, dtype="Float64").astype(float) if n else [],
                "sigma2": [0.01] * n,
                "cheapest_axis": ["PT", "SFT", "RL"] * (n // 3) + ["PT"] * (n % 3),
                "excluded": ["rule" if e else None for e in excluded[:n]],
            }
        )
        try:
            cost_noise_figure(items).savefig(io.BytesIO(), format="png", dpi=30)
        except Exception:
            figures.unhandled["cost/noise figure"] += 1
            raise

    run()
