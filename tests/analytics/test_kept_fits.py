"""Kept fits: read back only for the same inputs, settings and code; fitted once under concurrency."""

from __future__ import annotations

import logging
import multiprocessing
import pickle
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics import kept_fits
from evalhouse.analytics.kept_fits import ENV_KEEP, content_sha256, kept_fit


@pytest.fixture(autouse=True)
def own_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("EVALHOUSE_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv(ENV_KEEP, raising=False)
    return tmp_path / "cache"


def _frames() -> tuple[pd.DataFrame, pd.DataFrame]:
    wide = pd.DataFrame(
        {"a": [0.1, np.nan, 0.3], "b": [1.0, 2.0, 3.0]}, index=pd.Index(["m1", "m2", "m3"], name="model")
    )
    meta = pd.DataFrame(
        {"name": ["M 1", "M 2", "M 3"], "release_date": pd.to_datetime(["2024-01-02", None, "2025-03-04"])},
        index=wide.index,
    )
    return wide, meta


class Counting:
    def __init__(self) -> None:
        self.calls = 0

    def __call__(self) -> dict[str, object]:
        self.calls += 1
        return {"value": self.calls, "frame": pd.DataFrame({"x": [1.0, 2.0]})}


def test_the_same_fit_is_read_back_with_where_it_came_from() -> None:
    wide, meta = _frames()
    fit = Counting()
    first, kept = kept_fit("demo", [wide, meta], {"seed": 0}, fit)
    assert kept is None and fit.calls == 1
    again, kept = kept_fit("demo", [wide.copy(), meta.copy()], {"seed": 0}, fit)
    assert fit.calls == 1 and again["value"] == first["value"]
    pd.testing.assert_frame_equal(again["frame"], first["frame"])
    assert kept is not None and len(kept.key) == 64 and kept.fit_s >= 0 and kept.fitted_at.startswith("20")


@pytest.mark.parametrize(
    "change",
    ["a number", "a text value", "a date", "a column name", "the index", "a setting", "the fit's name"],
)
def test_any_change_of_input_setting_or_name_fits_again(change: str) -> None:
    wide, meta = _frames()
    fit = Counting()
    kept_fit("demo", [wide, meta], {"seed": 0}, fit)
    name, settings = "demo", {"seed": 0}
    wide2, meta2 = wide.copy(), meta.copy()
    if change == "a number":
        wide2.iloc[0, 0] = 0.10000001
    elif change == "a text value":
        meta2.iloc[1, 0] = "M 2b"
    elif change == "a date":
        meta2.iloc[1, 1] = pd.Timestamp("2024-05-06")
    elif change == "a column name":
        wide2.columns = ["a", "c"]
    elif change == "the index":
        wide2.index = pd.Index(["m1", "m2", "m4"], name="model")
    elif change == "a setting":
        settings = {"seed": 1}
    else:
        name = "demo2"
    _, kept = kept_fit(name, [wide2, meta2], settings, fit)
    assert kept is None and fit.calls == 2


def test_a_code_change_is_a_new_key(monkeypatch: pytest.MonkeyPatch) -> None:
    wide, meta = _frames()
    fit = Counting()
    kept_fit("demo", [wide, meta], {}, fit)
    monkeypatch.setattr(kept_fits, "code_fingerprint", lambda: "another version of the code")
    _, kept = kept_fit("demo", [wide, meta], {}, fit)
    assert kept is None and fit.calls == 2


def test_the_code_fingerprint_covers_the_package_sources() -> None:
    root = Path(kept_fits.__file__).resolve().parents[1]
    assert (root / "analytics" / "reproduce" / "paper000.py").is_file()
    assert len(kept_fits.code_fingerprint()) == 64


def test_an_unreadable_entry_is_fitted_again_and_replaced(own_cache: Path, caplog: pytest.LogCaptureFixture) -> None:
    wide, meta = _frames()
    fit = Counting()
    kept_fit("demo", [wide, meta], {}, fit)
    [entry] = (own_cache / "fits" / "demo").glob("*.pkl")
    entry.write_bytes(entry.read_bytes()[:20])  # truncated
    with caplog.at_level(logging.WARNING, logger="evalhouse.analytics.kept_fits"):
        result, kept = kept_fit("demo", [wide, meta], {}, fit)
    assert kept is None and fit.calls == 2 and result["value"] == 2
    assert "cannot be read" in caplog.text
    with entry.open("rb") as fh:
        assert pickle.load(fh)["result"]["value"] == 2  # replaced by the new fit
    assert not list(entry.parent.glob("*.tmp"))


def test_keeping_can_be_turned_off(monkeypatch: pytest.MonkeyPatch, own_cache: Path) -> None:
    monkeypatch.setenv(ENV_KEEP, "0")
    wide, meta = _frames()
    fit = Counting()
    for _ in range(2):
        assert kept_fit("demo", [wide, meta], {}, fit)[1] is None
    assert fit.calls == 2 and not (own_cache / "fits").exists()


def test_an_unwritable_cache_only_costs_the_keeping(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    blocker = tmp_path / "a file"
    blocker.write_text("not a folder")
    monkeypatch.setenv("EVALHOUSE_CACHE_DIR", str(blocker))
    fit = Counting()
    assert kept_fit("demo", [_frames()[0]], {}, fit)[0]["value"] == 1


def _slow_fit_in_a_process(cache: str, log: str, out: str) -> None:
    import os
    import time

    os.environ["EVALHOUSE_CACHE_DIR"] = cache

    def fit() -> int:
        with open(log, "a") as fh:
            fh.write("fit\n")
        time.sleep(1.0)
        return 42

    result, kept = kept_fit("race", [np.arange(5.0)], {}, fit)
    Path(out).write_text(f"{result} {kept is not None}")


def test_two_processes_asking_at_once_fit_once(own_cache: Path, tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    log = tmp_path / "fits.log"
    outs = [tmp_path / f"out{i}" for i in range(2)]
    procs = [ctx.Process(target=_slow_fit_in_a_process, args=(str(own_cache), str(log), str(o))) for o in outs]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    assert log.read_text().count("fit") == 1
    assert sorted(o.read_text() for o in outs) == ["42 False", "42 True"]


def test_content_hash_sees_every_dtype() -> None:
    _, meta = _frames()
    assert content_sha256(meta) == content_sha256(meta.copy())
    flipped = meta.astype({"name": "category"})
    assert content_sha256(flipped) != content_sha256(meta)  # a dtype is part of the content
    assert content_sha256(np.arange(3.0)) != content_sha256(np.arange(3))


def test_content_hash_reads_cells_that_hold_lists_or_arrays() -> None:
    """A frame whose cells hold arrays (the hub's list of source names per configuration) is hashed
    by their contents; pandas alone cannot hash such a cell."""
    frame = pd.DataFrame({"group": ["a", "b"], "names": [np.array(["x", "y"]), np.array(["z"])]})
    assert content_sha256(frame) == content_sha256(frame.copy())
    other = frame.copy()
    other.at[1, "names"] = np.array(["w"])
    assert content_sha256(other) != content_sha256(frame)
    as_text = frame.assign(names=['["x", "y"]', '["z"]'])  # text that reads like the array is not the array
    assert content_sha256(as_text) != content_sha256(frame)
    assert content_sha256(frame.assign(names=[["x", "y"], None])) != content_sha256(frame)
