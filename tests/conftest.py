"""Shared fixtures: the ../shared data beside the checkout, and a real warehouse file per test."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[1]
SHARED = Path(os.environ.get("EVALHOUSE_SHARED", REPO.parent / "shared"))


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
