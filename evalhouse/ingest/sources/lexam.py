"""LEXam legal-reasoning leaderboard: one HTML page with two ranked tables, crawled by scrapy.

The page (spider ``lexam``) holds two sections located by their heading text - open questions
(an LLM-judge score) and four-choice multiple-choice questions (accuracy) - each a table of
rank / model label / score, both printed as percentages. Labels map to model ids through the
declared table in ``lexam.yaml``. A section whose parsed rows differ from its data rows, or
that repeats a label, fails the page (source-formats.md §C.16). The LEXam authors ran every
evaluation: ``benchmark_creator``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from bs4 import Tag

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import EmptyPlaceholder, FetchMeta, LayoutChanged, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources import _pages as pages
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, ParseFailure, ParseItem

_MAPPING = common.load_mapping("lexam.yaml")
URL: str = _MAPPING["url"]
LABELS: Mapping[str, str] = _MAPPING["labels"]
SECTIONS: list[Mapping[str, Any]] = _MAPPING["sections"]
SPIDER = "lexam"
_MEDALS = re.compile("[\U0001f947\U0001f948\U0001f949]")

SOURCE = SourceSpec(
    key="lexam",
    name="LEXam",
    kind="leaderboard",
    tier=2,
    organisation="LEXam benchmark authors (ETH Zurich and partners)",
    homepage=_MAPPING["homepage"],
    default_urls=(URL,),
    cadence="daily",
    parser_version="lexam/1",
    collection="lexam",
    description=(
        "LEXam's own runs on its legal-reasoning exam questions: open questions scored by an "
        "ensemble of three LLM judges, and four-choice multiple-choice accuracy."
    ),
    licence="see https://lexam-benchmark.github.io/ (page content of the LEXam authors)",
)


def plan(state: SourceState) -> list[FetchRequest]:
    return [FetchRequest(url=URL, label="leaderboard", **state.conditional(URL))]


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    doc = pages.soup(body, "the LEXam page")
    rows: dict[str, list[tuple[Mapping[str, Any], float, str]]] = {}
    failures: list[ParseFailure] = []
    for section in SECTIONS:
        table = _section_table(doc, section["heading"])
        for label, value, locator in _section_rows(table, section, failures):
            rows.setdefault(label, []).append((section, value, locator))
    yield from failures
    for label, cells in rows.items():
        yield from _record(label, cells, meta)


def _section_table(doc: Any, heading: str) -> Tag:
    for h1 in doc.find_all("h1"):
        if pages.cell_text(h1) == heading:
            table = h1.find_next("table")
            next_h1 = h1.find_next("h1")
            if table is None or (next_h1 is not None and next_h1 in table.find_all_previous("h1")[:1]):
                raise LayoutChanged(f"layout changed: no table under the heading {heading!r}")
            return table
    raise LayoutChanged(f"layout changed: no <h1> {heading!r} on the LEXam page")


def _section_rows(
    table: Tag, section: Mapping[str, Any], failures: list[ParseFailure]
) -> Iterator[tuple[str, float, str]]:
    data_rows = [tr for tr in table.find_all("tr") if tr.find("td")]
    if not data_rows:
        raise EmptyPlaceholder(f"empty placeholder: the table under {section['heading']!r} has no rows")
    seen: set[str] = set()
    parsed = []
    for n, tr in enumerate(data_rows, start=1):
        cells = [pages.cell_text(td) for td in tr.find_all("td")]
        locator = f"{section['benchmark']} row {n}"
        if len(cells) != 3:
            failures.append(ParseFailure(locator, f"row has {len(cells)} cells, expected rank/model/score"))
            continue
        label = _MEDALS.sub("", cells[1]).strip()
        if label in seen:
            raise LayoutChanged(f"layout changed: label {label!r} repeats in {section['heading']!r}")
        seen.add(label)
        try:
            parsed.append((label, common.parse_number(cells[2], "percent"), locator))
        except CellError as exc:
            failures.append(ParseFailure(locator, str(exc), common.row_payload({"cells": cells})))
    yield from parsed


def _record(label: str, cells: list[tuple[Mapping[str, Any], float, str]], meta: FetchMeta) -> Iterator[ParseItem]:
    locator = f"label={label}"
    if label not in LABELS:
        yield ParseFailure(locator, f"unmapped LEXam label {label!r}: add it to lexam.yaml", common.row_payload({}))
        return
    model_id = LABELS[label]
    results = [
        common.score_result(
            source_key=SOURCE.key,
            dataset_name=section["benchmark"],
            url=meta.url,
            metric_id=section["metric"],
            metric_name=section["metric_name"],
            metric_kind=section["metric"],
            unit="percent",
            lower_is_better=False,
            bounds=(0.0, 100.0),
            score=value,
            uncertainty={"num_samples": int(section["n"])},
            details={"printed": f"{value:.2f}", "row": row},
        )
        for section, value, row in cells
    ]
    yield common.build_record(
        meta=meta,
        source_metadata=common.source_metadata(
            name=SOURCE.name,
            organisation=SOURCE.organisation,
            organisation_url=SOURCE.homepage,
            evaluated_by="benchmark_creator",
            details={ORIGINAL_SOURCE: SOURCE.name, ORIGINAL_SOURCE_URL: SOURCE.homepage},
        ),
        eval_library={"name": "lexam", "version": "unknown"},
        model_info={
            "name": model_id,
            "id": model_id.split(" ")[0],
            "developer": model_id.split("/")[0],
            "additional_details": {
                "deployment_type": "unknown",
                "model_availability": "unknown",
                "lexam_label": label,
            },
        },
        results=results,
        locator=locator,
        payload=common.row_payload({"label": label}),
    )
