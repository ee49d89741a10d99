"""The nightly refresh end to end: real HTTP on 127.0.0.1, the real client, parsers and warehouse.

The pinned datasets are served as a mirror by a local server; scripted routes inject the faults
a night can bring (429, 500s, timeouts, resets, truncated or changed payloads, bad cells).
"""

from __future__ import annotations

import csv
import gc
import importlib
import io
import json
import os
import zipfile
from pathlib import Path

import pytest
from clirunner import CliRunner
from httpserver import Reply, serve

from evalhouse.cli import app
from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.pinned import AA_CSV, EPOCH_DIR, epoch_zip, mirror_from_shared
from evalhouse.ingest.sources.artificial_analysis import api_page_url
from evalhouse.pipeline import refresh as R
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.pipeline.reparse import reparse
from evalhouse.schema.records import ParsedRecord
from evalhouse.warehouse import db as db_module
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

EPOCH_PATH = "/m/epoch.ai/data/benchmark_data.zip"
AA_PATH = "/m/artificialanalysis.ai/leaderboards/models"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 1.0, "trust_env": False}


def fast_client(mirror: str | None) -> HttpClient:
    return HttpClient(mirror=mirror, **FAST)


@pytest.fixture(scope="module")
def mirror_dir(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("mirror")
    mirror_from_shared(shared, out / "m")
    return out


@pytest.fixture
def wh(tmp_path: Path):
    with Warehouse.open(tmp_path / "w.duckdb") as w:
        yield w


@pytest.fixture
def store(tmp_path: Path) -> RawStore:
    return RawStore(tmp_path / "w.raw")


def csv_rows(path: Path) -> int:
    with open(path, newline="", encoding="utf-8") as fh:
        return sum(1 for _ in csv.DictReader(fh))


#: The sources whose pinned payloads ``mirror_from_shared`` writes (the others have their own tests).
PINNED = ["epoch-benchmarks", "artificial-analysis"]


def run(wh: Warehouse, store: RawStore, srv, keys: list[str] | None = None):
    keys = keys or PINNED
    return {
        r.source_key: r
        for r in R.refresh(wh, store, keys, R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=fast_client))
    }


def counts_by_file(wh: Warehouse) -> dict[str, int]:
    """Rows accounted for per Epoch file: loaded records + row-level quarantine entries."""
    loaded = wh.con.execute(
        "SELECT split_part(locator, ':', 1), count(*) FROM evaluation WHERE source_key = 'epoch-benchmarks' GROUP BY 1"
    ).fetchall()
    refused = wh.con.execute(
        "SELECT split_part(locator, ':', 1), count(DISTINCT split_part(locator, ':', 2)) FROM quarantine"
        " WHERE source_key = 'epoch-benchmarks' GROUP BY 1"
    ).fetchall()
    out: dict[str, int] = {}
    for name, n in [*loaded, *refused]:
        out[name] = out.get(name, 0) + n
    return out


def test_catalog_and_sources_folder_agree_both_ways() -> None:
    folder = Path(importlib.import_module("evalhouse.ingest.sources").__file__).parent
    modules = {p.stem for p in folder.glob("*.py") if not p.stem.startswith("_")}
    assert modules == {m.SOURCE.module_name for m in catalog().values()}
    for key, module in catalog().items():
        assert module.SOURCE.key == key and module.__name__.endswith(module.SOURCE.module_name)


def test_sources_json_lists_the_catalog() -> None:
    result = CliRunner().invoke(app, ["sources", "--json"])
    assert result.exit_code == 0, result.output
    data = {s["key"]: s for s in json.loads(result.stdout)}
    assert set(data) == set(catalog())
    epoch = data["epoch-benchmarks"]
    assert epoch["tier"] == 2 and epoch["default_urls"] == ["https://epoch.ai/data/benchmark_data.zip"]
    assert data["artificial-analysis"]["optional_env"] == ["EVALHOUSE_AA_API_KEY"]


def test_refresh_from_empty_loads_every_shared_row_then_is_unchanged(
    wh: Warehouse, store: RawStore, mirror_dir: Path, shared: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    with serve(static_dir=mirror_dir) as srv:
        first = run(wh, store, srv)
        assert first["epoch-benchmarks"].status in {"completed", "partial"}
        assert first["artificial-analysis"].status == "completed"
        # Epoch: every row of every CSV is a loaded record or a quarantined row with a reason.
        expected = {p.name: csv_rows(p) for p in sorted((shared / EPOCH_DIR).glob("*.csv"))}
        assert len(expected) == 43
        assert counts_by_file(wh) == expected
        assert wh.scalar("SELECT count(*) FROM quarantine WHERE reason IS NULL OR reason = ''") == 0
        # Artificial Analysis: all 548 configurations.
        assert wh.scalar("SELECT count(*) FROM evaluation WHERE source_key = 'artificial-analysis'") == 548
        assert csv_rows(shared / AA_CSV) == 548
        n_scores = wh.scalar("SELECT count(*) FROM score")

        calls = []
        for module in (catalog()[k] for k in PINNED):
            original = module.parse
            monkeypatch.setattr(module, "parse", lambda *a, _o=original, **k: calls.append(1) or _o(*a, **k))
        opened = []
        connect = db_module._connect
        monkeypatch.setattr(db_module, "_connect", lambda *a, **k: opened.append(1) or connect(*a, **k))
        second = run(wh, store, srv)
    assert {k: r.status for k, r in second.items()} == {
        "epoch-benchmarks": "unchanged",
        "artificial-analysis": "unchanged",
    }
    assert calls == [], "an unchanged payload must not be parsed"
    assert len(opened) == 1, "a quiet night closes the warehouse once for all its fetches"
    assert wh.scalar("SELECT count(*) FROM score") == n_scores
    runs = wh.con.execute("SELECT status, count(*) FROM ingest_run GROUP BY 1 ORDER BY 1").fetchall()
    assert dict(runs)["unchanged"] == 2
    # recorded together, each run still ends when its outcome was known: before the next one began
    (epoch_end,) = wh.con.execute(
        "SELECT finished_at FROM ingest_run WHERE run_id = ?", [second["epoch-benchmarks"].run_id]
    ).fetchone()
    (aa_start,) = wh.con.execute(
        "SELECT started_at FROM ingest_run WHERE run_id = ?", [second["artificial-analysis"].run_id]
    ).fetchone()
    assert epoch_end <= aa_start


def test_parsing_and_loading_run_with_the_collector_paused_and_a_refresh_leaves_it_on(
    wh: Warehouse, store: RawStore, mirror_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    module = catalog()["artificial-analysis"]
    original = module.parse
    seen: list[bool] = []

    def parse(*args, **kwargs):
        seen.append(gc.isenabled())
        yield from original(*args, **kwargs)
        seen.append(gc.isenabled())

    monkeypatch.setattr(module, "parse", parse)
    with serve(static_dir=mirror_dir) as srv:
        result = run(wh, store, srv, ["artificial-analysis"])["artificial-analysis"]
    assert result.status == "completed" and result.counts["loaded"] == 548
    assert seen == [False, False]  # paused while the parser builds its records, start to end
    assert gc.isenabled()


def test_records_a_parser_validated_are_not_validated_again_by_the_loader(
    wh: Warehouse, store: RawStore, mirror_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from evalhouse.warehouse.load import records as load_module

    checked: list[object] = []
    original = load_module.validate_record
    monkeypatch.setattr(load_module, "validate_record", lambda r, **k: checked.append(r) or original(r, **k))
    with serve(static_dir=mirror_dir) as srv:
        result = run(wh, store, srv, ["artificial-analysis"])["artificial-analysis"]
    assert result.status == "completed" and result.counts["loaded"] == 548
    assert checked == []  # build_record checked each one (ParsedRecord.valid)
    # a record the parser did not vouch for is checked, and refused with the reason
    bad = ParsedRecord(record={"schema_version": "0.3.0"}, locator="x")
    assert not bad.valid and load_module.validate_record(bad.record)[0] is None


def test_a_source_listed_twice_is_fetched_after_its_first_run_is_recorded(
    wh: Warehouse, store: RawStore, mirror_dir: Path
) -> None:
    """The second run reads what the first left (so it is unchanged): sources fetched in one closing
    of the warehouse are distinct, and each is judged against the warehouse as it then stands."""
    with serve(static_dir=mirror_dir) as srv:
        results = R.refresh(
            wh,
            store,
            ["artificial-analysis", "artificial-analysis"],
            R.RefreshOptions(mirror=f"{srv.url}/m", client_factory=fast_client),
        )
    assert [r.status for r in results] == ["completed", "unchanged"]
    assert wh.scalar("SELECT count(*) FROM evaluation WHERE source_key = 'artificial-analysis'") == 548


def test_cli_refresh_of_epoch_over_a_local_server(tmp_path: Path, mirror_dir: Path, shared: Path) -> None:
    db = tmp_path / "cli.duckdb"
    with serve(static_dir=mirror_dir) as srv:
        result = CliRunner().invoke(
            app,
            [
                "--db",
                str(db),
                "refresh",
                "--source",
                "epoch-benchmarks",
                "--mirror",
                f"{srv.url}/m",
                "--json",
            ],
        )
        assert srv.requests_for(EPOCH_PATH), "the payload came over HTTP"
    assert result.exit_code == 0, result.output
    (summary,) = json.loads(result.stdout)["runs"]
    assert summary["source"] == "epoch-benchmarks" and summary["status"] == "partial"
    expected_rows = sum(csv_rows(p) for p in (shared / EPOCH_DIR).glob("*.csv"))
    assert summary["read"] == expected_rows == summary["loaded"] + summary["quarantined"]
    with Warehouse.open(db, read_only=True) as w:
        assert counts_by_file(w) == {p.name: csv_rows(p) for p in (shared / EPOCH_DIR).glob("*.csv")}
        assert w.scalar("SELECT count(*) FROM evaluation WHERE source_key = 'artificial-analysis'") == 0


def test_a_payload_that_only_changes_bytes_is_unchanged_after_parsing(
    wh: Warehouse, store: RawStore, mirror_dir: Path, shared: Path
) -> None:
    with serve(static_dir=mirror_dir) as srv:
        assert run(wh, store, srv, ["epoch-benchmarks"])["epoch-benchmarks"].status == "partial"
        # Same CSVs, new zip bytes (another member timestamp): records fingerprint the same.
        buf = io.BytesIO()
        with (
            zipfile.ZipFile(io.BytesIO(epoch_zip(shared / EPOCH_DIR))) as src,
            zipfile.ZipFile(buf, "w") as dst,
        ):
            for info in src.infolist():
                dst.writestr(zipfile.ZipInfo(info.filename, date_time=(2026, 1, 1, 0, 0, 0)), src.read(info))
        srv.route(EPOCH_PATH, Reply(200, buf.getvalue(), headers={"Content-Type": "application/zip"}))
        result = run(wh, store, srv, ["epoch-benchmarks"])["epoch-benchmarks"]
    assert result.status == "unchanged"
    reason = wh.scalar("SELECT details->>'reason' FROM ingest_run WHERE run_id = ?", [result.run_id])
    assert "records fingerprint" in reason


def test_transient_http_errors_are_retried(wh: Warehouse, store: RawStore, mirror_dir: Path) -> None:
    zip_bytes = (mirror_dir / EPOCH_PATH.removeprefix("/")).read_bytes()
    ok = Reply(200, zip_bytes, headers={"Content-Type": "application/zip"})
    with serve(static_dir=mirror_dir) as srv:
        srv.route(EPOCH_PATH, Reply(429, headers={"Retry-After": "0"}), Reply(500), Reply(500), Reply(500), ok)
        srv.route(
            AA_PATH,
            Reply(reset=True),
            Reply(503, delay=1.5),
            Reply(200, (mirror_dir / AA_PATH[1:]).read_bytes()),
        )
        results = run(wh, store, srv)
        assert len(srv.requests_for(EPOCH_PATH)) == 5 and len(srv.requests_for(AA_PATH)) == 3
    assert results["epoch-benchmarks"].status == "partial"
    assert results["artificial-analysis"].status == "completed"


def test_persistent_failures_fail_one_source_and_leave_the_other_and_earlier_data(
    wh: Warehouse, store: RawStore, mirror_dir: Path
) -> None:
    with serve(static_dir=mirror_dir) as srv:
        run(wh, store, srv)  # a good night first
        before = {k: wh.scalar("SELECT count(*) FROM score WHERE source_key = ?", [k]) for k in PINNED}
        srv.route(EPOCH_PATH, Reply(500))
        srv.route(AA_PATH, Reply(200, delay=3.0))  # longer than the client's timeout, every time
        results = run(wh, store, srv)
    epoch, aa = results["epoch-benchmarks"], results["artificial-analysis"]
    assert epoch.status == "failed" and "http_status" in epoch.error and "500" in epoch.error
    assert aa.status == "failed" and "timeout" in aa.error
    assert "make mirror" not in epoch.error  # a mirror was given: no offline hint
    after = {k: wh.scalar("SELECT count(*) FROM score WHERE source_key = ?", [k]) for k in PINNED}
    assert after == before


def _zip_with(shared: Path, name: str, text: str) -> bytes:
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(epoch_zip(shared / EPOCH_DIR))) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, text.encode() if info.filename == name else src.read(info))
    return buf.getvalue()


def test_bad_payloads_fail_or_quarantine_with_reasons(
    wh: Warehouse, store: RawStore, mirror_dir: Path, shared: Path
) -> None:
    zip_bytes = (mirror_dir / EPOCH_PATH[1:]).read_bytes()
    with serve(static_dir=mirror_dir) as srv:
        # A truncated zip: the run fails with a reason; no rows, the bytes are kept.
        srv.route(EPOCH_PATH, Reply(200, zip_bytes[: len(zip_bytes) // 2]))
        # An AA page whose flight payload is missing.
        srv.route(
            AA_PATH,
            Reply(
                200,
                b"<!DOCTYPE html><html><body><p>maintenance</p></body></html>",
                headers={"Content-Type": "text/html"},
            ),
        )
        results = run(wh, store, srv)
        assert results["epoch-benchmarks"].status == "failed" and "zip" in results["epoch-benchmarks"].error.lower()
        assert results["artificial-analysis"].status == "failed" and "payload" in results["artificial-analysis"].error
        assert wh.scalar("SELECT count(*) FROM score") == 0
        assert wh.scalar("SELECT count(*) FROM raw_snapshot") == 2  # the bad bytes are kept for inspection

        # Now a good AA night, then an Epoch zip where one CSV changed its header and one has bad cells.
        srv.route(AA_PATH, Reply(200, (mirror_dir / AA_PATH[1:]).read_bytes()))
        gpqa = (
            (shared / EPOCH_DIR / "gpqa_diamond.csv").read_text().replace("Best score (across scorers)", "Best score")
        )
        bad = _zip_with(shared, "gpqa_diamond.csv", gpqa)
        bad = _bad_cells(bad, "mmlu_external.csv", ["N/A", "87.5%", "—", "NaN"])
        srv.route(EPOCH_PATH, Reply(200, bad))
        results = run(wh, store, srv)
    epoch = results["epoch-benchmarks"]
    assert epoch.status == "partial"
    gpqa_rows = csv_rows(shared / EPOCH_DIR / "gpqa_diamond.csv")
    reasons = wh.con.execute(
        "SELECT reason FROM quarantine WHERE locator LIKE 'gpqa_diamond.csv:%' AND run_id = ?", [epoch.run_id]
    ).fetchall()
    assert len(reasons) == gpqa_rows and all("Best score (across scorers)" in r[0] for r in reasons)
    for value in ("N/A", "87.5%", "—", "NaN"):
        hits = wh.scalar(
            "SELECT count(*) FROM quarantine WHERE locator LIKE 'mmlu_external.csv:%' AND reason LIKE ?",
            [f"%{value}%"],
        )
        assert hits >= 1, value
    assert wh.scalar("SELECT count(*) FROM score WHERE source_key = 'artificial-analysis'") > 5000


def _bad_cells(zip_bytes: bytes, name: str, values: list[str]) -> bytes:
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as src:
        text = src.read(name).decode()
    rows = list(csv.reader(io.StringIO(text)))
    col = rows[0].index("EM")
    for i, value in enumerate(values, start=1):
        rows[i][col] = value
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    buf = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(zip_bytes)) as src, zipfile.ZipFile(buf, "w") as dst:
        for info in src.infolist():
            dst.writestr(info, out.getvalue().encode() if info.filename == name else src.read(info))
    return buf.getvalue()


def test_an_api_body_that_is_html_fails_the_source(
    wh: Warehouse, store: RawStore, monkeypatch: pytest.MonkeyPatch
) -> None:
    api = f"/m/{mirror_relpath(api_page_url(1))}"
    with serve(
        {api: Reply(200, b"<html><body>Please log in</body></html>", headers={"Content-Type": "text/html"})}
    ) as srv:
        results = {
            r.source_key: r
            for r in R.refresh(
                wh,
                store,
                ["artificial-analysis"],
                R.RefreshOptions(
                    mirror=f"{srv.url}/m", client_factory=fast_client, env={"EVALHOUSE_AA_API_KEY": "secret-key-123"}
                ),
            )
        }
        assert srv.requests_for(api)
        assert "x-api-key" not in srv.requests_for(api)[0].headers  # keys never go to a mirror
    aa = results["artificial-analysis"]
    assert aa.status == "failed" and "HTML" in aa.error
    dump = json.dumps(wh.con.execute("SELECT * FROM raw_snapshot").fetchall(), default=str)
    assert "secret-key-123" not in dump and "secret-key-123" not in (aa.error or "")


def test_ingest_a_local_file_and_reparse(wh: Warehouse, store: RawStore, shared: Path) -> None:
    result = ingest_file(wh, store, "artificial-analysis", str(shared / AA_CSV))
    assert result.status == "completed" and result.report.records_loaded == 548
    fetch = wh.con.execute("SELECT url, sha256 FROM raw_snapshot WHERE run_id = ?", [result.run_id]).fetchone()
    assert fetch[0].startswith("file://") and store.get(fetch[1]) == (shared / AA_CSV).read_bytes()
    scores = wh.scalar("SELECT count(*) FROM score")
    wh.con.execute(  # a parser bug's damage
        "DELETE FROM score_value WHERE score_id IN (SELECT score_id FROM score WHERE benchmark_id = 'gpqa_diamond')"
    )
    again = reparse(wh, store, "artificial-analysis")
    assert again.status == "completed", again.error
    assert wh.scalar("SELECT count(*) FROM score") == scores
    assert wh.scalar("SELECT count(*) FROM evaluation") == 548  # rebuilt, not duplicated
    assert wh.scalar("SELECT trigger FROM ingest_run WHERE run_id = ?", [again.run_id]) == "reparse"


def test_offline_refresh_fails_cleanly_and_says_how_to_replay(tmp_path: Path) -> None:
    # Every request goes to 127.0.0.1:9 (discard), which refuses connections: the same code path
    # as a machine without network.
    def offline(_mirror: str | None) -> HttpClient:
        return HttpClient(mirror="http://127.0.0.1:9", max_retries=0, **FAST)

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        results = R.refresh(wh, RawStore(tmp_path / "raw"), None, R.RefreshOptions(env={}, client_factory=offline))
        scheduled = R.scheduled_sources()  # a plain refresh skips the on-demand sources (model cards, papers)
        assert wh.scalar("SELECT count(*) FROM ingest_run WHERE status = 'failed'") == len(scheduled)
    unverified = {m.SOURCE.key for m in R.unverified_sources()}  # never fetched by a plain refresh
    assert sorted(r.status for r in results if r.source_key not in unverified) == ["failed"] * len(scheduled)
    assert all(r.status == "skipped" for r in results if r.source_key in unverified)
    results = [r for r in results if r.source_key not in unverified]
    keyed = {m.SOURCE.key for m in scheduled if m.SOURCE.required_env}  # no key set: refused before any fetch
    assert all("missing credential" in r.error for r in results if r.source_key in keyed)
    assert all(
        "connection" in r.error and "make mirror" in r.error and "MIRROR=" in r.error
        for r in results
        if r.source_key not in keyed
    )


def test_a_full_refresh_imports_no_pandas(shared: Path, tmp_path: Path) -> None:
    """Arrow columns are built without pa.array, whose first call imports pandas (≈ 0.2 s of a
    refresh): a column of empty lists (the record-level migration steps of records never migrated)
    fell back to it."""
    import subprocess
    import sys

    mirror = tmp_path / "mirror"
    subprocess.run(
        [sys.executable, "-m", "evalhouse", "mirror", "from-shared", str(mirror)], check=True, capture_output=True
    )
    code = (
        "import sys; from evalhouse.cli import main; sys.argv = ['evalhouse', '--db', sys.argv[1], 'refresh', "
        "'--mirror', sys.argv[2], '--source', 'epoch-benchmarks', '--source', 'artificial-analysis', '--json']\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\nimport os\n"
        "blas = os.environ.get('OPENBLAS_NUM_THREADS')\n"
        "print('pandas' in sys.modules, 'numpy' in sys.modules, blas, file=sys.stderr)"
    )
    env = {k: v for k, v in os.environ.items() if k != "OPENBLAS_NUM_THREADS"}
    ran = subprocess.run(
        [sys.executable, "-c", code, str(tmp_path / "w.duckdb"), str(mirror)],
        capture_output=True,
        text=True,
        check=False,
        env=env,
    )
    assert '"status": "completed"' in ran.stdout, ran.stderr[-2000:]
    # no pandas; numpy (with Arrow) loaded with one OpenBLAS thread: a load does no linear algebra
    assert ran.stderr.strip().splitlines()[-1] == "False True 1"
