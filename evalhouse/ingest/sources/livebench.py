"""LiveBench: one table per release, each release its own benchmark version.

Per release the site publishes ``table_<release>.csv`` (one row per model, one column per task,
percent scores) and ``categories_<release>.json`` (category -> its tasks). Releases replace
questions, so a task's score in 2024-11-25 and in 2025-04-02 are different cells
(``benchmark_version``). The task columns are the source's values; evalhouse does not compute
category or global averages from them. The categories file is checked (every task it names)
and kept in the raw store. LiveBench runs every model itself: benchmark creator.
"""

from __future__ import annotations

import csv
import io
import json
from collections.abc import Iterator, Mapping

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, ParseError, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._board import Board, Model
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ParseFailure, ParseItem

BASE = "https://livebench.ai/"
RELEASES = ("2024_11_25", "2025_04_02")

SOURCE = SourceSpec(
    key="livebench",
    name="LiveBench",
    kind="leaderboard",
    tier=1,
    organisation="LiveBench (Abacus.AI, NYU and others)",
    homepage="https://livebench.ai",
    default_urls=tuple(f"{BASE}table_{r}.csv" for r in RELEASES),
    cadence="weekly",
    parser_version="livebench/1",
    collection="livebench",
    description=(
        "LiveBench's own runs, per release and task (reasoning, coding, mathematics, data analysis, "
        "language, instruction following)."
    ),
    licence="LiveBench results (Apache-2.0 repository)",
)
BOARD = Board(SOURCE, "benchmark_creator", "livebench")


def plan(state: SourceState) -> list[FetchRequest]:
    requests = []
    for release in RELEASES:
        for kind, name in (("categories", f"categories_{release}.json"), ("table", f"table_{release}.csv")):
            url = BASE + name
            requests.append(FetchRequest(url=url, label=f"{kind}:{release}", **state.conditional(url)))
    return requests


def _release(meta: FetchMeta) -> tuple[str, str]:
    label = meta.label or ""
    if ":" in label:
        kind, release = label.split(":", 1)
        return kind, release
    name = meta.url.rsplit("/", 1)[-1]
    stem = name.rsplit(".", 1)[0]
    kind, _, release = stem.partition("_")
    return kind, release


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    kind, release = _release(meta)
    text = common.decode_text(body, f"the LiveBench {kind} file")
    if kind == "categories":
        try:
            doc = json.loads(text)
        except (json.JSONDecodeError, RecursionError) as exc:
            raise ParseError(f"categories_{release}.json is not JSON: {exc}") from exc
        if not isinstance(doc, dict) or not all(isinstance(v, list) for v in doc.values()):
            raise LayoutChanged(f"layout changed: categories_{release}.json is not {{category: [tasks]}}")
        return
    try:
        rows = list(csv.DictReader(io.StringIO(text, newline="")))
    except csv.Error as exc:
        raise ParseError(f"the LiveBench table is not readable CSV: {exc}") from exc
    if not rows:
        raise EmptyPlaceholder(f"empty placeholder: table_{release}.csv has no rows")
    if "model" not in rows[0]:
        raise LayoutChanged(f"layout changed: table_{release}.csv has no 'model' column")
    for n, row in enumerate(rows, start=1):
        if None in row:  # csv.DictReader keeps the fields past the header under the key None
            extra = len(row[None]) if isinstance(row[None], list) else 1
            cells = {k if k is not None else "(past the header)": v for k, v in row.items()}
            yield ParseFailure(
                f"table_{release}.csv row {n}",
                f"row has {extra} more field(s) than the header",
                common.row_payload(cells),
            )
            continue
        yield from _row(row, release, f"table_{release}.csv row {n}", meta)


def _row(row: Mapping[str, str], release: str, locator: str, meta: FetchMeta) -> Iterator[ParseItem]:
    payload = common.row_payload(row)
    version = release.replace("_", "-")
    results = []
    for task, value in row.items():
        if task == "model" or value is None or not value.strip():
            continue
        try:
            score = common.parse_number(value, "percent")
        except CellError as exc:
            yield ParseFailure(f"{locator} column {task!r}", str(exc), payload)
            continue
        results.append(
            BOARD.result(
                meta.url,
                dataset_name=f"LiveBench: {task}",
                metric_id="score",
                metric_name=f"{task} score",
                unit="percent",
                bounds=(0.0, 100.0),
                score=score,
                setup={"benchmark_version": version},
            )
        )
    name = row["model"].strip()
    yield BOARD.record(
        meta, Model(id=name, name=name, details={"livebench_release": version}), results, (locator, payload)
    )
