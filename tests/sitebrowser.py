"""What the explorer's browser tests share: where screenshots go, the built site, Chromium."""

from __future__ import annotations

import os
import shutil
import tempfile
from dataclasses import dataclass
from pathlib import Path

import pytest

# kept after the run, outside the repository ($EVALHOUSE_TEST_ARTIFACTS, else the temporary folder)
SHOTS = Path(os.environ.get("EVALHOUSE_TEST_ARTIFACTS", Path(tempfile.gettempdir()) / "evalhouse-test-artifacts"))
SHOTS = SHOTS / "site-screenshots"


@dataclass(frozen=True)
class Explorer:
    """A built site: the warehouse it was built from, its folder, and what 'site --json' printed."""

    db: Path
    site: Path
    summary: dict


def chromium() -> str:
    for name in ("chromium", "chromium-browser"):
        found = shutil.which(name)
        if found:
            return found
    pytest.skip("no Chromium on this machine: 'make test' installs Debian's package (scripts/ensure-chromium)")


def shot(page, name: str) -> None:
    SHOTS.mkdir(parents=True, exist_ok=True)
    page.screenshot(path=str(SHOTS / f"{name}.png"), full_page=False)
    assert (SHOTS / f"{name}.png").stat().st_size > 10_000
