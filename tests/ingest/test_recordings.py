"""Sources verified on recorded real payloads: the catalog's ``verified_on``, the files it names, the
replay mirror built from them, and what a refresh does with sources that have none."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import mirror_relpath
from evalhouse.ingest.pinned import mirror_from_shared
from evalhouse.ingest.recordings import DEFAULT_FIXTURES, Roots, replay_payloads
from evalhouse.ingest.source import Recording, SourceSpecError
from evalhouse.pipeline import refresh as R
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 1.0, "trust_env": False}
VERIFIED = {key: m.SOURCE.verified_on for key, m in catalog().items() if m.SOURCE.verified_on is not None}


def test_a_recording_names_real_files_by_root_and_an_iso_date() -> None:
    ok = Recording(
        "o/r", "abc", "2025-01-02", "MIT", ("fixtures:x/a.csv",), (("https://h.example/a.csv", "fixtures:x/a.csv"),)
    )
    assert ok.as_dict()["replay"] == {"https://h.example/a.csv": "fixtures:x/a.csv"}
    read = ("https://h.example/read", "fixtures:x/b.json", '{"n":1}')
    posted = Recording("o/r", "abc", "2025-01-02", "MIT", ("fixtures:x/b.json",), (read,))
    assert posted.as_dict()["replay"] == {'POST https://h.example/read {"n":1}': "fixtures:x/b.json"}
    with pytest.raises(SourceSpecError, match="replay entry"):
        Recording("o/r", "abc", "2025-01-02", "MIT", ("fixtures:x/b",), (("https://h.example/b",),))  # type: ignore[arg-type]
    for bad in ("x/a.csv", "fixtures:/etc/passwd", "fixtures:../x", "elsewhere:a", "fixtures:"):
        with pytest.raises(SourceSpecError, match="must be"):
            Recording("o/r", "abc", "2025-01-02", "MIT", (bad,))
    with pytest.raises(SourceSpecError, match="ISO date"):
        Recording("o/r", "abc", "Jan 2025", "MIT", ("fixtures:x/a.csv",))
    with pytest.raises(SourceSpecError, match="https"):
        Recording("o/r", "abc", "2025-01-02", "MIT", ("fixtures:x/a",), (("http://h.example/a", "fixtures:x/a"),))


@pytest.mark.parametrize("key", sorted(VERIFIED))
def test_every_recorded_file_exists_and_its_fixture_folder_says_where_it_came_from(key: str, shared: Path) -> None:
    recording = VERIFIED[key]
    roots = Roots(shared=shared)
    for ref in {*recording.files, *(entry[1] for entry in recording.replay)}:
        path = roots.path(ref)
        assert path.exists(), f"{key}: recorded file {ref} is missing ({path})"
        if ref.startswith("fixtures:"):
            folder = DEFAULT_FIXTURES / ref.removeprefix("fixtures:").split("/")[0]
            source_md = (folder / "SOURCE.md").read_text(encoding="utf-8")
            assert recording.commit[:10] in source_md, f"{folder}/SOURCE.md does not name commit {recording.commit}"


def test_sources_json_says_what_each_source_was_verified_on() -> None:
    result = CliRunner().invoke(app, ["sources", "--json"])
    assert result.exit_code == 0, result.output
    listed = {s["key"]: s["verified_on"] for s in json.loads(result.stdout)}
    assert set(listed) == set(catalog())
    for key, value in listed.items():
        if key in VERIFIED:
            assert value["commit"] == VERIFIED[key].commit and value["files"] == list(VERIFIED[key].files)
        else:
            assert value == "unverified"
    text = CliRunner().invoke(app, ["sources"])
    assert f"{len(VERIFIED)} of {len(listed)} sources verified" in " ".join(text.output.split())


def test_the_replay_mirror_holds_every_verified_sources_replayed_files(shared: Path, tmp_path: Path) -> None:
    written = mirror_from_shared(shared, tmp_path / "m")
    replay = replay_payloads(Roots(shared=shared))
    assert not replay.missing, replay.missing
    for key, body in replay.payloads.items():
        url, posted = (key, None) if isinstance(key, str) else key
        assert (tmp_path / "m" / mirror_relpath(url, body=posted)).read_bytes() == body  # byte for byte
        assert key in written
    assert "https://epoch.ai/data/benchmark_data.zip" in written
    assert (tmp_path / "m" / "MIRROR.md").is_file()


def test_a_mirror_without_a_sources_payload_skips_it_and_a_plain_refresh_skips_the_unverified(
    tmp_path: Path,
) -> None:
    empty = tmp_path / "empty-mirror"
    empty.mkdir()

    def client(mirror: str | None) -> HttpClient:
        return HttpClient(mirror=mirror, max_retries=0, **FAST)

    verified = [m.SOURCE.key for m in R.scheduled_sources()]
    unverified = {m.SOURCE.key for m in R.unverified_sources()}
    assert verified and not unverified & set(verified)
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        options = R.RefreshOptions(mirror=str(empty), env={}, client_factory=client)
        results = R.refresh(wh, RawStore(tmp_path / "w.raw"), None, options)
        statuses = dict(wh.con.execute("SELECT source_key, status FROM ingest_run").fetchall())
    by_key = {r.source_key: r for r in results}
    assert set(by_key) == set(verified) | unverified
    assert all(by_key[k].status == "skipped" and "unverified" in by_key[k].error for k in unverified)
    # nothing of the verified sources is in this mirror: skipped with the reason, never failed
    assert all(by_key[k].status == "skipped" and "mirror holds no payload" in by_key[k].error for k in verified)
    assert set(statuses.values()) == {"skipped"}


def test_a_mirror_that_holds_some_of_a_source_but_not_its_first_page_fails_it(tmp_path: Path) -> None:
    """Only a mirror with nothing of a source skips it: a missing page among its others is news."""
    from evalhouse.ingest.sources import epoch_benchmarks

    url = epoch_benchmarks.SOURCE.default_urls[0]
    beside = tmp_path / "m" / mirror_relpath(url).parent / "other.zip"
    beside.parent.mkdir(parents=True)
    beside.write_bytes(b"not the export")
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        options = R.RefreshOptions(
            mirror=str(tmp_path / "m"), env={}, client_factory=lambda m: HttpClient(mirror=m, max_retries=0, **FAST)
        )
        [result] = R.refresh(wh, RawStore(tmp_path / "w.raw"), ["epoch-benchmarks"], options)
    assert result.status == "failed" and "every page is missing" in result.error


def test_a_named_unverified_source_is_still_fetched(tmp_path: Path) -> None:
    unverified = [m.SOURCE.key for m in R.unverified_sources() if not m.SOURCE.required_env]
    if not unverified:
        pytest.skip("every scheduled source is verified")

    def offline(_mirror: str | None) -> HttpClient:
        return HttpClient(mirror="http://127.0.0.1:9", max_retries=0, **FAST)

    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        [result] = R.refresh(
            wh, RawStore(tmp_path / "raw"), unverified[:1], R.RefreshOptions(env={}, client_factory=offline)
        )
    assert result.status == "failed" and "connection" in result.error
