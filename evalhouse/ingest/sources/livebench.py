"""LiveBench: every release the project lists, one table per release, each release its own version.

Three hops, each a pure function of the payload before it (:func:`follow`):

1. ``changelog.md`` of the LiveBench repository, the release history the site links to ("View Full
   Changelog"): one ``### YYYY-MM-DD`` heading per update. Releases are discovered there, never
   listed in evalhouse. Not every heading published a table (2024-06-12 was the launch, 2025-10-03 a
   re-run of one category), so each is *probed*;
2. ``categories_<release>.json`` on the site (``{category: [task, ...]}``), asked for as an
   optional request: a heading the site has no categories for is counted absent, not missing;
3. ``table_<release>.csv`` (one row per model, one percent column per task), asked for with the
   release's categories in its label, so the table's parse knows which columns LiveBench declares
   as tasks and in which category.

Every task column the release's categories list is *declared*: its results carry the declaration
(``records.DECLARED_BENCHMARK``), so a task the registry does not know yet (``cta``,
``theory_of_mind``, ``integrals_with_game``) is registered as a new benchmark with a recorded
decision instead of being quarantined; in a refresh, a column the categories do not list is not
declared and is refused like any unmapped name. A table ingested on its own (``evalhouse ingest
livebench table_<release>.csv``: no categories came with it) declares its own task columns.

Releases replace questions, so a task's score in two releases is two cells (setup
``benchmark_version``). The task columns are the source's values; evalhouse does not compute
category or global averages. LiveBench runs every model itself: benchmark creator.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import (
    EmptyPlaceholder,
    FetchMeta,
    LayoutChanged,
    ParseError,
    Recording,
    SourceSpec,
    SourceState,
)
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import DECLARED_BENCHMARK, ParseFailure, ParseItem

CHANGELOG = "https://raw.githubusercontent.com/LiveBench/LiveBench/main/changelog.md"
BASE = "https://livebench.ai/"
_HEADING = re.compile(r"^###\s+(\d{4})-(\d{2})-(\d{2})\s*$", re.MULTILINE)
#: Releases recorded for the replay mirror: the site's ten tables (gh-pages, 2026-06-30). The two
#: in the pinned datasets folder are read from there, the other eight from tests/fixtures.
_SHARED = ("2024_11_25", "2025_04_02")
_RECORDED = (
    "2024_06_24",
    "2024_07_26",
    "2024_08_31",
    "2024_11_25",
    "2025_04_02",
    "2025_04_25",
    "2025_05_30",
    "2025_11_25",
    "2025_12_23",
    "2026_01_08",
)


def _recorded(name: str, release: str) -> str:
    if release in _SHARED:
        return f"shared:datasets/real-payloads-2026-12/livebench/{name}"
    return f"fixtures:livebench/site/{name}"


_REPLAY = (
    (CHANGELOG, "fixtures:livebench/changelog.md"),
    *(
        (f"{BASE}{kind}_{r}.{ext}", _recorded(f"{kind}_{r}.{ext}", r))
        for r in _RECORDED
        for kind, ext in (("categories", "json"), ("table", "csv"))
    ),
)

SOURCE = SourceSpec(
    key="livebench",
    name="LiveBench",
    kind="leaderboard",
    tier=1,
    organisation="LiveBench (Abacus.AI, NYU and others)",
    homepage="https://livebench.ai",
    default_urls=(CHANGELOG,),
    cadence="weekly",
    parser_version="livebench/2",
    collection="livebench",
    description=(
        "LiveBench's own runs of every release its changelog lists, per task (reasoning, coding, "
        "agentic coding, mathematics, data analysis, language, instruction following)."
    ),
    licence="LiveBench results (Apache-2.0 repository)",
    declares_benchmarks=True,
    verified_on=Recording(
        repository=(
            "LiveBench/livebench.github.io (gh-pages: the site's table_*.csv, categories_*.json)"
            " + LiveBench/LiveBench (changelog.md)"
        ),
        commit="f98ae14c77fb761f63cae05459c05395e83119a3",
        recorded="2026-06-30",
        licence="Apache-2.0 (LiveBench repository; the site repository has no licence file)",
        files=tuple(file for _, file in _REPLAY),
        replay=_REPLAY,
    ),
)
BOARD = Board(SOURCE, "benchmark_creator", "livebench")
#: Ten tables share the run's row count, so losing half of the largest is under a tenth of the
#: board: a release's tables only ever gain models, so a shrink of 5% already fails the run.
DRIFT = {"max_row_drop": 0.05}


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=CHANGELOG, label="changelog", **state.conditional(CHANGELOG))]


def releases(text: str) -> list[str]:
    """Every ``### YYYY-MM-DD`` heading of the changelog, as ``YYYY_MM_DD``, newest first."""
    found = {f"{y}_{m}_{d}" for y, m, d in _HEADING.findall(text)}
    return sorted(found, reverse=True)


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """changelog -> each release's categories (a probe) -> that release's table, labelled with them."""
    kind, release, _ = _label(meta)
    if kind == "changelog":
        text = common.decode_text(body, "the LiveBench changelog")
        return [
            FetchRequest(url=f"{BASE}categories_{r}.json", label=f"categories:{r}", optional=True)
            for r in releases(text)
        ]
    if kind == "categories":
        categories = _categories(body, release)
        label = f"table:{release}:" + json.dumps(categories, separators=(",", ":"), ensure_ascii=False)
        return [FetchRequest(url=f"{BASE}table_{release}.csv", label=label)]
    return []


def _label(meta: FetchMeta) -> tuple[str, str, str]:
    """``(kind, release, categories JSON)`` from the label (``table:2025_04_02:{...}``), or from
    the file name when the payload was ingested from a file (no label: no categories)."""
    label = meta.label or ""
    if label == "changelog" or (not label and meta.url.endswith("changelog.md")):
        return "changelog", "", ""
    if ":" in label:
        kind, _, rest = label.partition(":")
        release, _, categories = rest.partition(":")
        return kind, release, categories
    stem = meta.url.rsplit("/", 1)[-1].rsplit(".", 1)[0]
    kind, _, release = stem.partition("_")
    return kind, release, ""


def _categories(body: bytes, release: str) -> dict[str, list[str]]:
    text = common.decode_text(body, f"categories_{release}.json")
    try:
        doc = json.loads(text)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"categories_{release}.json is not JSON: {exc}") from exc
    if (
        not isinstance(doc, dict)
        or not doc
        or not all(isinstance(v, list) and all(isinstance(t, str) for t in v) for v in doc.values())
    ):
        raise LayoutChanged(f"layout changed: categories_{release}.json is not {{category: [task, ...]}}")
    return doc


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    kind, release, categories = _label(meta)
    if kind == "changelog":
        if not releases(common.decode_text(body, "the LiveBench changelog")):
            raise LayoutChanged("layout changed: the LiveBench changelog has no '### YYYY-MM-DD' release heading")
        return
    if kind == "categories":
        _categories(body, release)  # checked here; its tasks travel to the table in the table's label
        return
    if kind != "table" or not release:
        raise LayoutChanged(f"layout changed: {meta.url} is neither the changelog, a categories file nor a table")
    declared = _declared(categories, release)
    text = common.decode_text(body, f"table_{release}.csv")
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(f"table_{release}.csv is not readable CSV: {exc}") from exc
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: table_{release}.csv has no rows")
    if "model" not in rows[0]:
        raise LayoutChanged(f"layout changed: table_{release}.csv has no 'model' column")
    for n, row in enumerate(rows, start=1):
        locator = f"table_{release}.csv row {n}"
        if None in row:  # csv.DictReader keeps the fields past the header under the key None
            extra = len(row[None]) if isinstance(row[None], list) else 1
            cells = {k if k is not None else "(past the header)": v for k, v in row.items()}
            yield ParseFailure(locator, f"row has {extra} more field(s) than the header", common.row_payload(cells))
            continue
        yield from _row(row, release, declared, locator, meta)


def _declared(categories: str, release: str) -> dict[str, str] | None:
    """``{task: category}`` of the release's categories, as the table's label carries them; None
    when none came with the table (it was ingested on its own)."""
    if not categories:
        return None
    try:
        doc = json.loads(categories)
    except json.JSONDecodeError as exc:
        raise ParseError(f"the label of table_{release}.csv carries unreadable categories: {exc}") from exc
    return {task: category for category, tasks in doc.items() for task in tasks}


def _row(
    row: Mapping[str, str], release: str, declared: Mapping[str, str] | None, locator: str, meta: FetchMeta
) -> Iterator[ParseItem]:
    payload = common.lazy_payload(row)
    version = release.replace("_", "-")
    results = []
    for task, value in row.items():
        if task == "model" or value is None or not value.strip():  # a short row's missing cells are empty,
            continue  # as the site shows them (table_2026_01_08.csv has one: nemotron-3-super-120b-a12b)
        try:
            score = common.parse_number(value, "percent")
        except CellError as exc:
            yield ParseFailure(f"{locator} column {task!r}", str(exc), payload())
            continue
        result = BOARD.result(
            meta.url,
            dataset_name=f"LiveBench: {task}",
            metric_id="score",
            metric_name=f"{task} score",
            unit="percent",
            bounds=(0.0, 100.0),
            score=score,
            setup={"benchmark_version": version},
        )
        if declared is None:  # a table on its own: its header declares its task columns
            result["source_data"]["additional_details"] = {
                DECLARED_BENCHMARK: f"LiveBench task {task!r}, a column of the site's table_<release>.csv"
            }
        elif task in declared:
            result["source_data"]["additional_details"] = {
                DECLARED_BENCHMARK: (
                    f"LiveBench task {task!r} in its {declared[task]} category, as the site's "
                    "categories file of each release lists it"
                ),
                "livebench_category": declared[task],
            }
        results.append(result)
    name = row["model"].strip()
    yield BOARD.record(
        meta, Model(id=name, name=name, details={"livebench_release": version}), results, (locator, payload)
    )
