"""The provenance audit on a real warehouse built by the EEE import, through the functions and
through the CLI (a score's chain, a model by its source id and by its name, the raw store)."""

from __future__ import annotations

import copy
import hashlib
import json
import shutil
import uuid
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import typer
from clirunner import CliRunner
from eee_records import eee_record

from evalhouse.cli import audit as audit_cli
from evalhouse.cli import validate as validate_cli
from evalhouse.config import raw_store_path
from evalhouse.pipeline.import_eee import import_tree
from evalhouse.warehouse.audit import AuditError, model_report, score_chain, verify_raw
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.packs import parse_location
from evalhouse.warehouse.raw.store import RawStore, RawStoreError

runner = CliRunner()


def record_for(model_id: str, name: str, score: float, bench: str = "demo_bench") -> dict[str, Any]:
    return eee_record(model_id, {bench: score}, name=name, unit="percent", release_date="2024-05")


RECORDS = [
    record_for("org/zephyr-7b-alpha", "Zephyr 7B Alpha", 61.5),
    record_for("org/otter-13b", "Otter 13B", 55.0),
    record_for("org/otter-13b-other", "Otter 13B", 44.0, bench="other_bench"),
]


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("audit")
    tree = root / "tree"
    for rec in RECORDS:
        path = tree / "data" / "c" / "org" / rec["model_info"]["id"].split("/")[1] / f"{uuid.uuid4()}.json"
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(rec))
    db = root / "w.duckdb"
    with Warehouse.open(db) as wh:
        assert import_tree(wh, tree, RawStore(raw_store_path(db))).quarantined == 0
        # A re-import skips the unchanged files unread; a re-scrape of zephyr (only the fetch time
        # differs) is an exact duplicate with a decision.
        again = copy.deepcopy(RECORDS[0])
        again["retrieved_timestamp"] = "1760000000"
        again["evaluation_id"] = "c/org/zephyr-7b-alpha/1760000000"
        (tree / "data" / "c" / "org" / "zephyr-7b-alpha" / f"{uuid.uuid4()}.json").write_text(json.dumps(again))
        summary = import_tree(wh, tree, RawStore(raw_store_path(db)))
        assert summary.as_dict()["files_unchanged"] == len(RECORDS) and summary.runs[0].report.records_duplicate == 1
    return root


@pytest.fixture
def db(built: Path, tmp_path: Path) -> Path:
    """A private copy of the warehouse and its raw store (tests corrupt the store)."""
    shutil.copy(built / "w.duckdb", tmp_path / "w.duckdb")
    shutil.copytree(built / "w.raw", tmp_path / "w.raw")
    return tmp_path / "w.duckdb"


@pytest.fixture
def wh(db: Path) -> Iterator[Warehouse]:
    with Warehouse.open(db, read_only=True) as w:
        yield w


def cli() -> typer.Typer:
    """The root app's --db option plus the audit and validate groups (as the lead registers them)."""
    app = typer.Typer()

    @app.callback()
    def _root(ctx: typer.Context, db: str | None = typer.Option(None, "--db")) -> None:
        ctx.obj = {"db": db}

    audit_cli.register(app)
    validate_cli.register(app)
    return app


def zephyr_score(wh: Warehouse) -> int:
    return wh.scalar("SELECT score_id FROM score s JOIN evaluation e USING (evaluation_id)"
                     " WHERE e.model_source_id = 'org/zephyr-7b-alpha'")  # fmt: skip


def test_a_score_chain_reaches_the_bytes(wh: Warehouse, db: Path) -> None:
    chain = score_chain(wh.con, zephyr_score(wh), RawStore(raw_store_path(db)))
    raw = chain["raw"]
    source_file = Path(raw["url"].removeprefix("file://"))
    assert hashlib.sha256(source_file.read_bytes()).hexdigest() == raw["sha256"]
    assert raw["bytes"]["status"] == "ok" and raw["storage_path"].startswith("packs/")  # the import packs
    pack, span = raw["storage_path"].removeprefix("packs/").split("#")
    assert raw["bytes"]["path"] == str(raw_store_path(db) / "packs" / pack) + "#" + span
    assert raw["record_locator"].startswith("data/c/org/zephyr-7b-alpha/")
    assert raw["score_locator"] == f"{raw['record_locator']} / evaluation_results[0]"
    assert len(raw["fetches"]) == 1  # the unchanged file was not fetched again on re-import
    steps = chain["canonicalisation"]["steps"]
    assert "benchmark 'demo_bench' -> c.demo_bench (provisional)" in steps
    assert any("61.5 percent -> 0.615 proportion" in step for step in steps)
    assert chain["score"]["raw_value"] == 61.5 and chain["score"]["value"] == pytest.approx(0.615)
    assert chain["source"]["key"] == "eee-c"
    assert chain["attribution"]["evaluated_by"] == "independent_evaluator"
    assert chain["attribution"]["reported_by"] == "eee-c"
    assert chain["current"]["is_current"] is True
    assert chain["canonical"]["used"] is True and chain["canonical"]["value"] == pytest.approx(0.615)
    kinds = [d["kind"] for d in chain["decisions"]]
    assert "exact_duplicate" in kinds and "provisional_benchmark" in kinds
    assert [str(e["date"]) for e in chain["release_dates"]] == ["2024-05-01"]
    assert chain["release_dates"][0]["precision"] == "month"


def test_a_conflict_resolution_of_the_cell_is_listed(db: Path) -> None:
    with Warehouse.open(db) as wh:
        score_id = zephyr_score(wh)
        (cell_id,) = wh.con.execute("SELECT cell_id FROM v_cell_candidates WHERE score_id = ?", [score_id]).fetchall()[
            0
        ]
        subject = {"cell_id": cell_id}
        wh.con.execute(
            "INSERT INTO curation_decision (kind, rule, subject, detail) VALUES"
            " ('conflict_resolution', 'policy prefer-independent', ?, '{}'),"
            " ('conflict_resolution', 'policy mean', ?, '{}')",
            [json.dumps(subject), json.dumps({"cell_id": "another cell"})],
        )
        chain = score_chain(wh.con, score_id)
    rules = [d["rule"] for d in chain["decisions"] if d["kind"] == "conflict_resolution"]
    assert rules == ["policy prefer-independent"]


def test_audit_score_cli_prints_url_sha256_locator_and_steps(wh: Warehouse, db: Path) -> None:
    score_id = zephyr_score(wh)
    chain = score_chain(wh.con, score_id)
    wh.close()
    result = runner.invoke(cli(), ["--db", str(db), "audit", "score", str(score_id)])
    assert result.exit_code == 0, result.output
    for expected in (chain["raw"]["url"], chain["raw"]["sha256"], chain["raw"]["score_locator"],
                     "61.5 percent -> 0.615 proportion", "exact_duplicate", "2024-05-01"):  # fmt: skip
        assert expected in result.stdout
    as_json = runner.invoke(cli(), ["--db", str(db), "audit", "score", str(score_id), "--json"])
    assert json.loads(as_json.stdout)["raw"]["sha256"] == chain["raw"]["sha256"]
    missing = runner.invoke(cli(), ["--db", str(db), "audit", "score", "999999"])
    assert missing.exit_code == 2 and "no score with id 999999" in missing.output  # unknown id: bad input


def test_audit_model_by_source_id_and_by_name(wh: Warehouse, db: Path) -> None:
    by_id = model_report(wh.con, "org/zephyr-7b-alpha")
    assert by_id["matched_by"] == "source_model_id"
    assert [s["raw_value"] for s in by_id["scores"]] == [61.5]
    by_name = model_report(wh.con, "Otter 13B")
    assert by_name["matched_by"] == "model_name"
    assert sorted(s["benchmark_id"] for s in by_name["scores"]) == ["c.demo_bench", "c.other_bench"]
    one = model_report(wh.con, "Otter 13B", benchmark="other_bench")  # by the raw benchmark name
    assert [s["raw_value"] for s in one["scores"]] == [44.0]
    assert one["release_dates"] and one["scores"][0]["url"].startswith("file://")
    # A spelling no table holds resolves through the identity rules to the base model; an
    # instruction-tuned name is another model and does not.
    fuzzy = model_report(wh.con, "Zephyr 7B alpha (Reasoning)")
    assert fuzzy["matched_by"].startswith("identity rules") and len(fuzzy["scores"]) == 1
    with pytest.raises(AuditError, match="no model matches"):
        model_report(wh.con, "zephyr-7b-alpha-instruct")
    with pytest.raises(AuditError, match="no model matches"):
        model_report(wh.con, "no-such-model-anywhere")
    wh.close()
    result = runner.invoke(cli(), ["--db", str(db), "audit", "model", "org/otter-13b", "--benchmark", "demo_bench"])
    assert result.exit_code == 0, result.output
    assert "matched by config_id" in result.stdout and "55" in result.stdout  # a repo id is its config id
    as_json = json.loads(runner.invoke(cli(), ["--db", str(db), "audit", "model", "Otter 13B", "--json"]).stdout)
    assert len(as_json["scores"]) == 2


def test_audit_verify_detects_a_flipped_byte_in_a_packed_blob_and_a_missing_pack(db: Path) -> None:
    store = RawStore(raw_store_path(db))
    ok = runner.invoke(cli(), ["--db", str(db), "audit", "verify", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["ok"] is True
    assert json.loads(ok.stdout)["objects_checked"] == len(RECORDS) + 1  # two imports, two packs
    with Warehouse.open(db, read_only=True) as wh:
        fetched = wh.con.execute("SELECT sha256, storage_path FROM raw_snapshot ORDER BY retrieved_at").fetchall()
    (victim_sha, victim), *_, (lost_sha, lost) = fetched
    pack, offset, length = parse_location(victim)
    with open(store.root / "packs" / pack, "r+b") as fh:  # one byte inside the blob, not its header
        fh.seek(offset + length // 2)
        byte = fh.read(1)[0]
        fh.seek(offset + length // 2)
        fh.write(bytes([byte ^ 0x01]))
    result = runner.invoke(cli(), ["--db", str(db), "audit", "verify"])
    assert result.exit_code == 1
    assert f"CORRUPT {victim}" in result.stdout and "re-hashed 4 stored objects" in result.stdout
    other_pack = parse_location(lost)[0]
    assert other_pack != pack  # the re-import's one new payload went to a pack of its own
    (store.root / "packs" / other_pack).unlink()
    (store.root / "packs" / other_pack).with_suffix(".idx").unlink()
    with Warehouse.open(db, read_only=True) as wh:
        report = verify_raw(wh.con, RawStore(raw_store_path(db)))
    assert [(c["sha256"], c["path"]) for c in report.corrupt] == [(victim_sha, victim)]
    assert report.corrupt[0]["referenced_by"] == ["evaluation.raw_sha256", "raw_snapshot"]
    assert [m["sha256"] for m in report.missing] == [lost_sha]
    assert report.objects_checked == len(RECORDS) and not report.ok
    with pytest.raises(RawStoreError, match="no longer matches"):
        store.get(victim_sha)


def test_validate_cli_exits_non_zero_naming_the_failed_expectation(db: Path) -> None:
    ok = runner.invoke(cli(), ["--db", str(db), "validate", "--json"])
    assert ok.exit_code == 0, ok.output
    assert json.loads(ok.stdout)["success"] is True
    with Warehouse.open(db) as wh:
        wh.con.execute("UPDATE score_value SET value = 2.0 WHERE score_id = (SELECT min(score_id) FROM score_value)")
    bad = runner.invoke(cli(), ["--db", str(db), "validate"])
    assert bad.exit_code == 1
    assert "expectation bounds.score_value_not_above_metric_max failed" in bad.output
