"""What the explorer shows, read from a verified snapshot in a few set-based queries.

Every page is rendered from these rows; no page queries the snapshot on its own, so a site of
10^5 scores takes a handful of queries, not one per score.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any

import duckdb

from evalhouse.common.naming import slug
from evalhouse.common.resources import read_sql


def records(con: duckdb.DuckDBPyConnection, name: str) -> list[dict[str, Any]]:
    cur = con.execute(read_sql("evalhouse.site", name))
    cols = [d[0] for d in cur.description]
    out = []
    while chunk := cur.fetchmany(10_000):
        out.extend(dict(zip(cols, row, strict=True)) for row in chunk)
    return out


def page_name(kind: str, ident: str) -> str:
    """A stable, readable, collision-free file name: ``models/openai-gpt-4o-3f2a1c.html``.

    The hash suffix keeps ids apart that slug alike ("a/b" and "a-b")."""
    digest = hashlib.sha256(ident.encode()).hexdigest()[:6]
    return f"{kind}/{slug(ident, keep='.', default='x')[:80]}-{digest}.html"


@dataclass
class Board:
    """One leaderboard of a benchmark: its cells on the canonical metric for one subset x metric
    parameters x setup, best first (``rank`` with ties)."""

    benchmark_id: str
    subset: str | None
    metric_params_key: str
    setup_key: str
    main: bool  # the benchmark's own board: the whole benchmark, in the setup most models have
    cells: list[dict[str, Any]] = field(default_factory=list)

    @property
    def key(self) -> str:
        return "\x1f".join((self.benchmark_id, self.subset or "", self.metric_params_key, self.setup_key))

    @property
    def setup(self) -> str | None:
        """The setup of the board's cells as JSON (every cell of a board has the same setup)."""
        return next((c["setup"] for c in self.cells if c.get("setup")), None)


@dataclass
class SiteData:
    """Rows for every page, grouped the way the pages use them."""

    snapshot: dict[str, Any]
    summary: dict[str, Any]
    sources: list[dict[str, Any]]
    base_models: list[dict[str, Any]]
    benchmarks: list[dict[str, Any]]
    configurations: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by base model
    scores: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by base model
    by_evaluation: dict[str, list[dict[str, Any]]] = field(default_factory=dict)
    cells: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by benchmark
    boards: dict[str, list[Board]] = field(default_factory=dict)  # by benchmark, its main board first
    candidates: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by cell, cells of 2+ rows
    decisions: dict[tuple[str, str], list[dict[str, Any]]] = field(default_factory=dict)  # (about, key)
    evidence: dict[str, list[dict[str, Any]]] = field(default_factory=dict)  # by base model
    score_pages: dict[int, str] = field(default_factory=dict)  # score id -> audit page#anchor

    def model_page(self, base_model_id: str) -> str:
        return page_name("models", base_model_id)

    def benchmark_page(self, benchmark_id: str) -> str:
        return page_name("benchmarks", benchmark_id)

    def board_page(self, board: Board) -> str:
        """The main board is the benchmark's page; every other board has a page of its own."""
        return self.benchmark_page(board.benchmark_id) if board.main else page_name("boards", board.key)

    def audit_page(self, evaluation_id: str) -> str:
        return page_name("audit", evaluation_id)


def _group(rows: list[dict[str, Any]], key: str) -> dict[str, list[dict[str, Any]]]:
    grouped: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for row in rows:
        grouped[row[key]].append(row)
    return dict(grouped)


def boards_of(cells: list[dict[str, Any]]) -> dict[str, list[Board]]:
    """The boards of each benchmark (cells arrive ordered by benchmark, board and rank): the main
    board first, then the others by subset, metric parameters and setup."""
    boards: dict[str, dict[tuple[str, str, str], Board]] = defaultdict(dict)
    for c in cells:
        key = (c["subset_key"], c["metric_params_key"], c["setup_key"])
        board = boards[c["benchmark_id"]].get(key)
        if board is None:
            board = Board(c["benchmark_id"], c["subset"], c["metric_params_key"], c["setup_key"], bool(c["main_board"]))
            boards[c["benchmark_id"]][key] = board
        board.cells.append(c)
    return {
        bid: sorted(found.values(), key=lambda b: (not b.main, b.subset or "", b.metric_params_key, b.setup_key))
        for bid, found in boards.items()
    }


def load(con: duckdb.DuckDBPyConnection) -> SiteData:
    """Read a snapshot connection (from :func:`evalhouse.open_snapshot`) into :class:`SiteData`."""
    meta = records(con, "site_meta.sql")[0]
    data = SiteData(
        snapshot=meta,
        summary=records(con, "site_summary.sql")[0],
        sources=records(con, "site_sources.sql"),
        base_models=records(con, "site_base_models.sql"),
        benchmarks=records(con, "site_benchmarks.sql"),
    )
    data.configurations = _group(records(con, "site_configurations.sql"), "base_model_id")
    scores = records(con, "site_scores.sql")
    for s in scores:
        s["steps"] = json.loads(s.pop("canonical_steps") or "[]")
    data.scores = _group(scores, "base_model_id")
    data.by_evaluation = _group(scores, "evaluation_id")
    data.score_pages = {s["score_id"]: f"{data.audit_page(s['evaluation_id'])}#score-{s['score_id']}" for s in scores}
    cells = records(con, "site_benchmark_cells.sql")
    decided = _decisions(con)
    for row in (*scores, *cells):
        row["decided_by"], row["decision"] = decided.get(row["cell_id"], (None, None))
    data.cells = _group(cells, "benchmark_id")
    data.boards = boards_of(cells)
    data.candidates = _group(records(con, "site_cell_candidates.sql"), "cell_id")
    decisions: dict[tuple[str, str], list[dict[str, Any]]] = defaultdict(list)
    for d in records(con, "site_decisions.sql"):
        decisions[(d["about"], d["subject_key"])].append(d)
    data.decisions = dict(decisions)
    data.evidence = _group(records(con, "site_release_evidence.sql"), "base_model_id")
    return data


def _decisions(con: duckdb.DuckDBPyConnection) -> dict[str, tuple[str, str]]:
    """``cell_id -> (decided_by, decision)`` of the cells with several candidates; empty for a
    snapshot made before the canonical view said which rule decided."""
    try:
        found = records(con, "site_cell_decisions.sql")
    except duckdb.BinderException:
        return {}
    return {r["cell_id"]: (r["decided_by"], r["decision"]) for r in found}
