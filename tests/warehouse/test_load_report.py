"""A run's report is the loader's own; a run that loads nothing builds one without the loader."""

from __future__ import annotations

import subprocess
import sys

from evalhouse.warehouse.load import records
from evalhouse.warehouse.load.report import LoadReport


def test_the_loader_fills_the_run_report_class() -> None:
    assert records.LoadReport is LoadReport
    report = LoadReport(records_read=3, records_loaded=2, scores_quarantined=1, parse_failures=1)
    report.reasons["no score"] += 2
    assert report.quarantined == 2
    assert report.as_dict()["quarantine_reasons"] == {"no score": 2}


def test_an_empty_report_does_not_import_the_loader() -> None:
    code = "import sys; from evalhouse.warehouse.load.report import LoadReport; LoadReport().as_dict(); "
    code += "print('evalhouse.warehouse.load.records' in sys.modules, 'pydantic' in sys.modules)"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout
    assert out.split() == ["False", "False"]
