"""EEE datastore import and export against a real DuckDB file and the real raw store."""

from __future__ import annotations

import copy
import errno
import json
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest
from eee_records import eee_record, write_file

from evalhouse.pipeline.import_eee import import_tree
from evalhouse.schema.fingerprint import normalized_hash
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.eee_export import export_tree
from evalhouse.warehouse.memory_budget import LOAD_BUDGET_BYTES
from evalhouse.warehouse.raw.packs import PackWriter
from evalhouse.warehouse.raw.store import RawStore

DEMO_DIR = "formats/eee/demo-source"
HOSTILE = "'; DROP TABLE score; --"


def record_for(model_id: str, score: float = 0.5, bench: str = "demo_bench") -> dict:
    return eee_record(model_id, {bench: score})


write = write_file


@pytest.fixture
def wh(tmp_path: Path):
    with Warehouse.open(tmp_path / "w.duckdb") as w:
        yield w


@pytest.fixture
def store(tmp_path: Path) -> RawStore:
    return RawStore(tmp_path / "raw")


def fingerprints(wh: Warehouse) -> set[str]:
    return {
        json.loads(r[0]) and normalized_hash(json.loads(r[0]))
        for r in wh.con.execute("SELECT record FROM evaluation").fetchall()
    }


def test_demo_tree_imports_with_samples_and_raw_bytes(
    shared: Path, wh: Warehouse, store: RawStore, tmp_path: Path
) -> None:
    tree = tmp_path / "tree" / "data"
    shutil.copytree(shared / DEMO_DIR, tree / "demo-source")
    summary = import_tree(wh, tmp_path / "tree", store)
    assert summary.quarantined == 0 and summary.runs[0].status == "completed"
    row = wh.con.execute("SELECT evaluation_id, datastore_path, raw_sha256, samples_sha256 FROM evaluation").fetchone()
    assert row[0] == "demo-source/demo-org_demo-model/1750000000"
    assert row[1].startswith("data/demo-source/demo-org/demo-model/f3a1c0de")
    assert (
        store.get(row[2])
        == (tree / "demo-source/demo-org/demo-model/f3a1c0de-4b2e-4c1a-9f6d-1b7e5a2c8d40.json").read_bytes()
    )
    assert store.get(row[3]).count(b"\n") >= 1
    score = wh.con.execute("SELECT benchmark_id, metric_id, raw_value, value, unit FROM score").fetchone()
    assert score == ("demo_source.demo_bench", "accuracy", 0.75, 0.75, "proportion")
    assert wh.scalar("SELECT count(*) FROM curation_decision WHERE kind = 'provisional_benchmark'") == 1


def test_round_trip_import_export_import_keeps_fingerprints(shared: Path, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    shutil.copytree(shared / DEMO_DIR, tree / "data" / "demo-source")
    for i in range(3):
        write(
            tree,
            f"coll-b/org/model-{i}/{uuid.uuid4()}.json",
            record_for(f"org/model-{i}", 0.1 * (i + 1)),
        )
    with Warehouse.open(tmp_path / "a.duckdb") as a:
        import_tree(a, tree, RawStore(tmp_path / "raw-a"))
        first = fingerprints(a)
        export_tree(a, tmp_path / "out", RawStore(tmp_path / "raw-a"))
    with Warehouse.open(tmp_path / "b.duckdb") as b:
        summary = import_tree(b, tmp_path / "out", RawStore(tmp_path / "raw-b"))
        assert summary.quarantined == 0
        assert fingerprints(b) == first and len(first) == 4
    # Exporting the same warehouse twice writes the same bytes.
    with Warehouse.open(tmp_path / "a.duckdb") as a:
        export_tree(a, tmp_path / "out2", RawStore(tmp_path / "raw-a"))
    files = sorted(p.relative_to(tmp_path / "out") for p in (tmp_path / "out").rglob("*") if p.is_file())
    assert files == sorted(p.relative_to(tmp_path / "out2") for p in (tmp_path / "out2").rglob("*") if p.is_file())
    for rel in files:
        assert (tmp_path / "out" / rel).read_bytes() == (tmp_path / "out2" / rel).read_bytes()


def test_reimport_adds_nothing_and_logs_each_duplicate(
    shared: Path, wh: Warehouse, store: RawStore, tmp_path: Path
) -> None:
    tree = tmp_path / "tree"
    write(tree, f"c/org/m/{uuid.uuid4()}.json", record_for("org/m"))
    import_tree(wh, tree, store)
    again = copy.deepcopy(record_for("org/m"))
    again["retrieved_timestamp"] = "1760000000"  # a re-scrape: only the fetch time changed
    again["evaluation_id"] = "c/org/m/1760000000"
    write(tree, f"c/org/m/{uuid.uuid4()}.json", again)
    summary = import_tree(wh, tree, store)
    assert wh.scalar("SELECT count(*) FROM evaluation") == 1
    assert wh.scalar("SELECT count(*) FROM score") == 1
    # The first file's bytes were loaded before: skipped unread. The re-scrape is a duplicate.
    assert summary.as_dict()["files_unchanged"] == 1
    assert summary.runs[0].report.records_duplicate == 1
    assert wh.scalar("SELECT count(*) FROM curation_decision WHERE kind = 'exact_duplicate'") == 1


def test_bad_files_are_quarantined_and_the_rest_load(
    wh: Warehouse, store: RawStore, tmp_path: Path, shared: Path
) -> None:
    tree = tmp_path / "tree"
    good = write(tree, f"c/org/good/{uuid.uuid4()}.json", record_for("org/good"))
    write(tree, f"c/org/notjson/{uuid.uuid4()}.json", "this is not json {")
    write(tree, f"c/org/empty/{uuid.uuid4()}.json", b"")
    legacy = json.loads((shared / "formats/eee/example_aggregate.json").read_text())
    write(tree, f"c/org/legacy/{uuid.uuid4()}.json", legacy)
    write(
        tree,
        f"c/org/nan/{uuid.uuid4()}.json",
        json.dumps(record_for("org/nan")).replace('"score": 0.5', '"score": NaN'),
    )
    invalid = record_for("org/invalid")
    del invalid["eval_library"]
    write(tree, f"c/org/invalid/{uuid.uuid4()}.json", invalid)
    hostile = write(tree, f"c/org/hostile/{uuid.uuid4()}.json", record_for(HOSTILE, 0.25))

    summary = import_tree(wh, tree, store)
    run = summary.runs[0]
    assert run.status == "partial"
    # the 0.2.0 record is migrated, not refused; the other five are quarantined
    assert run.report.records_loaded == 3 and run.report.records_migrated == 1 and summary.quarantined == 4
    rows = wh.con.execute("SELECT locator, reason, raw_sha256 FROM quarantine ORDER BY locator").fetchall()
    by_dir = {loc.split("/")[3]: reason for loc, reason, _ in rows}
    assert "not readable as JSON" in by_dir["notjson"]
    assert "empty file" in by_dir["empty"]
    assert "legacy" not in by_dir
    assert wh.scalar("SELECT migrated_from FROM evaluation WHERE migrated_from IS NOT NULL") == "0.2.0"
    assert "NaN" in by_dir["nan"]
    assert "eval_library" in by_dir["invalid"]
    assert all(sha for *_, sha in rows), "every quarantined file names the raw bytes it came from"
    # the hostile id is stored verbatim and the score table is intact
    assert wh.scalar("SELECT model_source_id FROM evaluation WHERE model_name = ?", [HOSTILE]) == HOSTILE
    legacy_scores = wh.scalar(
        "SELECT count(*) FROM score JOIN evaluation USING (evaluation_id) WHERE migrated_from IS NOT NULL"
    )
    assert legacy_scores == len(legacy["evaluation_results"])
    assert wh.scalar("SELECT count(*) FROM score") == 2 + legacy_scores
    assert (
        store.get(wh.scalar("SELECT raw_sha256 FROM evaluation WHERE model_source_id = ?", [HOSTILE]))
        == hostile.read_bytes()
    )
    assert good.exists()


def test_impossible_values_are_quarantined_not_clamped(wh: Warehouse, store: RawStore, tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    rec = record_for("org/m")
    rec["evaluation_results"][0]["metric_config"]["max_score"] = 2.0  # the record's own bounds allow it
    rec["evaluation_results"][0]["score_details"]["score"] = 1.7
    write(tree, f"c/org/m/{uuid.uuid4()}.json", rec)
    import_tree(wh, tree, store)
    assert wh.scalar("SELECT count(*) FROM score") == 0
    reason = wh.scalar("SELECT reason FROM quarantine WHERE stage = 'canonicalise'")
    assert "impossible value" in reason and "1.7" in reason


def test_cli_import_exits_nonzero_and_counts_quarantined(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    write(tree, f"c/org/good/{uuid.uuid4()}.json", record_for("org/good"))
    write(tree, f"c/org/bad/{uuid.uuid4()}.json", "{")
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "evalhouse",
            "--db",
            str(tmp_path / "w.duckdb"),
            "import-eee",
            str(tree),
            "--json",
        ],
        check=False,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert proc.returncode == 1
    out = json.loads(proc.stdout)
    assert out["records_loaded"] == 1 and out["quarantined"] == 1
    assert "1 item(s) quarantined" in proc.stderr


@pytest.mark.conformance
def test_exported_tree_passes_the_eee_validator(shared: Path, tmp_path: Path) -> None:
    pytest.importorskip("every_eval_ever", reason="the every-eval-ever test extra is not installed")
    tree = tmp_path / "tree"
    shutil.copytree(shared / DEMO_DIR, tree / "data" / "demo-source")
    for i in range(2):
        write(tree, f"coll-b/org/model-{i}/{uuid.uuid4()}.json", record_for(f"org/model-{i}"))
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        import_tree(wh, tree, RawStore(tmp_path / "raw"))
        export_tree(wh, tmp_path / "out", RawStore(tmp_path / "raw"))
    files = [str(p) for p in (tmp_path / "out").rglob("*") if p.is_file()]
    proc = subprocess.run(
        [sys.executable, "-m", "every_eval_ever", "validate", *files],
        check=False,
        capture_output=True,
        text=True,
        timeout=300,
        cwd=tmp_path / "out",
    )
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]


def test_a_raw_store_write_failure_fails_the_run_and_no_fetch_row_names_missing_bytes(
    wh: Warehouse, store: RawStore, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The import writes its payloads to a pack; a blob it cannot write (the disk is full) fails
    its collection's run, rolled back, and the failed run records only fetches whose bytes are stored."""
    tree = tmp_path / "tree"
    for i in range(6):
        write(tree, f"c/org/m{i}/{uuid.uuid4()}.json", record_for(f"org/m{i}"))
    store.pack_buffer = 0  # every blob is handed to the OS as it is put: the 4th write is the 4th blob
    write_out = PackWriter._write_out
    calls = []

    def full_disk(self: PackWriter, data: bytes) -> None:
        calls.append(next(reversed(self.blobs)))  # the blob this write carries
        if len(calls) == 4:
            raise OSError(errno.ENOSPC, "No space left on device")
        write_out(self, data)

    monkeypatch.setattr(PackWriter, "_write_out", full_disk)
    summary = import_tree(wh, tree, store)
    (run,) = summary.runs
    assert run.status == "failed" and "cannot write to the raw store" in (run.error or "")
    assert "No space left on device" in (run.error or "")
    assert wh.scalar("SELECT count(*) FROM evaluation") == 0  # rolled back
    fetched = dict(wh.con.execute("SELECT sha256, storage_path FROM raw_snapshot").fetchall())
    assert sorted(fetched) == sorted(calls[:3])  # the blobs written before the disk filled, and no other
    for sha, path in fetched.items():
        assert path.startswith("packs/") and store.find(sha).storage_path == path and store.get(sha)
    assert RawStore(store.root).find(calls[3]) is None  # the payload that was not written is not claimed
    assert RawStore(store.root).verify().damaged == []  # the pack was cut back to its last whole blob and sealed


def test_the_import_packs_its_payloads_and_an_unchanged_tree_adds_no_pack(
    wh: Warehouse, store: RawStore, tmp_path: Path
) -> None:
    """Each collection's new payloads go to one pack (sealed: indexed) and the manifest names them
    there; an unchanged re-import skips every file before storing anything, so it writes no pack."""
    tree = tmp_path / "tree"
    for collection in ("c1", "c2"):
        for i in range(3):
            write(tree, f"{collection}/org/m{i}/{uuid.uuid4()}.json", record_for(f"org/m{i}-{collection}"))
    import_tree(wh, tree, store)
    packs = sorted((store.root / "packs").glob("*.pack"))
    assert len(packs) == 2 and all(p.with_suffix(".idx").is_file() for p in packs)
    fetched = wh.con.execute("SELECT sha256, storage_path FROM raw_snapshot").fetchall()
    assert len(fetched) == 6 and not list(store.root.glob("??/*"))
    assert all(RawStore(store.root).find(sha).storage_path == path for sha, path in fetched)
    manifest = [json.loads(line)["storage_path"] for line in store.manifest_path.read_text().splitlines()]
    assert sorted(manifest) == sorted(path for _, path in fetched)
    again = import_tree(wh, tree, RawStore(store.root))
    assert {r.status for r in again.runs} == {"unchanged"}
    assert sorted((store.root / "packs").glob("*.pack")) == packs
    assert len(store.manifest_path.read_text().splitlines()) == 6


@pytest.mark.parametrize(("value", "budget"), [(None, LOAD_BUDGET_BYTES), ("64MB", 64 * 10**6), ("off", None)])
def test_each_collection_loads_within_the_budget_the_environment_sets(
    value: str | None, budget: int | None, wh: Warehouse, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """$EVALHOUSE_LOAD_BUDGET reaches every collection's load ('off': none); the rows are the same."""
    from evalhouse.warehouse.load import ledger

    seen: list[int] = []
    real = ledger.loading_within

    def spy(con, amount):
        seen.append(amount)
        return real(con, amount)

    monkeypatch.setattr(ledger, "loading_within", spy)
    if value is None:
        monkeypatch.delenv("EVALHOUSE_LOAD_BUDGET", raising=False)
    else:
        monkeypatch.setenv("EVALHOUSE_LOAD_BUDGET", value)
    tree = tmp_path / "tree"
    for collection in ("c1", "c2"):
        write(tree, f"{collection}/org/m/{uuid.uuid4()}.json", record_for(f"org/m-{collection}"))
    summary = import_tree(wh, tree, RawStore(tmp_path / "raw"))
    assert [r.status for r in summary.runs] == ["completed", "completed"]
    assert seen == ([] if budget is None else [budget, budget])
    assert wh.scalar("SELECT count(*) FROM score") == 2


def test_an_integer_beyond_64_bits_quarantines_its_result_not_the_collection(
    wh: Warehouse, store: RawStore, tmp_path: Path
) -> None:
    """orjson writes no integer beyond 64 bits and no column holds one: such a result is quarantined
    with the reason; the record's other results and the collection's other records load (the whole
    collection used to fail with 'Integer exceeds 64-bit range')."""
    tree = tmp_path / "tree"
    rec = eee_record("org/big", {"bench_a": 0.5, "bench_b": 0.6})
    rec["evaluation_results"][0]["score_details"]["uncertainty"] = {"num_samples": 7}
    text = json.dumps(rec).replace('"num_samples": 7', '"num_samples": 123456789012345678901234')
    write(tree, f"c/org/big/{uuid.uuid4()}.json", text)
    write(tree, f"c/org/other/{uuid.uuid4()}.json", record_for("org/other"))
    summary = import_tree(wh, tree, store)
    assert summary.runs[0].status == "partial"
    assert wh.scalar("SELECT count(*) FROM score") == 2
    locator, reason = wh.con.execute("SELECT locator, reason FROM quarantine").fetchall()[0]
    assert locator.endswith("evaluation_results[0]") and "does not fit 64 bits" in reason
