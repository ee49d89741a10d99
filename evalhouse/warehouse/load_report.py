"""What a run's load counted, as the run carries it (:class:`evalhouse.pipeline.ledger.RunResult`).

A run that loads nothing (a quiet night's ``unchanged``, a fetch that failed) still has a report,
all zeros; building it must not import the loader (:mod:`evalhouse.warehouse.load`: pydantic, the
EEE models, model-name resolution — a third of a quiet night). :class:`LoadReport` has the fields of
the loader's report of the same name; :func:`as_run_report` takes the loader's report into it,
field by field, and fails loudly should the two ever differ. (The loader may import this class
and return it, which makes the copy the report itself.)
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field, fields
from typing import Any


@dataclass
class LoadReport:
    records_read: int = 0
    records_loaded: int = 0
    records_duplicate: int = 0
    records_quarantined: int = 0
    records_migrated: int = 0
    scores_read: int = 0
    scores_loaded: int = 0
    scores_quarantined: int = 0
    scores_in_duplicates: int = 0
    scores_in_quarantined_records: int = 0
    parse_failures: int = 0
    fingerprints: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)

    @property
    def quarantined(self) -> int:
        return self.records_quarantined + self.scores_quarantined + self.parse_failures

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in {"fingerprints", "reasons"}}
        d["quarantine_reasons"] = dict(self.reasons.most_common(20))
        return d


def as_run_report(report: Any) -> LoadReport:
    """The loader's report as a :class:`LoadReport` (the same values; lists and counters shared).

    Raises TypeError when the loader's report has a field this one lacks, or lacks one it has:
    then the two classes have drifted apart and this one must follow.
    """
    if isinstance(report, LoadReport):
        return report
    theirs = {f.name for f in fields(report)}
    ours = {f.name for f in fields(LoadReport)}
    if theirs != ours:
        raise TypeError(f"the loader's report and LoadReport differ: {sorted(theirs ^ ours)}")
    return LoadReport(**{name: getattr(report, name) for name in ours})
