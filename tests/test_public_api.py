"""The journeys a reader follows, driven through the Python API alone (no command line), on the real
pinned data of ../shared replayed from a mirror folder as 'make mirror && make run MIRROR=...' does.

One warehouse is built per module (the refresh and the EEE import are journeys themselves); each
test then walks one journey and checks what it returns against what can be counted independently
of the code under test: rows of the pinned CSV, files of the datastore tree, bytes of the raw
store, files a snapshot or a site wrote.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import itertools
import json
import os
import re
import shutil
from pathlib import Path

import pytest

import evalhouse
from evalhouse import House
from evalhouse.errors import InputError

REPO = Path(__file__).resolve().parents[1]
PINNED = ["epoch-benchmarks", "artificial-analysis"]
AA_CSV = Path("datasets") / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"
LEGACY_TREE = Path("datasets") / "eee-datastore-legacy"


@pytest.fixture(scope="module")
def built(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> dict:
    """The nightly refresh of the two pinned sources from a mirror folder, then an EEE tree imported."""
    root = tmp_path_factory.mktemp("api")
    mirror = root / "mirror"
    written = evalhouse.mirror_from_shared(mirror, shared=shared)
    house = House.open(root / "w.duckdb")
    night = house.refresh(PINNED, mirror=str(mirror))
    imported = house.import_eee(shared / LEGACY_TREE)
    return {"root": root, "house": house, "mirror": mirror, "written": written, "night": night, "imported": imported}


@pytest.fixture(scope="module")
def snapshot(built: dict):
    return built["house"].create_snapshot(built["root"] / "snap", name="api")


def test_the_nightly_refresh_from_a_mirror(built: dict, shared: Path) -> None:
    house, night = built["house"], built["night"]
    assert night.ok and set(night.statuses()) == set(PINNED)
    assert set(night.statuses().values()) <= {"completed", "partial"}
    with (shared / AA_CSV).open(newline="", encoding="utf-8") as f:
        aa_rows = sum(1 for _ in csv.DictReader(f))
    aa = next(r for r in night if r.source_key == "artificial-analysis")
    counts = aa.counts
    assert counts["loaded"] + counts["quarantined"] + counts["duplicate"] == aa_rows
    # the run report is written beside the warehouse, and is what the result carries
    assert json.loads(night.report_path.read_text()) == json.loads(json.dumps(night.report, default=str))
    assert house.last_report() == json.loads(night.report_path.read_text())
    assert night.as_dict()["report"] == str(night.report_path)
    # the mirror holds what mirror_from_shared said it wrote
    assert all(Path(f).is_file() for f in built["written"].values())
    # a second night of the same bytes loads nothing
    again = house.refresh(PINNED, mirror=str(built["mirror"]))
    assert set(again.statuses().values()) == {"unchanged"}


def test_the_source_catalog(shared: Path) -> None:
    specs = evalhouse.sources()
    keys = [s.key for s in specs]
    assert len(keys) == len(set(keys)) and set(PINNED) <= set(keys)
    verified = [s.as_dict()["verified_on"] for s in specs if s.as_dict()["verified_on"] != "unverified"]
    assert verified and len(verified) < len(specs)  # some are left out of the nightly set
    # what each verified source names as its recorded real bytes exists
    where = {"shared": shared, "fixtures": REPO / "tests" / "fixtures"}
    named = [f.split(":", 1) for v in verified for f in v["files"]]
    missing = [f"{kind}:{rel}" for kind, rel in named if not (where[kind] / rel).exists()]
    assert named and not missing, missing


def test_stats(built: dict) -> None:
    house = built["house"]
    stats = house.stats()
    counted = house.sql("SELECT count(*) AS n FROM score_value").rows[0][0]
    assert stats["scores"] == counted > 0
    sources = {row["source"] for row in stats["by_source"]}
    assert set(PINNED) <= sources
    assert stats.as_dict() == dict(stats)
    # the cells where two sources meet, counted from the candidates themselves
    met = house.sql(
        "SELECT list_sort(list(DISTINCT source_key)) FROM v_score_current GROUP BY config_id, benchmark_id,"
        " coalesce(subset, ''), metric_id, metric_params_key, setup_key HAVING count(DISTINCT source_key) > 1"
    ).rows
    assert stats["cells_with_several_sources"] == len(met) > 0
    counted_pairs: dict[tuple[str, ...], int] = {}
    for (sources,) in met:
        for pair in itertools.combinations(sources, 2):
            counted_pairs[pair] = counted_pairs.get(pair, 0) + 1
    pairs = {tuple(p["sources"]): p["cells"] for p in stats["source_pairs"]}
    assert pairs == counted_pairs and tuple(sorted(PINNED)) in pairs  # AA and Epoch meet on the pinned data


def test_import_an_eee_tree(built: dict, shared: Path) -> None:
    summary = built["imported"].as_dict()
    files = list((shared / LEGACY_TREE / "data").rglob("*.json"))
    assert summary["records_loaded"] + summary["duplicates"] == len(files)  # no file refused whole
    refused = built["house"].sql("SELECT count(*) FROM quarantine WHERE source_key LIKE 'eee-%'").rows[0][0]
    assert summary["quarantined"] == refused  # results refused, each a quarantine row with its reason
    assert summary["collections"] == len({f.relative_to(shared / LEGACY_TREE / "data").parts[0] for f in files})
    # importing the same tree again reads nothing: every file's bytes were loaded before
    again = built["house"].import_eee(shared / LEGACY_TREE).as_dict()
    assert again["records_loaded"] == 0 and again["files_unchanged"] == len(files)


def test_audit_a_score_and_a_model(built: dict) -> None:
    house = built["house"]
    (score_id, config_id), *_ = house.sql(
        "SELECT score_id, config_id FROM score_value s JOIN evaluation e USING (evaluation_id)"
        " WHERE e.source_key = 'artificial-analysis' ORDER BY score_id LIMIT 1"
    ).rows
    chain = house.audit_score(score_id)
    assert chain["score"]["score_id"] == score_id
    raw = chain["raw"]
    assert raw["bytes"]["status"] == "ok"
    stored = house.raw_store_path / raw["storage_path"]
    assert hashlib.sha256(stored.read_bytes()).hexdigest() == raw["sha256"]  # the bytes it was parsed from
    model = house.audit_model(config_id)
    assert score_id in {s["score_id"] for s in model["scores"]}
    assert {c["config_id"] for c in model["configs"]} >= {config_id}
    assert house.verify_raw().ok


def test_conflicts(built: dict) -> None:
    found = built["house"].conflicts(limit=5)
    assert found["cells_with_candidates"] > 0 and 0 < found["shown"] <= 5
    for cell in found["cells"]:
        assert len(cell["candidates"]) >= 2
        assert sum(c["used"] for c in cell["candidates"]) >= 1
    disagreeing = built["house"].conflicts(disagreeing=True, limit=1000)
    assert all(cell["disagreement"] for cell in disagreeing["cells"])
    # who else measured a model on a benchmark (the README's question), with the near misses
    gpt4o = built["house"].conflicts(model="GPT-4o", benchmark="GPQA Diamond")
    cell = next(c for c in gpt4o["cells"] if c["benchmark_id"] == "gpqa_diamond")
    assert sorted(cell["candidate_sources"]) == sorted(PINNED) and cell["n_used"] >= 1
    assert sum(c["used"] for c in cell["candidates"]) == cell["n_used"]
    assert "openai/gpt-4o" in gpt4o["near_misses"]["base_models"]


def test_changes(built: dict) -> None:
    house = built["house"]
    first, *later = built["night"].runs  # the window opens after the run named
    since_first = house.changes(since=first.run_id)
    runs = {r["run_id"] for block in since_first["sources"] for r in block["runs"]}
    assert {r.run_id for r in later} <= runs and first.run_id not in runs
    assert since_first["since"]["run_id"] == first.run_id
    with pytest.raises(InputError):
        house.changes(since="not a run and not a date")


def test_snapshot_create_verify_open_and_sql(built: dict, snapshot, tmp_path: Path) -> None:
    house = built["house"]
    files = [p for p in snapshot.path.rglob("*") if p.is_file()]
    assert len(files) == len(snapshot.manifest["files"]) + 1  # and the manifest
    report = house.verify_snapshot(snapshot.path, expect_id=snapshot.snapshot_id[:8])
    assert report.ok and report.snapshot_id == snapshot.snapshot_id
    con = evalhouse.open_snapshot(snapshot.path, expect_id=snapshot.snapshot_id)
    try:
        frozen_scores = con.execute("SELECT count(*) FROM score_value").fetchone()[0]
    finally:
        con.close()
    live = house.sql("SELECT count(*) FROM score_value").rows[0][0]
    on_snapshot = house.sql("SELECT count(*) FROM score_value", snapshot=snapshot.path)
    assert frozen_scores == live == on_snapshot.rows[0][0]
    assert house.describe_snapshot(snapshot.path)["rows"]["score_value"] == live
    with pytest.raises(InputError):
        house.sql("DELETE FROM score_value")
    # a changed byte is named
    copy = tmp_path / "copy"
    shutil.copytree(snapshot.path, copy)
    target = next(p for p in copy.rglob("*.parquet"))
    target.write_bytes(target.read_bytes() + b"\0")
    broken = evalhouse.verify_snapshot(copy)
    assert not broken.ok and any(str(target.relative_to(copy)) in p for p in broken.problems())
    assert evalhouse.diff_snapshots(snapshot.path, snapshot.path).subset_holds


def test_export_eee(built: dict, tmp_path: Path) -> None:
    house = built["house"]
    summary = house.export_eee(tmp_path / "export")
    records = list((tmp_path / "export" / "data").rglob("*.json"))
    assert summary.written == len(records) > 0 and not summary.failed
    # what was written imports into a new warehouse whole
    fresh = House.open(tmp_path / "fresh.duckdb").import_eee(tmp_path / "export").as_dict()
    assert fresh["records_loaded"] + fresh["duplicates"] == summary.written and fresh["quarantined"] == 0


def test_an_analysis_fit_on_a_snapshot(built: dict, snapshot) -> None:
    con = evalhouse.open_snapshot(snapshot.path)
    try:
        matrix = evalhouse.snapshot_frame(
            con,
            "PIVOT (SELECT config_id, benchmark_id, value FROM v_matrix_long WHERE config_id IN"
            " (SELECT config_id FROM v_score_current WHERE source_key = 'artificial-analysis'))"
            " ON benchmark_id USING first(value)",
        )
    finally:
        con.close()
    assert matrix.attrs["snapshot_id"] == snapshot.snapshot_id
    wide = matrix.set_index("config_id").dropna(axis=1, thresh=300).dropna()
    efa = evalhouse.EFA(n_factors=2).fit(wide)
    assert efa.loadings_.shape == (wide.shape[1], 2)
    # a recorded run of the analyses is pinned to the snapshot it read
    outcome = built["house"].analyses.equate_hub(snapshot=snapshot.path)
    assert outcome.payload["snapshot_id"] == snapshot.snapshot_id
    stored = built["house"].sql(f"SELECT snapshot_id FROM analysis_run WHERE analysis_id = '{outcome.analysis_id}'")
    assert stored.rows == [(snapshot.snapshot_id,)]


def test_site(real_warehouse: Path, tmp_path: Path) -> None:
    """A site of a snapshot of the pinned night (the session's refresh from a mirror: the site of the
    legacy tree's 2,400 models is the explorer's, built by the CLI in tests/site)."""
    from realwarehouse import copy_warehouse

    house = House.open(copy_warehouse(real_warehouse, tmp_path / "db"))
    snapshot = house.create_snapshot(tmp_path / "snap", name="api")
    built_site = house.site(tmp_path / "site", snapshot=snapshot.path, analyses=False)
    assert built_site.snapshot_id == snapshot.snapshot_id and built_site.frozen is None
    index = tmp_path / "site" / "index.html"
    assert snapshot.snapshot_id[:12] in index.read_text(encoding="utf-8")
    pages = [p for p in (tmp_path / "site").rglob("*.html") if "data-docs" not in p.parts]
    assert sum(built_site.pages.values()) == len(pages)
    n_models = house.sql("SELECT count(DISTINCT base_model_id) FROM base_model", snapshot=snapshot.path).rows[0][0]
    assert 0 < built_site.pages["model"] <= n_models


def test_the_public_names_are_importable_from_one_place() -> None:
    for name in ("House", "HttpSettings", "connect", "open_snapshot", "snapshot_frame", "refresh", "import_eee",
                 "resolve_model", "verify_snapshot", "diff_snapshots", "mirror_from_shared", "sources",
                 "EFA", "ParallelAnalysis", "Omega", "PredictionLadder", "CharacteristicCurveEquating",
                 "BalanceOfBenchmarks"):  # fmt: skip
        assert callable(getattr(evalhouse, name)), name
    assert set(evalhouse.__all__) >= {"House", "connect", "EFA", "BalanceOfBenchmarks", "analyses"}
    assert callable(evalhouse.analyses.factor_grid)
    assert evalhouse.resolve_model("Qwen2.5-72B-Instruct")["base_model"] == "qwen/qwen-2.5-72b-instruct"


def _python_blocks(doc: Path) -> list[str]:
    return re.findall(r"```python\n(.*?)```", doc.read_text(encoding="utf-8"), re.S)


def _run_in(folder: Path, code: str, name: str) -> list[str]:
    """Run a documented block as it is written, in ``folder``; the lines it printed."""
    printed = io.StringIO()
    cwd = Path.cwd()
    os.chdir(folder)
    try:
        with contextlib.redirect_stdout(printed):
            exec(compile(code, name, "exec"), {})
    finally:
        os.chdir(cwd)
    return printed.getvalue().splitlines()


def test_the_readme_python_block_runs_and_prints_what_it_says(built: dict, snapshot, tmp_path: Path) -> None:
    """The README's tour ends in Python: the same journeys on the warehouse and a snapshot of it."""
    (code,) = _python_blocks(REPO / "README.md")
    (tmp_path / "warehouse.duckdb").symlink_to(built["house"].path)
    (tmp_path / "snapshots").mkdir()
    for dated in re.findall(r'open_snapshot\("snapshots/([^"]+)"\)', code):
        (tmp_path / "snapshots" / dated).symlink_to(snapshot.path)
    lines = _run_in(tmp_path, code, "README.md")
    canonical = built["house"].sql("SELECT count(*) FROM v_scores_canonical").rows[0][0]
    assert lines[0] == f"({canonical},)"
    # a print whose comment says what it prints prints that
    said = [c.strip() for c in re.findall(r"^print\(.*\)\s*#(.*)$", code, re.M)]
    assert said and lines[-len(said) :] == said


def test_the_python_api_notebook_session_runs_as_written(built: dict, shared: Path, tmp_path: Path) -> None:
    """docs/python-api.md's notebook session, run verbatim (../shared pointed at the pinned data,
    build/mirror at the replay mirror) in a scratch folder."""
    code = _python_blocks(REPO / "docs" / "python-api.md")[0].replace("../shared", str(shared))
    (tmp_path / "build").mkdir()
    (tmp_path / "build" / "mirror").symlink_to(built["mirror"])
    lines = _run_in(tmp_path, code, "docs/python-api.md")
    assert eval(lines[0]) == built["night"].statuses()  # the same bytes load the same way
    assert lines[1] == f"{built['imported'].as_dict()['records_loaded']} records"
    top = eval(lines[2])
    assert len(top) == 3 and all(0 < v <= 1 for _, v in top)
    assert lines[3] == "qwen/qwen-2.5-72b-instruct"
    rows, cols = eval(lines[4])
    assert cols == 2 and rows >= 5
