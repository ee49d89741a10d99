"""The great-expectations project beside the warehouse: results kept there, Data Docs built."""

from __future__ import annotations

import json
from pathlib import Path

from clirunner import CliRunner
from realwarehouse import copy_warehouse

from evalhouse.cli import app
from evalhouse.warehouse.checks.suites import CHECKS, data_docs_index, project_dir

runner = CliRunner()


def test_validate_keeps_results_in_the_project_and_builds_data_docs(real_warehouse: Path, tmp_path: Path) -> None:
    db = copy_warehouse(real_warehouse, tmp_path)
    project = project_dir(db)
    assert project == tmp_path / "w.gx" and data_docs_index(db) is None
    for _ in range(2):
        result = runner.invoke(app, ["--db", str(db), "validate", "--json"])
        assert result.exit_code == 0, result.output
    assert (project / "gx" / "great_expectations.yml").is_file()
    suites = {f"{c.suite}.{c.frame}" for c in CHECKS}
    stored = {
        p.relative_to(project / "gx" / "expectations").with_suffix("").as_posix().replace("/", ".")
        for p in (project / "gx" / "expectations").rglob("*.json")
    }
    assert suites <= stored
    results = list((project / "gx" / "uncommitted" / "validations").rglob("*.json"))
    assert len(results) == 2 * len(suites)  # both runs are kept, one result per suite each
    for path in results:
        assert json.loads(path.read_text())["success"] in (True, False)
    docs = runner.invoke(app, ["--db", str(db), "validate", "--docs", "--json"])
    assert docs.exit_code == 0, docs.output
    index = Path(json.loads(docs.stdout)["data_docs"])
    assert index == data_docs_index(db) and index.is_file()
    pages = list((index.parent / "validations").rglob("*.html"))
    assert len(pages) == 3 * len(suites)
    assert "Data Docs created by Great Expectations" in index.read_text()
