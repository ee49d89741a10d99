"""Fixtures of the leaderboard-source tests: one replay mirror, served over loopback."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from fixture_mirror import build
from httpserver import ScriptedServer, serve


@pytest.fixture(scope="session")
def board_mirror(shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    root = tmp_path_factory.mktemp("boards")
    build(root / "m", shared)
    return root


@pytest.fixture
def board_server(board_mirror: Path) -> Iterator[ScriptedServer]:
    with serve(static_dir=board_mirror) as srv:
        yield srv
