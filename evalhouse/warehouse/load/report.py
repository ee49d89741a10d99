"""What a run's load counted, as the run carries it (:class:`evalhouse.warehouse.load.ledger.RunResult`).

A run that loads nothing (a quiet night's ``unchanged``, a fetch that failed) still has a report,
all zeros; building it must not import the loader (:mod:`evalhouse.warehouse.load.records`: pydantic, the
EEE models, model-name resolution — a third of a quiet night), so the class lives here and the
loader fills one.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
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
    facts_quarantined: int = 0  # model facts refused alone (a release date of 1900), their record loaded
    fingerprints: list[str] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)
    first_reason: str | None = None  # the first quarantine reason whole (``reasons`` keeps its kind)

    @property
    def quarantined(self) -> int:
        return self.records_quarantined + self.scores_quarantined + self.parse_failures + self.facts_quarantined

    def as_dict(self) -> dict[str, Any]:
        d = {k: v for k, v in self.__dict__.items() if k not in {"fingerprints", "reasons", "first_reason"}}
        d["quarantine_reasons"] = dict(self.reasons.most_common(20))
        return d
