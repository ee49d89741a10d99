"""Shared fixtures: the ../shared data beside the checkout, and a real warehouse file per test."""

from __future__ import annotations

import atexit
import os
import shutil
import tempfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))
# Compiled package YAML (evalhouse.common.yamls) goes to a folder of the test run, not the user's
# cache; subprocesses of the CLI inherit it.
if "EVALHOUSE_CACHE_DIR" not in os.environ:
    os.environ["EVALHOUSE_CACHE_DIR"] = _cache = tempfile.mkdtemp(prefix="evalhouse-test-cache-")
    atexit.register(shutil.rmtree, _cache, ignore_errors=True)


@pytest.fixture(scope="session")
def shared() -> Path:
    """The read-only ../shared folder; tests that need it skip with a clear message when absent."""
    if not (SHARED / "datasets").is_dir():
        pytest.skip(f"../shared is not beside the checkout (looked in {SHARED}); set EVALHOUSE_SHARED")
    return SHARED


@pytest.fixture(scope="session")
def aa_csv(shared: Path) -> Path:
    return shared / "datasets" / "artificial-analysis-2026-07-06" / "aa_models_raw_parsed.csv"


@pytest.fixture(scope="session")
def epoch_dir(shared: Path) -> Path:
    return shared / "datasets" / "epoch-benchmarks-2025-11"


@pytest.fixture(scope="session")
def real_warehouse(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Epoch + Artificial Analysis through the real refresh over loopback (read it; copy to write)."""
    from realwarehouse import build

    return build(shared, tmp_path_factory.mktemp("real-warehouse"))


@pytest.fixture(scope="session")
def real_snapshot(real_warehouse: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A snapshot of a copy of :func:`real_warehouse` (creating one records it in the warehouse)."""
    from realwarehouse import copy_warehouse, snapshot

    root = tmp_path_factory.mktemp("real-snapshot")
    return snapshot(copy_warehouse(real_warehouse, root / "db"), root / "snap")
