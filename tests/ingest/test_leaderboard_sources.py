"""Every leaderboard source end to end: a real local HTTP server, real scrapy crawls, the warehouse.

The mirror holds the real ../shared payloads (Swallow site, LEXam, Vals.ai, Mercor, Vectara)
and the authored fixtures of tests/fixtures/<source>/; counts are taken from those files here,
independently of the parsers.
"""

from __future__ import annotations

import csv
import json
from pathlib import Path

import chompjs
import yaml
from fixture_mirror import ENV, FIXTURES, MERCOR, SWALLOW, VALS, VECTARA
from typer.testing import CliRunner

import evalhouse
from evalhouse.cli import app
from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.sources import swallow_leaderboard
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw_store import RawStore

BOARDS = [
    k
    for k, m in catalog().items()
    if k not in ("epoch-benchmarks", "artificial-analysis") and m.SOURCE.cadence != "manual"  # not cards/papers
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
    helm = sum(len(json.loads(p.read_text())[0]["rows"]) for p in (f / "helm").glob("*_core_scenarios.json"))
    livebench = sum(len(list(csv.DictReader(p.open()))) for p in (f / "livebench").glob("table_*.csv"))
    score_pages = [json.loads((f / f"llm-stats/{p}.json").read_text())["scores"] for p in ("scores", "scores_page2")]
    return {
        "swallow-leaderboard": swallow,
        "lexam": len(lexam_labels),
        "open-llm-leaderboard": len(json.loads((f / "open-llm-leaderboard/formatted.json").read_text())),
        "helm": helm,
        "lmarena": len(list(csv.DictReader((f / "lmarena/leaderboard_table_text.csv").open()))),
        "livebench": livebench,
        "terminal-bench": sum(len(json.loads(p.read_text())["rows"]) for p in (f / "terminal-bench").glob("*.json")),
        "aider-polyglot": len(yaml.safe_load((f / "aider-polyglot/polyglot_leaderboard.yml").read_text())),
        "vals-ai": len(
            {m for t in json.loads((shared / VALS).read_text())["benchmarks"][0]["tasks"].values() for m in t}
        ),
        "mercor-eval": len(json.loads((shared / MERCOR).read_text())["leaderboards"]["rows"]),
        "vectara-hallucination-leaderboard": len(json.loads((shared / VECTARA).read_text())),
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
        first = refresh(wh, store, board_server, BOARDS)
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
        refresh(wh, RawStore(tmp_path / "raw"), board_server, ["llm-stats", "swallow-leaderboard", "terminal-bench"])
        rows = dict(
            wh.con.execute("SELECT source_key || ':' || evaluated_by, count(*) FROM score GROUP BY 1").fetchall()
        )
    # LLM Stats: the developers' own claims stay apart from third-party numbers.
    assert rows["llm-stats:model_developer"] == 7 and rows["llm-stats:independent_evaluator"] == 1
    # Swallow runs everything itself, and is the developer of its own Swallow models.
    assert rows["swallow-leaderboard:independent_evaluator"] > rows["swallow-leaderboard:model_developer"] > 0
    # Terminal-Bench: a lab's own agent on its own model is a first-party number.
    assert rows["terminal-bench:model_developer"] == 2 and rows["terminal-bench:community"] == 7


def test_versions_stay_distinct(board_server, tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        refresh(wh, RawStore(tmp_path / "raw"), board_server, ["terminal-bench", "livebench", "open-llm-leaderboard"])
        tbench = dict(
            wh.con.execute(
                "SELECT benchmark_id, count(*) FROM score WHERE source_key = 'terminal-bench' GROUP BY 1"
            ).fetchall()
        )
        assert tbench == {"terminal_bench_v2": 6, "terminal_bench_v3": 3}
        releases = wh.con.execute(
            "SELECT DISTINCT setup_key FROM score WHERE source_key = 'livebench' ORDER BY 1"
        ).fetchall()
        assert [r[0] for r in releases] == ["benchmark_version=2024-11-25", "benchmark_version=2025-04-02"]
        # gpt-4o-2024-11-20 is in both releases: two cells per task, never one.
        cells = wh.scalar(
            "SELECT count(DISTINCT setup_key) FROM v_scores_canonical c JOIN model_config m USING (config_id)"
            " WHERE benchmark_id = 'livebench.typos' AND m.name = 'gpt-4o-2024-11-20'"
        )
        assert cells == 2
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
    # (name, developer) as each source states them; resolved through the public resolver.
    stated = {
        "open-llm-leaderboard": ("Qwen/Qwen2.5-72B-Instruct", "Qwen"),
        "helm": ("qwen/qwen2.5-72b-instruct", "qwen"),
        "lmarena": ("qwen2.5-72b-instruct", "Alibaba"),
        "livebench": ("qwen2.5-72b-instruct", None),
        "aider-polyglot": ("Qwen2.5-72B-Instruct", None),
        "llm-stats": ("Qwen2.5 72B Instruct", "qwen"),
    }
    names = {s: n for s, (n, _d) in stated.items()}
    bases = {evalhouse.resolve_model(n, source=s, developer=d)["base_model"] for s, (n, d) in stated.items()}
    # The pre-trained base is a different model from its instruct tune (Swallow lists both).
    assert evalhouse.resolve_model("Qwen/Qwen2.5-72B", source="swallow-leaderboard")["base_model"] not in bases
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
    report = json.loads(result.stdout)
    text = json.dumps(report)
    # Open LLM Leaderboard rows are per precision: the same base model, its own configuration
    # ("...|precision=bfloat16"), which the audit lists under that configuration id.
    by_config = [s for s in names if s != "open-llm-leaderboard"]
    for source in by_config:
        assert f'"{source}"' in text, source
    precision = CliRunner().invoke(app, ["--db", str(db), "audit", "model", f"{base}|precision=bfloat16", "--json"])
    assert precision.exit_code == 0 and '"open-llm-leaderboard"' in precision.stdout
