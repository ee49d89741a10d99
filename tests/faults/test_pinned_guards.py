"""The guards on the two pinned sources (Epoch hub zip, AA CSV), replayed over loopback.

A unit switch (values ÷100 or ×100) and a run that would quarantine most of its rows fail with
the guard's reason and leave every previous value as it was, unless a person accepts the run
with --accept-drift (recorded as a decision). An Epoch export missing most of its files, or
holding two members of one name, is refused; one missing a few files is ``partial``, never
``completed``.
"""

from __future__ import annotations

import csv
import io
import json
import shutil
import zipfile
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from faultserver import rescaled
from httpserver import Reply, serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.pinned import AA_PAGE_URL, EPOCH_URL, mirror_from_shared
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

SOURCES = {"epoch-benchmarks": EPOCH_URL, "artificial-analysis": AA_PAGE_URL}


def _path(url: str) -> str:
    return "/m/" + "/".join(mirror_relpath(url).parts)


@pytest.fixture(scope="module")
def first_night(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The mirror of the pinned sources and a warehouse after their first refresh, built once per module."""
    root = tmp_path_factory.mktemp("pinned")
    mirror_from_shared(shared, root / "mirror" / "m")
    with serve(static_dir=root / "mirror") as srv:
        first = _refresh(root / "w.duckdb", RawStore(root / "w.raw"), srv, list(SOURCES))
        assert {r.status for r in first} <= {"completed", "partial"}
    return root


@pytest.fixture
def pinned(first_night: Path, tmp_path: Path) -> Iterator[tuple]:
    """A private copy of the first night's warehouse and raw store, and a server of the (read-only) mirror."""
    shutil.copy2(first_night / "w.duckdb", tmp_path / "w.duckdb")
    shutil.copytree(first_night / "w.raw", tmp_path / "w.raw")
    with serve(static_dir=first_night / "mirror") as srv:
        db, store = tmp_path / "w.duckdb", RawStore(tmp_path / "w.raw")
        good = {url: (first_night / "mirror" / _path(url)[1:]).read_bytes() for url in SOURCES.values()}
        yield db, store, srv, good


def _refresh(db: Path, store: RawStore, srv, keys: list[str], **kw) -> list:
    options = R.RefreshOptions(
        mirror=f"{srv.url}/m", client_factory=lambda m: HttpClient(mirror=m, trust_env=False), **kw
    )
    with Warehouse.open(db) as wh:
        return R.refresh(wh, store, keys, options)


def _values(db: Path, source: str) -> list[tuple]:
    with Warehouse.open(db, read_only=True) as wh:
        return wh.con.execute(
            "SELECT score_id, value FROM v_score_current WHERE source_key = ? ORDER BY 1", [source]
        ).fetchall()


def _serve(srv, url: str, body: bytes) -> None:
    srv.route(_path(url), Reply(200, body))


def _guards(db: Path, run_id: str) -> list[str]:
    with Warehouse.open(db, read_only=True) as wh:
        details = json.loads(wh.scalar("SELECT details FROM ingest_run WHERE run_id = ?", [run_id]))
    return [g["guard"] for g in details.get("guards", [])]


@pytest.mark.parametrize("source", list(SOURCES))
@pytest.mark.parametrize("factor", [0.01, 100.0])
def test_a_unit_switch_fails_and_changes_nothing(pinned, source: str, factor: float, figures) -> None:
    db, store, srv, good = pinned
    url = SOURCES[source]
    before = _values(db, source)
    _serve(srv, url, rescaled(good[url], factor))
    (run,) = _refresh(db, store, srv, [source])
    print(source, factor, run.error)
    assert run.status == "failed"
    assert "scale" in _guards(db, run.run_id)  # the scale guard judged it, whichever reason came first
    if factor < 1:
        assert run.error.startswith("scale changed: median ")
    else:
        assert "scale changed" in run.error or "values outside registry bounds" in run.error
    assert _values(db, source) == before
    figures.fault("pinned guards", f"{source} values ×{factor:g}", run.status == "failed")
    (accepted,) = _refresh(db, store, srv, [source], accept_drift={source})  # a person says it is real
    assert accepted.status in {"completed", "partial"} if factor < 1 else accepted.status == "failed"
    if factor < 1:
        with Warehouse.open(db, read_only=True) as wh:
            kinds = wh.con.execute(
                "SELECT detail FROM curation_decision WHERE run_id = ? AND kind = 'accepted_drift'", [accepted.run_id]
            ).fetchall()
        assert any("scale changed" in d for (d,) in kinds)


def _epoch_cells(body: bytes, edit: Callable[[str, list[list[str]]], list[list[str]]]) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(body)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            rows = list(csv.reader(io.StringIO(src.read(info).decode())))
            buf = io.StringIO()
            csv.writer(buf, lineterminator="\n").writerows(edit(info.filename, rows))
            dst.writestr(info, buf.getvalue())
    return out.getvalue()


def _spoil(rows: list[list[str]], columns: list[str], share: float) -> list[list[str]]:
    """Replace ``columns`` with text in the first ``share`` of the data rows."""
    head, body = rows[0], rows[1:]
    idx = [head.index(c) for c in columns if c in head]
    for row in body[: int(len(body) * share)]:
        for i in idx:
            if i < len(row):
                row[i] = "n/a (withdrawn)"
    return [head, *body]


def _mass(source: str, body: bytes) -> bytes:
    if source == "epoch-benchmarks":
        from evalhouse.ingest.sources.epoch_benchmarks import MAPPING

        def edit(name: str, rows: list[list[str]]) -> list[list[str]]:
            fm = MAPPING.files.get(name.rsplit("/", 1)[-1])
            return _spoil(rows, [s.column for s in fm.scores] if fm else [], 0.6)

        return _epoch_cells(body, edit)
    from evalhouse.ingest.sources.artificial_analysis import BENCHMARKS

    rows = list(csv.reader(io.StringIO(body.decode())))
    buf = io.StringIO()
    csv.writer(buf, lineterminator="\n").writerows(_spoil(rows, [b.value.path("csv") for b in BENCHMARKS], 0.6))
    return buf.getvalue().encode()


@pytest.mark.parametrize("source", list(SOURCES))
def test_a_mass_quarantine_fails_unless_accepted(pinned, source: str, figures) -> None:
    db, store, srv, good = pinned
    url = SOURCES[source]
    before = _values(db, source)
    _serve(srv, url, _mass(source, good[url]))
    (run,) = _refresh(db, store, srv, [source])
    print(source, run.error)
    assert run.status == "failed" and run.error.startswith("mass quarantine: "), run.error
    assert "--accept-drift" in run.error
    assert _values(db, source) == before
    figures.fault("pinned guards", f"{source} mass quarantine", run.status == "failed")
    (accepted,) = _refresh(db, store, srv, [source], accept_drift={source})
    assert accepted.status == "partial" and accepted.counts["quarantined"] > 0


def _members(body: bytes, keep: Callable[[str], bool], extra: dict[str, bytes] | None = None) -> bytes:
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(body)) as src, zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as dst:
        for info in src.infolist():
            if keep(info.filename):
                dst.writestr(info, src.read(info))
        for name, data in (extra or {}).items():
            dst.writestr(name, data)
    return out.getvalue()


def test_an_epoch_export_missing_files_is_never_completed(pinned, figures) -> None:
    db, store, srv, good = pinned
    body = good[EPOCH_URL]
    before = _values(db, "epoch-benchmarks")
    _serve(srv, EPOCH_URL, _members(body, lambda n: n == "gpqa_diamond.csv"))
    (one,) = _refresh(db, store, srv, ["epoch-benchmarks"])
    assert one.status == "failed" and "holds 1 of the 43 files" in one.error, one.error
    assert _values(db, "epoch-benchmarks") == before
    gone = ("aider_polyglot_external.csv", "lech_mazur_writing_external.csv")
    _serve(srv, EPOCH_URL, _members(body, lambda n: n not in gone))
    (few,) = _refresh(db, store, srv, ["epoch-benchmarks"], accept_drift={"epoch-benchmarks"})
    with Warehouse.open(db, read_only=True) as wh:
        reasons = [
            r[0]
            for r in wh.con.execute(
                "SELECT reason FROM quarantine WHERE run_id = ? AND reason LIKE 'the export holds no %'", [few.run_id]
            ).fetchall()
        ]
    assert few.status == "partial" and len(reasons) == 2 and all("41 of 43 files present" in r for r in reasons)
    figures.fault("pinned guards", "Epoch export with 1 of 43 files", one.status == "failed")
    figures.fault("pinned guards", "Epoch export with 41 of 43 files", few.status == "partial")


def test_zip_members_sharing_a_name_are_refused(pinned, figures) -> None:
    db, store, srv, good = pinned
    before = _values(db, "epoch-benchmarks")
    with zipfile.ZipFile(io.BytesIO(good[EPOCH_URL])) as z:
        gpqa = z.read("gpqa_diamond.csv")
    changed = gpqa.replace(b"0.", b"0.9", 3)  # another copy with other values, in another folder
    body = _members(good[EPOCH_URL], lambda n: True, {"old/gpqa_diamond.csv": changed})
    _serve(srv, EPOCH_URL, body)
    (run,) = _refresh(db, store, srv, ["epoch-benchmarks"])
    assert run.status == "failed" and "2 members named gpqa_diamond.csv in different folders" in run.error
    assert _values(db, "epoch-benchmarks") == before
    figures.fault("pinned guards", "zip members sharing a name", run.status == "failed")
