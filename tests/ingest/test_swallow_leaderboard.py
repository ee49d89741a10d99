"""The Swallow LLM Leaderboard on its recorded real site: the source's ``verified_on`` replay (the
built gh-pages site in ../shared, byte-exact) crawled by scrapy over loopback HTTP into a warehouse.

Cells are counted from the two JavaScript data files themselves (chompjs, not the parser): every
value under ``g_models[*].results[group][task]``.
"""

from __future__ import annotations

from pathlib import Path

import chompjs
import pytest
from httpserver import serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.recordings import Roots, replay_payloads
from evalhouse.ingest.sources import swallow_leaderboard as swallow
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "trust_env": False, "max_retries": 0}


def _models(shared: Path, name: str) -> dict:
    text = (shared / "formats/swallow-leaderboard/site" / name).read_text(encoding="utf-8")
    return chompjs.parse_js_object(text[text.index("g_models") :].split("=", 1)[1])


def cells(shared: Path) -> list[tuple[str, str, str, float]]:
    """``(model id, task group, task, value)`` of every result in the two data files."""
    return [
        (model["id"], group, task, value)
        for name in ("swallow_leaderboard_pre_en.js", "swallow_leaderboard_post_en.js")
        for model in _models(shared, name).values()
        for group, tasks in (model.get("results") or {}).items()
        for task, value in tasks.items()
    ]


@pytest.fixture(scope="module")
def night(shared: Path, tmp_path_factory: pytest.TempPathFactory):
    """One refresh of the source replaying exactly its recorded files (``verified_on.replay``)."""
    root = tmp_path_factory.mktemp("swallow")
    replay = replay_payloads(Roots(shared=shared), [swallow.SOURCE])
    assert replay.sources == ["swallow-leaderboard"], replay.missing
    build_mirror(root / "m" / "m", replay.payloads)

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, **FAST)

    with serve(static_dir=root / "m") as srv:
        wh = Warehouse.open(root / "w.duckdb")
        options = R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=client)
        (result,) = R.refresh(wh, RawStore(root / "raw"), ["swallow-leaderboard"], options)
    with wh:
        yield result, wh


def test_every_cell_of_the_recorded_site_is_accounted_for(night, shared: Path) -> None:
    result, _wh = night
    expected = cells(shared)
    assert len(expected) == 1100 + 2380  # pre-trained 50 models, post-trained 68 (the files' own counts)
    # partial, not failed: the recording holds six of the model pages the index pages link to
    assert result.status == "partial" and "pages missing (HTTP 404)" in result.error
    r = result.report
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected)
    assert r.scores_loaded >= 0.99 * len(expected), (r.scores_loaded, r.reasons)
    assert r.records_loaded + r.records_duplicate == 50 + 68


def test_spot_values_against_the_bytes(night, shared: Path) -> None:
    _result, wh = night
    rows = wh.con.execute(
        "SELECT e.model_source_id, s.benchmark_raw, s.metric_raw, s.raw_value"
        " FROM score s JOIN evaluation e USING (evaluation_id) WHERE s.source_key = 'swallow-leaderboard'"
    ).fetchall()
    got = {(m, b, v) for m, b, _metric, v in rows}
    # read off swallow_leaderboard_pre_en.js / _post_en.js (the first model of each)
    for spot in [
        ("Qwen/Qwen2.5-0.5B", "BBH", 0.299),
        ("Qwen/Qwen2.5-0.5B", "GSM8K", 0.341),
        ("Qwen/Qwen2.5-0.5B", "JCommonsenseQA", 0.369),
        ("Qwen/Qwen2.5-0.5B", "JEMHopQA", 0.389),
        ("Qwen/Qwen3-0.6B", "Swallow MT-Bench (en)", 0.468),
        ("Qwen/Qwen3-0.6B", "GPQA Diamond", 0.256),
    ]:
        assert spot in got, spot
    expected = {(m, v) for m, _g, _t, v in cells(shared)}
    assert {(m, v) for m, _b, v in got} <= expected  # nothing loaded the files do not hold
