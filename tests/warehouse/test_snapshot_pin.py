"""Pins of the live warehouse: an unchanged state reuses its snapshot without writing, old pins
are pruned by --keep N, and nothing but pin folders is ever removed."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.config import raw_store_path
from evalhouse.errors import InputError
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore
from evalhouse.warehouse.snapshot.format import MANIFEST
from evalhouse.warehouse.snapshot.pin import pin_snapshot, pin_warehouse, snapshots_dir

runner = CliRunner()


def _cli(*args: str) -> str:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return result.output


@pytest.fixture
def db(tmp_path: Path) -> Path:
    path = tmp_path / "w.duckdb"
    _cli("--db", str(path), "simulate-panel", "--items", "40", "--json")
    return path


def _folders(db: Path) -> list[str]:
    root = snapshots_dir(db)
    return sorted(p.name for p in root.iterdir()) if root.is_dir() else []


def _files(folder: Path) -> dict[str, int]:
    return {str(p.relative_to(folder)): p.stat().st_mtime_ns for p in folder.rglob("*") if p.is_file()}


def test_an_unchanged_warehouse_reuses_its_pin_without_writing(db: Path) -> None:
    first = pin_warehouse(db)
    assert first.created and _folders(db) == [first.path.name]
    before = _files(first.path)
    again = pin_warehouse(db)
    assert (again.path, again.created, again.pruned) == (first.path, False, [])
    assert _files(first.path) == before and _folders(db) == [first.path.name]


def test_recording_analyses_and_caches_does_not_move_the_pin(db: Path, tmp_path: Path) -> None:
    first = pin_warehouse(db)
    # a report on the pin records its fits (analysis_* tables) and its section into the warehouse
    _cli("--db", str(db), "report", "--snapshot", str(first.path), "--output", str(tmp_path / "r.html"))
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM analysis_section").fetchone()[0] == 1
    with duckdb.connect(str(db)) as con:  # the cache a task comparison fills: a vector per text
        con.execute(
            "INSERT INTO embedding (encoder, revision, dim, text_sha256, vector, vector_sha256)"
            " VALUES ('wordllama', 'r1', 2, 'ab', [0.5, 0.25], 'cd')"
        )
    validated = runner.invoke(app, ["--db", str(db), "validate"])  # results about the state
    assert validated.exit_code in (0, 1), validated.output
    with duckdb.connect(str(db), read_only=True) as con:
        assert con.execute("SELECT count(*) FROM validation_result").fetchone()[0] > 0
    assert pin_warehouse(db).path == first.path and _folders(db) == [first.path.name]


def test_a_changed_warehouse_is_pinned_anew(db: Path) -> None:
    first = pin_warehouse(db)
    _cli("--db", str(db), "curate", "policy", "latest")
    second = pin_warehouse(db)
    assert second.created and second.path != first.path
    manifests = [json.loads((p / MANIFEST).read_text())["snapshot_id"] for p in (first.path, second.path)]
    assert manifests[0] != manifests[1]
    assert pin_warehouse(db).path == second.path  # and that state's pin is reused in turn


def test_two_pins_in_the_same_second_get_two_folders(db: Path) -> None:
    """A pin's folder is named for its UTC second; a folder of that name already there (a pin of
    another state a moment before) gets a numbered sibling instead of an error."""
    now = datetime.now(UTC)
    taken = {(now + timedelta(seconds=s)).strftime("%Y%m%dT%H%M%SZ") for s in range(5)}
    for name in taken:  # the folders of pins made in this second and the next few
        (snapshots_dir(db) / name).mkdir(parents=True)
        (snapshots_dir(db) / name / "note.txt").write_text("taken")
    pin = pin_warehouse(db)
    assert pin.created and pin.path.name not in taken
    stamp, _, n = pin.path.name.partition("-")
    assert stamp in taken and n == "2"
    assert all((snapshots_dir(db) / name / "note.txt").read_text() == "taken" for name in taken)


def test_a_copy_of_an_earlier_state_is_removed_and_the_register_keeps_the_earlier_folder(db: Path) -> None:
    """A pin made before pins were recorded (or whose record is gone): the new copy of the same
    state is removed, the earlier folder used, and the register points at the folder that stays."""
    first = pin_warehouse(db)
    with duckdb.connect(str(db)) as con:
        con.execute("DELETE FROM _snapshot_pin")
    again = pin_warehouse(db)
    assert (again.path, again.created) == (first.path, False) and _folders(db) == [first.path.name]
    with duckdb.connect(str(db), read_only=True) as con:
        paths = [r[0] for r in con.execute("SELECT path FROM snapshot").fetchall()]
    assert paths == [str(first.path)]


def test_keep_n_prunes_the_oldest_pins_and_nothing_else(db: Path, tmp_path: Path) -> None:
    pins = [pin_warehouse(db, keep=None)]
    for policy in ("latest", "prefer-tier", "mean"):
        _cli("--db", str(db), "curate", "policy", policy)
        pins.append(pin_warehouse(db, keep=None))
    # a snapshot made by hand in the same folder, and a folder that is no snapshot
    _cli("--db", str(db), "snapshot", "create", str(snapshots_dir(db) / "mine"))
    (snapshots_dir(db) / "notes").mkdir()
    assert len(_folders(db)) == 6
    # the oldest pin used again (its state's record says when): it is now the most recently used
    with duckdb.connect(str(db)) as con:
        con.execute("UPDATE _snapshot_pin SET used_at = now() + INTERVAL 1 HOUR WHERE path = ?", [str(pins[0].path)])
    output = _cli("--db", str(db), "site", str(tmp_path / "site"), "--no-analyses", "--keep", "2")
    assert f"reusing snapshot {pins[3].path}" in output  # the current state: the last pin
    assert "removed 2 older pin(s) beyond --keep" in output
    assert _folders(db) == sorted([pins[0].path.name, pins[3].path.name, "mine", "notes"])
    with duckdb.connect(str(db), read_only=True) as con:
        recorded = {r[0] for r in con.execute("SELECT path FROM _snapshot_pin").fetchall()}
        register = con.execute("SELECT count(*) FROM snapshot").fetchone()[0]
    # the register keeps a row per snapshot id, pruned ones included ("mine" froze the last pin's state)
    assert recorded == {str(pins[0].path), str(pins[3].path)} and register == 4


def test_keep_must_leave_the_pin_in_use(db: Path, tmp_path: Path) -> None:
    with pytest.raises(InputError, match="at least 1"):
        pin_warehouse(db, keep=0)
    result = runner.invoke(app, ["--db", str(db), "site", str(tmp_path / "s"), "--no-analyses", "--keep", "0"])
    assert result.exit_code == 2
    with Warehouse.open(db) as wh:
        pin = pin_snapshot(wh, RawStore(raw_store_path(db)), keep=1)
    assert pin.created and _folders(db) == [pin.path.name]
