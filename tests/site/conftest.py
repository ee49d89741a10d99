"""The explorer the browser tests read, built once per session (Chromium: the session's ``browser``).

The site is what a user builds after a night's refresh of the pinned sources (Epoch + Artificial
Analysis through the real refresh over loopback), the legacy EEE datastore imported beside them
('evalhouse import-eee'), 'evalhouse validate --docs' and the run report the refresh leaves: built
by the real command with --no-analyses (the analyses' part of a site is tested on a warehouse
whose fits are recorded, in test_site_analyses.py).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from clirunner import CliRunner
from realwarehouse import copy_warehouse
from sitebrowser import Explorer

from evalhouse.cli import app

runner = CliRunner()


@pytest.fixture(scope="session")
def explorer(real_warehouse_with_legacy: Path, tmp_path_factory: pytest.TempPathFactory) -> Explorer:
    from evalhouse.config import raw_store_path
    from evalhouse.pipeline.boards import BoardReader
    from evalhouse.pipeline.changes import changes, reports_dir, write_report
    from evalhouse.warehouse.db import Warehouse
    from evalhouse.warehouse.raw.store import RawStore

    root = tmp_path_factory.mktemp("explorer")
    db = copy_warehouse(real_warehouse_with_legacy, root / "db")  # the legacy tree through 'import-eee'
    with Warehouse.open(db, read_only=True) as wh:  # the run report a refresh leaves beside the warehouse
        write_report(reports_dir(db), changes(wh, BoardReader(RawStore(raw_store_path(db)))))
    validated = runner.invoke(app, ["--db", str(db), "validate", "--docs"])
    assert validated.exit_code == 0, validated.output
    built = runner.invoke(app, ["--db", str(db), "site", str(root / "site"), "--no-analyses", "--json"])
    assert built.exit_code == 0, built.output
    return Explorer(db, root / "site", json.loads(built.stdout))
