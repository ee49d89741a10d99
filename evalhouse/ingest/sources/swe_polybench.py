"""SWE-PolyBench leaderboards: ``template/polybench_data.json`` of the project's site.

The site (the ``gh-pages`` branch of amazon-science/SWE-PolyBench) is generated from
``polybench_data.json``: ``{"leaderboards": [{"name", "results": [...]}]}`` with three boards,
``Full`` (2,110 tasks), ``PolyBench500`` (a 500-task sample) and ``Verified``. Each result is one
agent system: ``name``, ``organization``, ``date``, ``site`` and, in percent, ``resolved`` overall
and per language (``resolved_py``, ``_js``, ``_ts``, ``_java``), the resolve rate by the kind of
change the fix needs (``resolved_rate_single_func``, ``_func_only``, ``_single_class``,
``_class_only``, ``_none``, ``_mixed``), and retrieval quality of the edited files and syntax
nodes (``file_precision_all`` / ``_<language>``, ``file_recall_…``, ``node_precision_…``,
``node_recall_…``). A ``"-"`` marks a value the system did not report.

Each value is a cell of the board's benchmark; a language or change kind is its subset. The
system is the record's model (the boards name systems, not models). Who measured: the
SWE-PolyBench authors adapted and ran the ``-PB`` baselines (benchmark creator); the other
systems are submissions (community).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.ingest.sources._payloads import json_document
from evalhouse.schema.records import SOURCE_RECORD_ID, ParseFailure, ParseItem

URL = "https://raw.githubusercontent.com/amazon-science/SWE-PolyBench/gh-pages/template/polybench_data.json"
BOARDS: Mapping[str, str] = {
    "Full": "SWE-PolyBench",
    "PolyBench500": "SWE-PolyBench 500",
    "Verified": "SWE-PolyBench Verified",
}
ABSENT = "-"
LANGUAGES: Mapping[str, str] = {"py": "Python", "js": "JavaScript", "ts": "TypeScript", "java": "Java"}
#: a field name -> (metric id, subset); resolved_<language>, resolved_rate_<kind>,
#: <file|node>_<precision|recall>_<all|language>
_RESOLVED = re.compile(r"resolved(?:_(py|js|ts|java))?")
_KIND = re.compile(r"resolved_rate_(single_func|func_only|single_class|class_only|none|mixed)")
_RETRIEVAL = re.compile(r"(file|node)_(precision|recall)_(all|py|js|ts|java)")
FACTS = ("name", "organization", "org_logo", "date", "logs", "trajs", "site")

SOURCE = SourceSpec(
    key="swe-polybench",
    name="SWE-PolyBench leaderboards",
    kind="leaderboard",
    tier=2,
    organisation="Amazon Science (SWE-PolyBench)",
    homepage="https://amazon-science.github.io/SWE-PolyBench/",
    default_urls=(URL,),
    cadence="weekly",
    parser_version="swe-polybench/1",
    collection="swe-polybench",
    description=(
        "SWE-PolyBench (Full, PB500, Verified): percent resolved overall, per language (Python, "
        "JavaScript, TypeScript, Java) and per kind of change, and file / syntax-node retrieval "
        "precision and recall, per agent system."
    ),
    licence="CC BY-NC 4.0 (the site branch); MIT (the code)",
    verified_on=Recording(
        repository="amazon-science/SWE-PolyBench (branch gh-pages, the leaderboard site)",
        commit="fe4a40b9ac0e14866ef9566c7f0dff33cfdfcb9f",
        recorded="2026-06-16",
        licence="CC BY-NC 4.0",
        files=("fixtures:swe-polybench/polybench_data.json",),
        replay=((URL, "fixtures:swe-polybench/polybench_data.json"),),
    ),
)
ROLES = {role: Board(SOURCE, role, "swe-polybench") for role in ("benchmark_creator", "community")}


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboards", **state.conditional(URL))]


def cell_kind(field: str) -> tuple[str, str | None] | None:
    """``(metric id, subset)`` of a measurement field, else None."""
    if m := _RESOLVED.fullmatch(field):
        return "pass_rate", LANGUAGES[m.group(1)] if m.group(1) else None
    if m := _KIND.fullmatch(field):
        return "pass_rate", f"change: {m.group(1).replace('_', ' ')}"
    if m := _RETRIEVAL.fullmatch(field):
        level, measure, scope = m.groups()
        return f"{measure}.{level}", None if scope == "all" else LANGUAGES[scope]
    return None


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = json_document(body, "the SWE-PolyBench data JSON")
    boards = doc.get("leaderboards") if isinstance(doc, dict) else None
    if not isinstance(boards, list):
        raise LayoutChanged("layout changed: no 'leaderboards' list in the SWE-PolyBench data file")
    if not boards:
        raise EmptyPlaceholder("empty placeholder: the SWE-PolyBench data file lists no leaderboard")
    for board in boards:
        name = board.get("name") if isinstance(board, dict) else None
        results = board.get("results") if isinstance(board, dict) else None
        if name not in BOARDS or not isinstance(results, list):
            yield ParseFailure(
                f"leaderboards[{name!r}]",
                f"unknown leaderboard {name!r} (known: {sorted(BOARDS)}) or no 'results' list",
                common.row_payload({"name": name}),
            )
            continue
        for i, entry in enumerate(results):
            yield from _entry(BOARDS[name], entry, f"{name}[{i}]", meta)


def _entry(dataset: str, entry: Any, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(entry if isinstance(entry, dict) else {"value": entry})
    if not isinstance(entry, dict) or not entry.get("name"):
        yield ParseFailure(locator, "a result needs a 'name'", payload)
        return
    name = str(entry["name"])
    role = "benchmark_creator" if "-PB" in name else "community"
    results = []
    for field, value in entry.items():
        if field in FACTS:
            continue
        kind = cell_kind(field)
        if kind is None:
            yield ParseFailure(f"{locator}.{field}", f"unknown field {field!r}", payload)
            continue
        if value == ABSENT or value is None:
            continue
        try:
            score = common.parse_number(value, "percent")
        except CellError as exc:
            yield ParseFailure(f"{locator}.{field}", str(exc), payload)
            continue
        metric, subset = kind
        results.append(
            ROLES[role].result(
                meta.url,
                dataset_name=dataset,
                evaluation_name=f"{dataset} - {subset}" if subset else dataset,
                result_id=f"{name}.{field}",
                metric_id=metric,
                metric_name=field,
                unit="percent",
                bounds=(0.0, 100.0),
                score=score,
                details={SOURCE_RECORD_ID: name},
            )
        )
    facts = {"organization": common.fact_text(entry.get("organization")), "site": common.fact_text(entry.get("site"))}
    yield ROLES[role].record(
        meta,
        Model(id=name, name=name, details=facts),
        results,
        (locator, payload),
        evaluation_timestamp=str(entry["date"]) if entry.get("date") else None,
    )
