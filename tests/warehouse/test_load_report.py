"""A run's report is the loader's report, field for field; a run that loads nothing needs no loader."""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, fields

import pytest

from evalhouse.warehouse import load
from evalhouse.warehouse.load_report import LoadReport, as_run_report


def test_the_run_report_has_the_loader_s_fields_and_takes_its_values() -> None:
    assert [f.name for f in fields(LoadReport)] == [f.name for f in fields(load.LoadReport)]
    theirs = load.LoadReport(records_read=3, records_loaded=2, scores_quarantined=1, parse_failures=1)
    theirs.fingerprints.append("ab")
    theirs.reasons["no score"] += 2
    ours = as_run_report(theirs)
    assert isinstance(ours, LoadReport) and ours.as_dict() == theirs.as_dict()
    assert ours.quarantined == theirs.quarantined == 2 and ours.fingerprints is theirs.fingerprints
    assert LoadReport().as_dict() == load.LoadReport().as_dict()
    assert as_run_report(ours) is ours


def test_a_report_that_drifted_from_the_run_report_fails_loudly() -> None:
    @dataclass
    class Wider:
        records_read: int = 0
        records_replaced: int = 0
        reasons: Counter[str] | None = None

    with pytest.raises(TypeError, match="records_replaced"):
        as_run_report(Wider())
