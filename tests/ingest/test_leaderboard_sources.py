"""Every leaderboard source end to end: a real local HTTP server, real scrapy crawls, the warehouse.

The mirror holds the real ../shared payloads (Swallow site, LEXam, Vals.ai, Mercor), the
recorded real payloads of the verified boards (fixture_mirror.RECORDED) and the fixtures of
tests/fixtures/<source>/; counts are taken from those files here, independently of the parsers.
Terminal-Bench replays its recorded answer to the POST of its current board.
"""

from __future__ import annotations

import csv
import io
import json
from pathlib import Path

import chompjs
import yaml
from clirunner import CliRunner
from fixture_mirror import ENV, FIXTURES, MERCOR, RECORDED, SWALLOW, VALS
from recorded import replayed

import evalhouse
from evalhouse.cli import app
from evalhouse.ingest.catalog import catalog, get_source
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.sources import swallow_leaderboard
from evalhouse.pipeline import refresh as R
from evalhouse.pipeline.boards import run_board
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

BOARDS = [
    k
    for k, m in catalog().items()
    # not cards/papers
    if k not in ("epoch-benchmarks", "artificial-analysis") and m.SOURCE.cadence != "manual"
]
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False}


def fast_client(mirror: str | None) -> HttpClient:
    return HttpClient(mirror=mirror, **FAST)


def refresh(wh: Warehouse, store: RawStore, srv, keys: list[str], **kw) -> dict:
    options = R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=fast_client, env=ENV, **kw)
    results = R.refresh(wh, store, keys, options)
    return {r.source_key: r for r in results}


def expected_rows(shared: Path) -> dict[str, int]:
    """Rows (one record each) per source, counted from the fixture files themselves."""
    f = FIXTURES
    js = [
        (shared / SWALLOW / n).read_text() for n in ("swallow_leaderboard_pre_en.js", "swallow_leaderboard_post_en.js")
    ]
    swallow = sum(len(chompjs.parse_js_object(t[t.index("g_models") :].split("=", 1)[1])) for t in js)
    lexam_html = (shared / "formats/lexam/leaderboard.html").read_text()
    lexam_labels = {
        cells.split("</td><td>")[1] for cells in lexam_html.split("<tr><td>")[1:]
    }  # the second cell of each row
    score_pages = [json.loads((f / f"llm-stats/{p}.json").read_text())["scores"] for p in ("scores", "scores_page2")]
    real = {key: replayed(key, shared) for key in RECORDED}

    def table_rows(key: str, marker: str) -> int:
        return sum(
            len(list(csv.DictReader(io.StringIO(b.decode(), newline=""))))
            for u, b in real[key].items()
            if marker in str(u)
        )

    return {
        "swallow-leaderboard": swallow,
        "lexam": len(lexam_labels),
        "open-llm-leaderboard": sum(len(json.loads(b)) for b in real["open-llm-leaderboard"].values()),
        "helm": sum(
            len(t["rows"])
            for u, b in real["helm"].items()
            if str(u).endswith("safety_scenarios.json")
            for t in json.loads(b)
            if t["title"] == "Accuracy"
        ),
        "lmarena": table_rows("lmarena", "lmarena_"),
        "livebench": table_rows("livebench", "/table_"),
        "aider-polyglot": sum(len(yaml.safe_load(b)) for b in real["aider-polyglot"].values()),
        "vals-ai": len(
            {m for t in json.loads((shared / VALS).read_text())["benchmarks"][0]["tasks"].values() for m in t}
        ),
        "mercor-eval": len(json.loads((shared / MERCOR).read_text())["leaderboards"]["rows"]),
        # the README's table lines, less its header and separator
        "vectara-hallucination-leaderboard": sum(
            sum(line.startswith(b"|") for line in b.split(b"<!-- LEADERBOARD_END -->")[0].splitlines()) - 2
            for b in real["vectara-hallucination-leaderboard"].values()
        ),
        # one record per (model, claim kind) on each scores page
        "llm-stats": sum(len({(s["model_id"], s["is_self_reported"]) for s in page}) for page in score_pages),
    }


def test_sources_json_lists_every_source_with_kind_tier_and_who_measured(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["sources", "--json"])
    assert result.exit_code == 0, result.output
    data = {s["key"]: s for s in json.loads(result.stdout)}
    assert len(data) >= 12 and set(BOARDS) <= set(data)
    assert {"leaderboard", "api"} <= {s["kind"] for s in data.values()}
    assert all(1 <= s["tier"] <= 4 and s["licence"] and s["cadence"] for s in data.values())
    assert data["llm-stats"]["required_env"] == ["EVALHOUSE_LLM_STATS_API_KEY"]
    assert data["mercor-eval"]["required_env"] == ["EVALHOUSE_MERCOR_API_KEY"]


def test_refresh_every_board_from_empty_then_unchanged(board_server, shared: Path, tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        store = RawStore(tmp_path / "raw")
        kept: dict = {}
        first = refresh(wh, store, board_server, BOARDS, boards=kept)
        # the board each run parsed, kept for the run report, is the one its stored payloads parse to
        for key, result in first.items():
            assert kept[result.run_id] == run_board(wh.con, store, get_source(key), result.run_id), key
            assert kept[result.run_id].values and not kept[result.run_id].unreadable, key
        statuses = {k: r.status for k, r in first.items()}
        assert statuses == {k: "partial" if k == "swallow-leaderboard" else "completed" for k in BOARDS}, {
            k: r.error for k, r in first.items() if r.error
        }
        # Swallow: only six of the linked model pages exist; every missing one is listed.
        swallow = first["swallow-leaderboard"]
        assert "pages missing (HTTP 404)" in swallow.error
        listed = json.loads(
            wh.scalar("SELECT details->'$.guards[0].urls' FROM ingest_run WHERE run_id = ?", [swallow.run_id])
        )
        present = {p.name for p in (shared / SWALLOW).glob("*.en.html") if not p.name.startswith("index")}
        linked = expected_rows(shared)["swallow-leaderboard"]  # every model has a page linked from an index
        assert len(listed) == linked - len(present) and f"{swallow_leaderboard.SITE}Qwen_Qwen3-0.6B.en.html" in listed
        assert not any(url.rsplit("/", 1)[1] in present for url in listed)
        # Row recall >= 99% per source: loaded records (+ duplicates) over the fixture's rows.
        expected = expected_rows(shared)
        for key, n in expected.items():
            got = wh.scalar("SELECT count(*) FROM evaluation WHERE source_key = ?", [key])
            assert got >= 0.99 * n and got <= n, (key, got, n)
            assert wh.scalar("SELECT count(*) FROM quarantine WHERE source_key = ?", [key]) == 0, key
        n_scores = wh.scalar("SELECT count(*) FROM score")
        n_raw = wh.scalar("SELECT count(*) FROM raw_snapshot")
        # Every page the crawl fetched is in the same raw store as the httpx payloads.
        crawled = wh.scalar("SELECT count(*) FROM raw_snapshot WHERE source_key = 'swallow-leaderboard'")
        assert crawled == 2 + 2 + len(present)
        second = refresh(wh, store, board_server, BOARDS)
        assert {k: r.status for k, r in second.items()} == dict.fromkeys(BOARDS, "unchanged")
        assert wh.scalar("SELECT count(*) FROM score") == n_scores
        assert wh.scalar("SELECT count(*) FROM raw_snapshot") > n_raw  # the fetches are recorded, nothing loaded


def test_who_measured_what(board_server, tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        refresh(wh, RawStore(tmp_path / "raw"), board_server, ["llm-stats", "swallow-leaderboard", "livebench"])
        rows = dict(
            wh.con.execute("SELECT source_key || ':' || evaluated_by, count(*) FROM score GROUP BY 1").fetchall()
        )
    # LLM Stats: the developers' own claims stay apart from third-party numbers.
    assert rows["llm-stats:model_developer"] == 7 and rows["llm-stats:independent_evaluator"] == 1
    # Swallow runs everything itself, and is the developer of its own Swallow models.
    assert rows["swallow-leaderboard:independent_evaluator"] > rows["swallow-leaderboard:model_developer"] > 0
    # LiveBench runs every model itself: the benchmark's creator, never the model's developer.
    assert set(k for k in rows if k.startswith("livebench:")) == {"livebench:benchmark_creator"}


def test_versions_stay_distinct(board_server, shared: Path, tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        refresh(wh, RawStore(tmp_path / "raw"), board_server, ["livebench", "open-llm-leaderboard"])
        releases = wh.con.execute(
            "SELECT DISTINCT setup_key FROM score WHERE source_key = 'livebench' ORDER BY 1"
        ).fetchall()
        tables = sorted(str(u) for u in replayed("livebench", shared) if "/table_" in str(u))
        assert [r[0] for r in releases] == [
            "benchmark_version=" + u.rsplit("table_", 1)[1].removesuffix(".csv").replace("_", "-") for u in tables
        ]
        # gpt-4o-2024-11-20 is in several releases: a typos cell per release, never one.
        listed = 0
        for url, body in replayed("livebench", shared).items():
            rows = csv.DictReader(io.StringIO(body.decode(), newline="")) if "/table_" in str(url) else []
            listed += any(r["model"] == "gpt-4o-2024-11-20" and (r.get("typos") or "").strip() for r in rows)
        cells = wh.scalar(
            "SELECT count(DISTINCT setup_key) FROM v_scores_canonical c JOIN model_config m USING (config_id)"
            " WHERE benchmark_id = 'livebench.typos' AND m.name = 'gpt-4o-2024-11-20'"
        )
        assert cells == listed and listed >= 2
        v2 = {
            r[0]
            for r in wh.con.execute(
                "SELECT DISTINCT benchmark_id FROM score WHERE source_key = 'open-llm-leaderboard'"
            ).fetchall()
        }
        assert v2 == {
            f"open_llm_leaderboard_v2.{b}" for b in ("ifeval", "bbh", "math_lvl5", "gpqa", "musr", "mmlu_pro")
        }


def test_one_base_model_through_many_sources_and_audit_shows_each(board_server, tmp_path: Path) -> None:
    # (name, developer) as each source's real payload states them; resolved through the public resolver.
    stated = {
        "helm": ("openai/gpt-4o-2024-05-13", "openai"),
        "lmarena": ("GPT-4o-2024-05-13", "OpenAI"),
        "livebench": ("gpt-4o-2024-05-13", None),
    }
    names = {s: n for s, (n, _d) in stated.items()}
    bases = {evalhouse.resolve_model(n, source=s, developer=d)["base_model"] for s, (n, d) in stated.items()}
    # Another lab's model is another base model.
    assert evalhouse.resolve_model("claude-3-5-sonnet-20240620", source="livebench")["base_model"] not in bases
    assert len(bases) == 1, bases
    (base,) = bases
    db = tmp_path / "w.duckdb"
    with Warehouse.open(db) as wh:
        refresh(wh, RawStore(tmp_path / "w.raw"), board_server, list(names))
        seen = wh.con.execute(
            "SELECT DISTINCT s.source_key FROM score s JOIN model_config m USING (config_id) WHERE m.base_model_id = ?",
            [base],
        ).fetchall()
    assert {r[0] for r in seen} == set(names)
    result = CliRunner().invoke(app, ["--db", str(db), "audit", "model", base, "--json"])
    assert result.exit_code == 0, result.output
    text = json.dumps(json.loads(result.stdout))
    for source in names:
        assert f'"{source}"' in text, source
