"""The explorer in a real browser: Playwright driving Debian's Chromium over the built files.

The site (tests/site/conftest.py: the pinned sources through the real refresh, the legacy EEE
datastore imported, 'validate --docs', built by the real command) is opened at 1,366 x 900: a
search ranks a Meta release first, no page scrolls sideways, a leaderboard shows rank, interval
and source count, a score leads to its audit chain, and every number shown is checked against the
warehouse. Each page kind is screenshot into $EVALHOUSE_TEST_ARTIFACTS/site-screenshots/
(outside the repository); the core content is read again with JavaScript off.
"""

from __future__ import annotations

import json
import re

import duckdb
import pytest
from sitebrowser import Explorer, shot

from evalhouse.site.build import _num

WIDTH, HEIGHT = 1366, 900


def _page(browser, explorer: Explorer, rel: str = "index.html", **options):
    page = browser.new_page(viewport={"width": WIDTH, "height": HEIGHT}, **options)
    page.goto((explorer.site / rel).as_uri())
    return page


def _con(explorer: Explorer) -> duckdb.DuckDBPyConnection:
    return duckdb.connect(str(explorer.db), read_only=True)


def _one(con: duckdb.DuckDBPyConnection, sql: str, params: list) -> tuple:
    rows = con.execute(sql, params).fetchall()
    assert len(rows) == 1, (sql, params, rows)
    return rows[0]


def _data(rows, name: str) -> list[str]:
    """The ``data-<name>`` attribute of every row, read in one call."""
    return rows.evaluate_all(f"rs => rs.map(r => r.dataset.{name})")


def _fits(page) -> None:
    width = page.evaluate("document.documentElement.scrollWidth")
    assert width <= WIDTH, f"{page.url} is {width} px wide at a {WIDTH} px window"


def test_searching_llama_3_1_lists_meta_releases_first(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    models = con.execute(
        "SELECT b.base_model_id, b.name, b.developer_id, b.family_id, f.developer_id,"
        " list(DISTINCT mc.config_id || ' ' || mc.name)"
        " FROM v_cell_candidates c JOIN model_config mc USING (config_id) JOIN base_model b USING (base_model_id)"
        " LEFT JOIN model_family f USING (family_id) GROUP BY ALL"
    ).fetchall()
    con.close()
    # what should match, from the warehouse: every model whose names hold both words
    words = ("llama", "3.1")
    expected = {
        m[0]
        for m in models
        if all(
            w in " ".join(re.split(r"[\s\-_/|=:,;()]+", " ".join([m[0], m[1], m[2] or "", m[3], *m[5]]).lower()))
            for w in words
        )
    }
    assert len(expected) > 100  # Meta's releases among a crowd of community fine-tunes
    meta_releases = {m[0] for m in models if m[0] in expected and m[2] == "meta" and m[4] == "meta"}
    assert meta_releases

    page = _page(browser, explorer)
    assert page.locator("#model-list tbody tr").count() == len(models)
    _fits(page)
    shot(page, "index")
    page.fill("#q", "llama 3.1")
    visible = page.locator("#model-list tbody tr:visible")
    ids = visible.locator("td.model-cell a").all_inner_texts()
    assert set(ids) == expected and len(ids) == len(expected)
    assert page.inner_text("#hits") == f"{len(expected)} models"
    assert ids[0] in meta_releases, ids[:5]
    # every Meta release comes before every derivative of the family (other developers' Llamas)
    officials = _data(visible, "official")
    first_derivative = officials.index("0")
    assert "1" not in officials[first_derivative:]
    assert meta_releases <= set(ids[:first_derivative])
    _fits(page)
    shot(page, "index-search")
    # "llama-3.1" is the same search
    page.fill("#q", "llama-3.1")
    assert page.locator("#model-list tbody tr:visible").count() == len(expected)


def test_the_index_ranks_by_what_the_warehouse_knows_and_folds_derivatives(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    known = con.execute(
        "SELECT mc.base_model_id, count(DISTINCT c.source_key) * count(DISTINCT c.benchmark_id)"
        " FROM v_cell_candidates c JOIN model_config mc USING (config_id) GROUP BY 1"
    ).fetchall()
    con.close()
    page = _page(browser, explorer)
    rows = page.locator("#model-list tbody tr")
    # read in one call per question: a round trip per row of 3,000 would take minutes
    ranks = {
        name: int(rank)
        for name, rank in rows.evaluate_all(
            "rs => rs.map(r => [r.querySelector('td.model-cell a').innerText, r.dataset.rank])"
        )
    }
    assert sorted(ranks.values()) == list(range(1, len(known) + 1))
    # the first place is the model with the most sources x benchmarks
    best = max(k for _, k in known)
    first = page.locator('#model-list tbody tr[data-rank="1"] a').first.inner_text()
    assert dict(known)[first] == best
    # derivatives are folded until their family's button unfolds them
    folded = page.locator("#model-list tbody tr.derivative")
    assert folded.count() > 1000 and page.locator("#model-list tbody tr.derivative:visible").count() == 0
    button = page.locator("button.fold").first
    n = int(re.search(r"\d+", button.inner_text()).group())
    button.click()
    assert page.locator("#model-list tbody tr.derivative:visible").count() == n
    # filters: one family's models, all of them (unfolded: a filter lists flat), from the warehouse
    con = _con(explorer)
    family, n_family = con.execute(
        "SELECT b.family_id, count(DISTINCT b.base_model_id) FROM v_cell_candidates c"
        " JOIN model_config mc USING (config_id) JOIN base_model b USING (base_model_id)"
        " WHERE b.family_id IS NOT NULL GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1"
    ).fetchone()
    con.close()
    page.fill("#f-family", family)
    in_family = page.locator("#model-list tbody tr:visible")
    assert in_family.count() == n_family > 10 and set(_data(in_family, "family")) == {family}
    page.fill("#f-family", "")
    # then one developer's models, then open weights only
    page.fill("#f-developer", "meta")
    dev = page.locator("#model-list tbody tr:visible")
    assert dev.count() > 5 and set(_data(dev, "developer")) == {"meta"}
    page.select_option("#f-open", "yes")
    assert set(_data(page.locator("#model-list tbody tr:visible"), "open")) == {"yes"}
    page.fill("#f-from", "2024-07")
    dates = _data(page.locator("#model-list tbody tr:visible"), "date")
    assert dates and all(d >= "2024-07" for d in dates)


def test_a_leaderboard_shows_rank_interval_and_source_count(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    # the board: metr_time_horizons' main board (the whole benchmark, the setup most models have)
    bench, metric, params, setup = _one(
        con,
        "SELECT benchmark_id, metric_id, metric_params_key, setup_key FROM v_benchmark_setup WHERE benchmark_id = ?",
        ["metr_time_horizons"],
    )
    cells = con.execute(
        "SELECT v.config_id, v.value, v.value_hib, v.score_ids, v.n_used FROM v_scores_canonical v"
        " WHERE benchmark_id = ? AND metric_id = ? AND subset_key = '' AND metric_params_key = ? AND setup_key = ?",
        [bench, metric, params, setup],
    ).fetchall()
    ci = dict(
        con.execute(
            "SELECT score_id, [ci_lower, ci_upper] FROM v_cell_candidates"
            " WHERE benchmark_id = ? AND ci_lower IS NOT NULL",
            [bench],
        ).fetchall()
    )
    sources = dict(
        con.execute(
            "SELECT config_id, count(DISTINCT source_key) FROM v_cell_candidates WHERE benchmark_id = ?"
            " AND metric_id = ? AND subset_key = '' AND metric_params_key = ? AND setup_key = ? GROUP BY 1",
            [bench, metric, params, setup],
        ).fetchall()
    )
    con.close()
    # competition ranks from the values themselves: 1 + how many are strictly better
    expected_rank = {c[0]: 1 + sum(o[2] > c[2] for o in cells) for c in cells}

    page = _page(browser, explorer)
    page.fill("#q", "metr")
    page.locator("#benchmark-list tbody tr:visible a", has_text=re.compile(r"^metr_time_horizons$")).click()
    rows = page.locator("#cells tbody tr")
    assert rows.count() == len(cells)
    with_interval = 0
    for row in rows.all():
        config = row.locator("code.config").get_attribute("title")
        assert int(row.locator("td.rank").inner_text()) == expected_rank[config]
        assert int(row.locator(".n-sources").inner_text()) == sources[config]
        interval = row.locator(".interval")
        score_ids = next(c[3] for c in cells if c[0] == config)
        if score_ids[0] in ci:
            lower, upper = ci[score_ids[0]]
            assert (float(interval.get_attribute("data-lower")), float(interval.get_attribute("data-upper"))) == (
                lower,
                upper,
            )
            with_interval += 1
    assert with_interval > 10
    assert page.locator(".policy").count() == 1 and "prefer-independent" in page.inner_text(".policy")
    assert page.locator("td", has_text="prefer-independent").count() == 0  # named once, not per row
    assert page.locator("figure.chart svg circle.top").count() == 10
    _fits(page)
    shot(page, "benchmark")


def test_search_a_model_follow_a_score_to_its_audit_and_check_the_numbers(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    page = _page(browser, explorer)
    page.fill("#q", "gpt-4o")
    visible = page.locator("#model-list tbody tr:visible")
    assert 0 < visible.count() < 200
    page.locator("#model-list tbody tr:visible a", has_text=re.compile(r"^openai/gpt-4o$")).click()
    assert page.locator("h1.model-title").inner_text() == "openai/gpt-4o"
    _fits(page)
    shot(page, "model")

    # every score on the page is the warehouse's current score of that base model, same value
    expected = dict(
        con.execute(
            "SELECT c.score_id, c.value FROM v_cell_candidates c JOIN model_config mc USING (config_id)"
            " WHERE mc.base_model_id = 'openai/gpt-4o'"
        ).fetchall()
    )
    rows = page.locator("#scores tbody tr")
    shown = {int(r.get_attribute("data-score-id")): r for r in rows.all()}
    assert set(shown) == set(expected)
    link = page.locator("#scores tbody tr a.score").first
    score_id = int(page.locator("#scores tbody tr").first.get_attribute("data-score-id"))
    assert float(link.get_attribute("data-value")) == expected[score_id]
    assert link.inner_text() == _num(expected[score_id])

    link.click()
    assert page.url.endswith(f"#score-{score_id}")
    chain = page.locator(f"#score-{score_id}")
    assert chain.is_visible()
    value, raw_value, locator, sha, url, steps, params = _one(
        con,
        "SELECT s.value, s.raw_value, s.locator, p.raw_sha256, r.url, s.canonical_steps::VARCHAR, r.request_params"
        " FROM score s JOIN v_provenance p USING (score_id) JOIN raw_snapshot r ON r.sha256 = p.raw_sha256"
        " WHERE s.score_id = ?",
        [score_id],
    )
    assert float(chain.locator(".value").get_attribute("data-value")) == value
    assert float(chain.locator(".raw-value").get_attribute("data-value")) == raw_value
    assert chain.locator(".locator").inner_text() == locator
    assert chain.locator(".score-id").inner_text() == str(score_id)
    assert page.locator("code.sha256").inner_text() == sha
    assert page.locator(".url a").inner_text() == url
    # the url the bytes were fetched from (a mirror replay), as 'audit score' prints it
    mirror = json.loads(params)["mirror"]
    assert mirror.startswith("http://127.0.0.1:") and page.locator(".fetched-from code").inner_text() == mirror
    assert chain.locator(".steps li").count() == len(json.loads(steps))
    assert "prefer-independent:" in chain.locator(".rule").inner_text()
    _fits(page)
    shot(page, "audit")
    con.close()


def test_setups_by_name_and_no_empty_bounds(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    # a score whose setup key writes a long value as a hash, and its full value
    score_id, setup_key, setup, base = con.execute(
        "SELECT c.score_id, c.setup_key, c.setup::VARCHAR, mc.base_model_id"
        " FROM v_cell_candidates c JOIN model_config mc USING (config_id)"
        " WHERE regexp_matches(c.setup_key, '=#[0-9a-f]{10}') ORDER BY c.score_id LIMIT 1"
    ).fetchone()
    unbounded = con.execute(
        "SELECT score_id FROM v_cell_candidates WHERE canonical_steps::VARCHAR LIKE '%within bounds [None, None]%'"
        " ORDER BY score_id LIMIT 1"
    ).fetchone()
    con.close()
    hashed = re.search(r"=(#[0-9a-f]{10})", setup_key).group(1)
    long_key, long_value = next((k, v) for k, v in json.loads(setup).items() if len(v) > 40)
    page = _page(browser, explorer)
    page.fill("#q", base)
    page.locator("#model-list tbody tr:visible a", has_text=re.compile(f"^{re.escape(base)}$")).click()
    row = page.locator(f'#scores tbody tr[data-score-id="{score_id}"]')
    cell = row.locator(".setup")
    assert hashed not in cell.inner_text() and long_key in cell.inner_text()
    assert f"{long_key}={long_value}" in cell.get_attribute("title")
    row.locator("a.score").click()
    chain = page.locator(f"#score-{score_id}")
    assert f"{long_key}={long_value}" in chain.locator(".setup-full").inner_text()
    assert hashed not in chain.inner_text()
    assert unbounded is not None
    page = _page(browser, explorer)  # the audit page of a score without bounds, through its model page
    con = _con(explorer)
    (ubase,) = con.execute(
        "SELECT mc.base_model_id FROM score s JOIN model_config mc USING (config_id) WHERE s.score_id = ?",
        [unbounded[0]],
    ).fetchone()
    con.close()
    page.fill("#q", ubase)
    page.locator("#model-list tbody tr:visible a", has_text=re.compile(f"^{re.escape(ubase)}$")).click()
    page.locator(f'#scores tbody tr[data-score-id="{unbounded[0]}"] a.score').click()
    steps = page.locator(f"#score-{unbounded[0]} .steps").inner_text()
    assert "None" not in steps and "no bounds stated" in steps


@pytest.mark.parametrize("kind", ["model", "benchmark", "board", "audit"])
def test_the_widest_pages_fit_the_window(explorer: Explorer, browser, kind: str) -> None:
    """The page of each kind with the most rows (the most scores, cells or boards) fits 1,366 px."""
    files = sorted((explorer.site / ({"model": "models", "audit": "audit"}.get(kind, kind + "s"))).glob("*.html"))
    assert files
    widest = max(files, key=lambda p: (p.stat().st_size, p.name))
    page = _page(browser, explorer, widest.relative_to(explorer.site).as_posix())
    _fits(page)
    shot(page, f"widest-{kind}")


def test_whats_new_fits_and_names_every_source(explorer: Explorer, browser) -> None:
    from evalhouse.pipeline.changes import read_latest

    report = read_latest(explorer.db)
    page = _page(browser, explorer)
    page.click("nav >> text=What's new")
    assert page.url.endswith("whats-new.html")
    shown = [s.get_attribute("id").removeprefix("source-") for s in page.locator("section.source-changes").all()]
    assert shown == [b["source"] for b in report["sources"]] and {"epoch-benchmarks", "artificial-analysis"} <= set(
        shown
    )
    _fits(page)
    shot(page, "whats-new")


def test_disagreeing_cells_are_highlighted(explorer: Explorer, browser) -> None:
    con = _con(explorer)
    base, n = con.execute(
        "SELECT mc.base_model_id, count(*) FROM v_cell_candidates c JOIN model_config mc USING (config_id)"
        " JOIN v_scores_canonical v USING (cell_id) WHERE v.disagreement GROUP BY 1 ORDER BY 2 DESC, 1 LIMIT 1"
    ).fetchone()
    con.close()
    page = _page(browser, explorer)
    page.fill("#q", base)
    page.locator("#model-list tbody tr:visible a", has_text=re.compile(f"^{re.escape(base)}$")).click()
    assert page.locator("#scores tbody tr.disagree").count() == n
    assert page.locator("#scores tbody tr.disagree .flag.conflict").count() == n


def test_the_data_docs_are_linked(explorer: Explorer, browser) -> None:
    page = _page(browser, explorer)
    page.click("nav >> text=Analyses")
    assert "built with --no-analyses" in page.inner_text("main")
    suites = page.locator("#validations tbody tr")
    assert suites.count() >= 6  # referential integrity, orphans, bounds, uniqueness, coverage, release dates
    page.locator("#validations a", has_text="uniqueness.scores").click()
    assert "Expectation Suite: uniqueness.scores" in page.inner_text("body")
    assert "Succeeded" in page.inner_text("body")
    shot(page, "data-docs-validation")
    page.go_back()
    page.click("nav >> text=Data Docs")
    assert page.url.endswith("data-docs/index.html")
    assert page.title() == "Data Docs created by Great Expectations"


def test_core_content_works_with_javascript_off(explorer: Explorer, browser) -> None:
    context = browser.new_context(java_script_enabled=False, viewport={"width": WIDTH, "height": HEIGHT})
    page = context.new_page()
    page.goto((explorer.site / "index.html").as_uri())
    rows = page.locator("#model-list tbody tr")
    assert rows.count() == page.locator("#model-list tbody tr:visible").count() > 1000  # nothing folded
    assert page.locator("noscript").count() == 1
    page.locator("#model-list a", has_text=re.compile(r"^openai/gpt-4o$")).click()
    assert page.locator("#scores tbody tr:visible").count() > 10
    page.locator("#scores a.score").first.click()
    assert page.locator("code.sha256").inner_text()
    shot(page, "audit-no-js")
    context.close()


def test_every_board_page_is_linked_from_its_benchmark(explorer: Explorer) -> None:
    """Subsets and other setups: every board but a benchmark's main one has a page of its own,
    linked from the benchmark's page."""
    con = _con(explorer)
    boards = con.execute(
        "SELECT v.benchmark_id, count(DISTINCT (v.subset_key, v.metric_params_key, v.setup_key))"
        " FROM v_scores_canonical v JOIN v_benchmark_metric bm USING (benchmark_id, metric_id) GROUP BY 1"
    ).fetchall()
    mains = {r[0] for r in con.execute("SELECT benchmark_id FROM v_benchmark_setup").fetchall()}
    con.close()
    others = {bench: n - (bench in mains) for bench, n in boards}
    assert explorer.summary["pages"]["board"] == sum(others.values()) > 100
    bench = max(others, key=lambda b: (others[b], b))
    page = next(p for p in (explorer.site / "benchmarks").glob("*.html") if f"<code>{bench}</code>" in p.read_text())
    links = re.findall(r'href="\.\./(boards/[^"]+)"', page.read_text())
    assert len(set(links)) == others[bench] and all((explorer.site / link).is_file() for link in links)
