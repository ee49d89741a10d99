"""Paper-table extraction quality: micro-F1 of (model, benchmark, value) triples vs hand labels.

Reads the authored ar5iv-style fixtures in tests/fixtures/papers with the real `papers` parser,
scores the extracted triples against labels.csv, and prints the per-table breakdown, the micro
precision / recall / F1 over the well-formed tables and over all tables, the ratio against the
published anchor (AxCell's end-to-end micro-F1 28.7 on Papers with Code leaderboards - an
open-world task on real papers, so the ratio is context, not a like-for-like comparison), and
the CPU time of the extraction. Usage: `.venv/bin/python benchmarks/papers.py [REPEAT]`.
"""

from __future__ import annotations

import csv
import io
import sys
import time
from pathlib import Path

from evalhouse.ingest.sources import _paper_quality as quality
from evalhouse.ingest.sources import papers

FIXTURES = Path(__file__).resolve().parents[1] / "tests" / "fixtures" / "papers"


def _rows(name: str) -> list[dict[str, str]]:
    text = (FIXTURES / name).read_text("utf-8")
    return list(csv.DictReader(io.StringIO("\n".join(x for x in text.splitlines() if not x.startswith("#")))))


def main(repeat: int = 20) -> None:
    pages = {p: p.read_text("utf-8") for p in sorted(FIXTURES.glob("*.html"))}
    gold = quality.read_labels((FIXTURES / "labels.csv").read_text("utf-8"))
    tables = _rows("tables.csv")
    t0 = time.process_time()
    for _ in range(repeat):
        extracted = [t for p, html in pages.items() for t in papers.triples(papers.read_document(html, p.as_uri()))]
    cpu = (time.process_time() - t0) / repeat
    scores = quality.score(extracted, gold, [(t["paper"], t["table"]) for t in tables])
    print(quality.report(scores))
    well = {(t["paper"], t["table"]) for t in tables if t["well_formed"] == "yes"}
    good = quality.micro([s for s in scores if (s.paper, s.table) in well])
    every = quality.micro(scores)
    print()
    for label, s in (("well-formed tables", good), (f"all {len(tables)} tables", every)):
        print(f"micro-F1, {label}: {s.f1:.3f} (precision {s.precision:.3f}, recall {s.recall:.3f})")
    print(f"ratio vs AxCell micro-F1 {quality.AXCELL_MICRO_F1}: {every.f1 / quality.AXCELL_MICRO_F1:.2f}x")
    print(f"extraction CPU time: {cpu * 1000:.1f} ms for {len(pages)} papers, {len(tables)} tables (mean of {repeat})")


if __name__ == "__main__":
    main(int(sys.argv[1]) if len(sys.argv) > 1 else 20)
