"""Extraction quality of paper tables: precision, recall and micro-F1 against hand labels.

A triple is (model, benchmark, value). Models are compared through the identity layer (the
configuration key :func:`evalhouse.curation.names.resolve` gives), benchmarks by registry
id, values as printed (to 1e-9). Tables are scored one by one and pooled (micro) over all
triples. The published anchor: AxCell reports end-to-end micro-F1 28.7 on Papers with Code
leaderboards (a harder, open-world task: its tables are real and unlabelled for it).
"""

from __future__ import annotations

import csv
import io
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from evalhouse.curation.names import resolve
from evalhouse.curation.registry import load_registry

AXCELL_MICRO_F1 = 0.287


@dataclass(frozen=True)
class Triple:
    paper: str
    table: str
    model: str
    benchmark: str
    value: float

    def key(self) -> tuple[str, str, str, str, float]:
        model = resolve(self.model, load_registry(), source="papers").configuration
        return (self.paper, self.table, model, self.benchmark, round(self.value, 9))


@dataclass(frozen=True)
class Score:
    paper: str
    table: str
    expected: int
    extracted: int
    correct: int

    @property
    def precision(self) -> float | None:
        return self.correct / self.extracted if self.extracted else None

    @property
    def recall(self) -> float | None:
        return self.correct / self.expected if self.expected else None

    @property
    def f1(self) -> float | None:
        p, r = self.precision, self.recall
        if p is None or r is None:
            return None
        return 0.0 if p + r == 0 else 2 * p * r / (p + r)


def read_labels(text: str) -> list[Triple]:
    """``paper,table,model,benchmark,value`` CSV (``#`` lines are comments)."""
    rows = csv.DictReader(io.StringIO("\n".join(line for line in text.splitlines() if not line.startswith("#"))))
    return [Triple(r["paper"], r["table"], r["model"], r["benchmark"], float(r["value"])) for r in rows]


def score(extracted: Iterable[Triple], gold: Iterable[Triple], tables: Sequence[tuple[str, str]] = ()) -> list[Score]:
    """One :class:`Score` per table (every table named in ``tables``, gold or extracted)."""
    ext = {t.key() for t in extracted}
    want = {t.key() for t in gold}
    names = list(dict.fromkeys([*tables, *sorted({k[:2] for k in ext | want})]))
    out = []
    for paper, table in names:
        e = {k for k in ext if k[:2] == (paper, table)}
        g = {k for k in want if k[:2] == (paper, table)}
        out.append(Score(paper, table, len(g), len(e), len(e & g)))
    return out


def micro(scores: Sequence[Score]) -> Score:
    return Score(
        "all",
        "all",
        sum(s.expected for s in scores),
        sum(s.extracted for s in scores),
        sum(s.correct for s in scores),
    )


def report(scores: Sequence[Score]) -> str:
    """A plain-text table of the per-table scores and the micro average (log-file friendly)."""

    def fmt(x: float | None) -> str:
        return "  n/a" if x is None else f"{x:5.3f}"

    lines = [f"{'paper':<14}{'table':>6}{'expected':>10}{'extracted':>11}{'correct':>9}  precision  recall  F1"]
    for s in [*scores, micro(scores)]:
        lines.append(
            f"{s.paper:<14}{s.table:>6}{s.expected:>10}{s.extracted:>11}{s.correct:>9}  "
            f"{fmt(s.precision):>9}  {fmt(s.recall):>6}  {fmt(s.f1)}"
        )
    return "\n".join(lines)
