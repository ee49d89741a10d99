"""Drift guards on replayed variants: each guard fails loudly in every variant, data untouched.

One warehouse gets a good night of the boards first; then each variant serves one changed
payload (at its live URL in the mirror) and refreshes that one source. A failed run must name
its guard, load nothing and leave the previous scores exactly as they were.
"""

from __future__ import annotations

import csv
import io
import json
import re
import shutil
from collections.abc import Callable, Iterator
from pathlib import Path
from urllib.parse import quote

import pytest
import yaml
from clirunner import CliRunner
from fixture_mirror import ENV, payloads, vals_page
from httpserver import Reply, serve

from evalhouse.cli import app
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.sources import (
    aider_polyglot,
    helm,
    lexam,
    livebench,
    llm_stats,
    lmarena,
    mercor_eval,
    open_llm_leaderboard,
    swallow_leaderboard,
    vectara_hallucination_leaderboard,
)
from evalhouse.pipeline import guards
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

MAX_BYTES = 400_000
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False, "max_bytes": MAX_BYTES}

HELM_SAFETY = f"{helm.STORAGE}/safety/benchmark_output/releases/v1.2.0/groups/safety_scenarios.json"
HELM_GROUPS = f"{helm.STORAGE}/safety/benchmark_output/releases/v1.2.0/groups.json"
LMARENA = f"{lmarena.MIRROR}lmarena_text.csv"
MERCOR_ROWS = f"{mercor_eval.BASE}/leaderboards?limit=500&offset=0"
LB = livebench.BASE + "table_2026_01_08.csv"  # the largest release: a sixth of the board
SCORES = llm_stats.BASE + "/v1/scores"
SWALLOW_JS = swallow_leaderboard.SITE + "swallow_leaderboard_post_en.js"
VALS_PAGE = "https://www.vals.ai/benchmarks/finance_agent"
#: source -> the URL whose payload a variant changes
PRIMARY = {
    "open-llm-leaderboard": open_llm_leaderboard.URL,
    "helm": HELM_SAFETY,
    "lmarena": LMARENA,
    "livebench": LB,
    "aider-polyglot": aider_polyglot.URL,
    "vals-ai": VALS_PAGE,
    "mercor-eval": MERCOR_ROWS,
    "vectara-hallucination-leaderboard": vectara_hallucination_leaderboard.URL,
    "llm-stats": SCORES,
    "swallow-leaderboard": SWALLOW_JS,
    "lexam": lexam.URL,
}
HTTPX = [k for k in PRIMARY if k not in ("swallow-leaderboard", "lexam")]


def _csv(body: bytes, edit: Callable[[list[list[str]]], list[list[str]]]) -> bytes:
    rows = edit(list(csv.reader(io.StringIO(body.decode()))))
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    return out.getvalue().encode()


def _json(body: bytes, edit: Callable[[object], object]) -> bytes:
    return json.dumps(edit(json.loads(body))).encode()


def _scaled(rows: list[list[str]], factor: float) -> list[list[str]]:
    return [rows[0]] + [[r[0]] + [str(float(v) * factor) for v in r[1:]] for r in rows[1:]]


def _vals(edit: Callable[[dict], dict]) -> Callable[[bytes, dict], bytes]:
    def make(_body: bytes, shared_payload: dict) -> bytes:
        view = json.loads(json.dumps(shared_payload["benchmarks"][0]))
        return vals_page(edit(view))

    return make


def _vals_models(view: dict, keep: int) -> dict:
    for task in view["tasks"].values():
        for model in list(task)[keep:]:
            task.pop(model)
    return view


def _vals_scale(view: dict) -> dict:
    for task in view["tasks"].values():
        for cell in task.values():
            cell["accuracy"] *= 10
    return view


def _scores(edit: Callable[[list], object]) -> Callable[[bytes], bytes]:
    return lambda b: _json(b, lambda d: {**d, "scores": edit(d["scores"])})


def _swallow(edit: Callable[[dict], dict]) -> Callable[[bytes], bytes]:
    def make(body: bytes) -> bytes:
        text = body.decode()
        start = text.index("{", text.index("const g_models"))
        end = text.index("const g_tasks")
        models = json.loads(text[start:end].rstrip().rstrip(";"))
        return (text[:start] + json.dumps(edit(models)) + ";\n" + text[end:]).encode()

    return make


def _bump_results(models: dict) -> dict:
    for m in list(models.values())[:3]:
        m["results"]["en_post"]["GPQA"] = 1.5
    return models


def _vectara_rows(body: bytes, keep: int) -> bytes:
    """The README with only the first ``keep`` rows of its leaderboard table."""
    head, rest = body.split(b"|----", 1)
    separator, rest = rest.split(b"\n", 1)
    rows, tail = rest.split(b"\n\n", 1)
    return head + b"|----" + separator + b"\n" + b"\n".join(rows.split(b"\n")[:keep]) + b"\n\n" + tail


def _lexam(body: bytes, pattern: str, repl: str) -> bytes:
    return re.sub(pattern, repl, body.decode(), flags=re.S).encode()


# Per guard: (source, change of its PRIMARY payload). A change taking two arguments gets the
# shared Vals payload too (its page is built, not stored).
ROW_DROP = {  # the Open LLM Leaderboard's recorded answer is one row: no shrink to make
    "helm": lambda b: _json(b, lambda tabs: [{**tabs[0], "rows": tabs[0]["rows"][:1]}, *tabs[1:]]),
    "lmarena": lambda b: _csv(b, lambda rows: rows[:5]),
    "livebench": lambda b: _csv(b, lambda rows: rows[:2]),
    "aider-polyglot": lambda b: yaml.safe_dump(yaml.safe_load(b)[:2]).encode(),
    "vals-ai": _vals(lambda v: _vals_models(v, 1)),
    "vectara-hallucination-leaderboard": lambda b: _vectara_rows(b, 5),
    "llm-stats": _scores(lambda rows: rows[:2]),
    "swallow-leaderboard": _swallow(lambda models: dict(list(models.items())[:30])),
}
EMPTY = {
    "open-llm-leaderboard": lambda b: b"[]",
    "helm": lambda b: _json(b, lambda tabs: [{**tabs[0], "rows": []}, *tabs[1:]]),
    "lmarena": lambda b: _csv(b, lambda rows: rows[:1]),
    "livebench": lambda b: _csv(b, lambda rows: rows[:1]),
    "aider-polyglot": lambda b: b"[]\n",
    "vals-ai": _vals(lambda v: {**v, "tasks": {}}),
    "mercor-eval": lambda b: _json(b, lambda d: {**d, "rows": []}),
    "vectara-hallucination-leaderboard": lambda b: _vectara_rows(b, 0),
    "llm-stats": _scores(lambda rows: []),
}
LAYOUT = {
    "open-llm-leaderboard": lambda b: _json(b, lambda rows: {"models": "see the new API"}),
    "helm": lambda b: _json(b, lambda tabs: [{**t, "title": "Accuracy (new)"} for t in tabs]),
    "lmarena": lambda b: b.replace(b"arena_score", b"score", 1),
    "livebench": lambda b: b.replace(b"model,", b"Model Name,", 1),
    "aider-polyglot": lambda b: yaml.safe_dump({"runs": yaml.safe_load(b)}).encode(),
    "vals-ai": lambda b, _p: b"<html><body><div id='app'></div><script src='/_astro/app.js'></script></body></html>",
    "mercor-eval": lambda b: _json(b, lambda d: {**d, "schemaVersion": "2.0"}),
    "vectara-hallucination-leaderboard": lambda b: b.replace(b"|Answer Rate|", b"|Response Rate|", 1),
    "llm-stats": lambda b: b'{"meta": {"count": 8}, "next": null}',
}
BOUNDS = {
    "open-llm-leaderboard": lambda b: _json(
        b,
        lambda rows: [
            {**r, "evaluations": {k: {**v, "value": v["value"] * 100} for k, v in r["evaluations"].items()}}
            for r in rows
        ],
    ),
    "helm": lambda b: _json(
        b,
        lambda tabs: [
            {
                **tabs[0],
                "rows": [[r[0]] + [{**c, "value": (c["value"] or 0) * 100} for c in r[1:]] for r in tabs[0]["rows"]],
            }
        ],
    ),
    "livebench": lambda b: _csv(b, lambda rows: _scaled(rows, 10)),
    "aider-polyglot": lambda b: yaml.safe_dump(
        [{**r, "pass_rate_2": r["pass_rate_2"] * 100} for r in yaml.safe_load(b)]
    ).encode(),
    "vals-ai": _vals(_vals_scale),
    "mercor-eval": lambda b: _json(
        b, lambda d: {**d, "rows": [{**r, "metrics": {**r["metrics"], "meanScore": 42.2}} for r in d["rows"]]}
    ),
    "vectara-hallucination-leaderboard": lambda b: re.sub(rb"\|(\d+\.\d) %\|", rb"|30\1 %|", b),
    "llm-stats": _scores(lambda rows: [{**r, "score": -0.5} for r in rows]),
    "lexam": lambda b: _lexam(b, r"<td>42\.55</td>", "<td>142.55</td>"),
}
BOT_PAGE = (
    b"<!DOCTYPE html><html><head><title>Just a moment...</title></head><body>"
    b"<div id='cf-wrapper'><script src='/cdn-cgi/challenge-platform/h/b/orchestrate/chl_page/v1'></script>"
    b"</div></body></html>"
)


@pytest.fixture(scope="module")
def good_night(board_mirror: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A warehouse (and its raw store) after a good night of every board, built once per module."""
    root = tmp_path_factory.mktemp("good-night")
    with serve(static_dir=board_mirror) as srv, Warehouse.open(root / "w.duckdb") as wh:
        first = _refresh(wh, RawStore(root / "raw"), srv, list(PRIMARY))
        assert {r.status for r in first} <= {"completed", "partial"}
    return root


@pytest.fixture
def night(good_night: Path, board_mirror: Path, shared: Path, tmp_path: Path) -> Iterator[tuple]:
    """A private copy of the good night's warehouse, the server, and the live payloads."""
    shutil.copy2(good_night / "w.duckdb", tmp_path / "w.duckdb")
    shutil.copytree(good_night / "raw", tmp_path / "raw")
    with serve(static_dir=board_mirror) as srv, Warehouse.open(tmp_path / "w.duckdb") as wh:
        store = RawStore(tmp_path / "raw")
        yield (
            wh,
            store,
            srv,
            payloads(shared),
            json.loads((shared / "formats/vals_ai/finance_agent_payload.json").read_text()),
        )


def _refresh(wh, store, srv, keys, **kw):
    client = lambda mirror: HttpClient(mirror=mirror, **FAST)  # noqa: E731
    options = R.RefreshOptions(
        mirror=f"{srv.url}/m",
        client_factory=client,
        env=ENV,
        crawl_settings={"DOWNLOAD_MAXSIZE": MAX_BYTES * 4},
        **kw,
    )
    return R.refresh(wh, store, keys, options)


def _path(url: str) -> str:
    return "/m/" + "/".join(quote(p, safe="-._~+,=@") for p in mirror_relpath(url).parts)


def _variant(night, source: str, url: str, reply: Reply) -> object:
    wh, store, srv, *_ = night
    before = wh.scalar("SELECT count(*), sum(value) FROM score WHERE source_key = ?", [source])
    before = wh.con.execute("SELECT count(*), sum(value) FROM score WHERE source_key = ?", [source]).fetchone()
    srv.route(_path(url), reply)
    try:
        (result,) = _refresh(wh, store, srv, [source])
    finally:
        srv.route(_path(url), Reply(200, night[3][url]))  # back to the good payload
    after = wh.con.execute("SELECT count(*), sum(value) FROM score WHERE source_key = ?", [source]).fetchone()
    if result.status == "failed":
        assert after == before, f"{source}: a failed run changed the data"
    return result


def _changed(night, source: str, change) -> bytes:
    body, vals = night[3][PRIMARY[source]], night[4]
    return change(body, vals) if change.__code__.co_argcount == 2 else change(body)


def _check(night, table: dict, guard: str, words: str, extra: list[tuple] = ()) -> None:
    failed = []
    cases = [(s, PRIMARY[s], c) for s, c in table.items() if c is not None] + list(extra)
    assert len(cases) >= 8
    for source, url, change in cases:
        result = _variant(
            night, source, url, Reply(200, _changed(night, source, change) if url == PRIMARY[source] else change)
        )
        guard_name = night[0].scalar("SELECT details->>'guard' FROM ingest_run WHERE run_id = ?", [result.run_id])
        if result.status == "failed" and guard_name == guard and words in result.error:
            failed.append(source)
        else:
            print(source, result.status, guard_name, result.error)
    assert len(failed) == len(cases), f"{guard}: only {failed} failed loudly"


def test_rows_dropped(night) -> None:
    _check(night, ROW_DROP, "row_drop", "rows dropped")


def test_empty_placeholder(night) -> None:
    _check(night, EMPTY, "empty_placeholder", "empty placeholder")


def test_layout_changed(night) -> None:
    _check(night, LAYOUT, "layout", "layout changed")


def test_values_outside_registry_bounds(night) -> None:
    _check(night, BOUNDS, "bounds", "values outside registry bounds")


@pytest.mark.parametrize(
    ("guard", "reply", "words"),
    [
        ("bot_check", Reply(200, BOT_PAGE, headers={"Content-Type": "text/html"}), "bot check"),
        (
            "bot_check",
            Reply(403, BOT_PAGE, headers={"Content-Type": "text/html", "cf-mitigated": "challenge"}),
            "bot check",
        ),
        ("fetch", Reply(200, b"x" * 1024, repeat=MAX_BYTES // 1024 + 8), "oversize body"),
    ],
)
def test_bot_checks_and_oversize_bodies(night, guard: str, reply: Reply, words: str) -> None:
    loud = []
    for source in HTTPX:
        result = _variant(night, source, PRIMARY[source], reply)
        name = night[0].scalar("SELECT details->>'guard' FROM ingest_run WHERE run_id = ?", [result.run_id])
        if result.status == "failed" and name == guard and words in result.error:
            loud.append(source)
    assert len(loud) == len(HTTPX) == 9


def test_redirect_loops(night) -> None:
    loud = []
    for source in HTTPX:
        path = _path(PRIMARY[source])
        result = _variant(night, source, PRIMARY[source], Reply(302, headers={"Location": path}))
        if result.status == "failed" and "redirect loop" in result.error and "too_many_redirects" in result.error:
            loud.append(source)
    assert len(loud) == len(HTTPX) == 9


def test_crawled_pages_too_large_or_looping_fail(night) -> None:
    wh = night[0]
    big = _variant(night, "lexam", lexam.URL, Reply(200, b"<html>" + b"x" * (MAX_BYTES * 5)))
    assert big.status == "failed" and "oversize body" in big.error
    loop = _variant(night, "lexam", lexam.URL, Reply(301, headers={"Location": _path(lexam.URL)}))
    assert loop.status == "failed" and "redirect loop" in loop.error
    assert wh.scalar("SELECT count(*) FROM score WHERE source_key = 'lexam'") == 6


def test_one_missing_page_of_several_is_partial_with_its_url(night) -> None:
    missing = [
        ("livebench", livebench.BASE + "categories_2024_11_25.json"),
        ("livebench", livebench.BASE + "categories_2025_04_02.json"),
        ("llm-stats", llm_stats.BASE + "/v1/models"),
        ("llm-stats", llm_stats.BASE + "/leaderboard/benchmarks"),
        ("mercor-eval", mercor_eval.BASE + "/benchmarks"),
        ("helm", HELM_GROUPS),
        ("swallow-leaderboard", swallow_leaderboard.SITE + "o3-2025-04-16.en.html"),
        ("swallow-leaderboard", swallow_leaderboard.SITE + "Qwen_Qwen3-8B.en.html"),
    ]
    partial = 0
    for source, url in missing:
        result = _variant(night, source, url, Reply(404, b"Not Found"))
        if result.status == "partial" and url in json.dumps(
            json.loads(night[0].scalar("SELECT details FROM ingest_run WHERE run_id = ?", [result.run_id]))
        ):
            partial += 1
        elif result.status == "failed":
            # a page that held more than 10% of the rows: the shrink guard still fails the run
            assert "rows dropped" in result.error or "every page" in result.error, result.error
            partial += "rows dropped" in result.error
        else:
            print(source, url, result.status, result.error)
    assert partial == len(missing)


def test_accept_drift_is_a_recorded_decision(night) -> None:
    wh, store, srv, live, _ = night
    srv.route(_path(LMARENA), Reply(200, _csv(live[LMARENA], lambda rows: rows[:3])))
    (refused,) = _refresh(wh, store, srv, ["lmarena"])
    assert refused.status == "failed" and "--accept-drift lmarena" in refused.error
    (accepted,) = _refresh(wh, store, srv, ["lmarena"], accept_drift={"lmarena"})
    assert accepted.status == "completed"
    kind, detail = wh.con.execute(
        "SELECT kind, detail FROM curation_decision WHERE run_id = ? AND kind = 'accepted_drift'", [accepted.run_id]
    ).fetchall()[0]
    # the text arena's 266 rows cut to 2, beside the vision (86) and text-to-image (19) tables
    assert kind == "accepted_drift" and json.loads(detail)["previous"] == 371 and json.loads(detail)["now"] == 107


def test_cli_accept_drift_flag(board_mirror: Path, tmp_path: Path) -> None:
    db = tmp_path / "cli.duckdb"
    with serve(static_dir=board_mirror) as srv:
        base = [
            "--db",
            str(db),
            "refresh",
            "--source",
            "aider-polyglot",
            "--mirror",
            f"{srv.url}/m",
            "--json",
            "--skip-validation",
        ]
        assert CliRunner().invoke(app, base).exit_code == 0
        body = (board_mirror / _path(aider_polyglot.URL)[1:]).read_bytes()
        srv.route(_path(aider_polyglot.URL), Reply(200, yaml.safe_dump(yaml.safe_load(body)[:1]).encode()))
        refused = CliRunner().invoke(app, base)
        assert refused.exit_code == 1 and "rows dropped 69 → 1" in refused.stdout
        unknown = CliRunner().invoke(app, [*base, "--accept-drift", "nope"])
        assert unknown.exit_code != 0
        ok = CliRunner().invoke(app, [*base, "--accept-drift", "aider-polyglot"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["runs"][0]["status"] == "completed"


def test_adding_a_guard_is_one_function() -> None:
    names = [g.__name__ for g in guards.GUARDS]
    assert names[:4] == ["bot_check", "pagination_unfinished", "fetch_faults", "unreadable"]
    assert "rows_dropped" in names

    @guard_probe
    def always(ev: guards.Evidence) -> guards.Verdict | None:
        return guards.Verdict("probe", "failed", f"probe saw {ev.records} rows")

    try:
        ev = guards.Evidence("x", [], [], None)
        assert guards.outcome(guards.evaluate(ev)).reason == "probe saw 0 rows"
    finally:
        guards.GUARDS.remove(always)


guard_probe = guards.guard


def test_an_unfetched_next_page_of_a_paginated_listing_fails_and_elsewhere_is_partial() -> None:
    page = guards.Page("https://api.example/list?page=1", b"{}", "application/json")
    gone = guards.Failure("https://api.example/list?page=2", "http_status", "HTTP 404: Not Found", 404, planned=False)
    paginated = guards.Evidence("x", [page], [gone], None, {**guards.DEFAULTS, "pagination": True})
    decisive = guards.outcome(guards.evaluate(paginated))
    assert (decisive.guard, decisive.outcome) == ("pagination", "failed")
    assert "pagination not exhausted" in decisive.reason and "list?page=2" in decisive.reason
    assert decisive.urls == ("https://api.example/list?page=2",)
    linked = guards.Evidence("x", [page], [gone], None)  # a followed link of a site, not a listing
    assert guards.outcome(guards.evaluate(linked)).outcome == "partial"
    planned = guards.Failure("https://api.example/other", "http_status", "HTTP 404", 404, planned=True)
    assert guards.pagination_unfinished(guards.Evidence("x", [page], [planned], None, {"pagination": True})) is None
