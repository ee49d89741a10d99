"""Epoch AI Benchmarking Hub: the daily ``benchmark_data.zip`` export (43 CSV files).

One CSV row becomes one EEE aggregate record with one result per score cell. How each file's
columns are read (headline, unit, metric, uncertainty, setup, notes) is declared per file in
``epoch_benchmarks.yaml`` after looking at the values, because the headers lie: cad_eval's
"Overall pass (%)" holds fractions, aider's "Percent correct" holds 0-100.

Nothing is dropped silently: a bad cell is a ParseFailure naming the value, column and declared
unit (the row's good cells still make a record), a row without any score or without any model
name is a ParseFailure, a file without a mapping or with a changed header fails row by row, and
an unreadable zip is a ParseError.
"""

from __future__ import annotations

import csv
import io
import re
import struct
import zipfile
import zlib
from collections.abc import Callable, Iterator, Mapping
from dataclasses import dataclass, field
from functools import lru_cache
from pathlib import PurePosixPath
from typing import Any, Literal
from urllib.parse import urlsplit

from evalhouse.ingest.budgets import read_zip
from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import (
    EVALUATED_BY_VALUES,
    ORIGINAL_SOURCE,
    ORIGINAL_SOURCE_URL,
    ParseFailure,
    ParseItem,
)

ZIP_URL = "https://epoch.ai/data/benchmark_data.zip"
EXPORT_NAME = "benchmark_data.zip"
MAPPING_FILE = "epoch_benchmarks.yaml"
MAX_MEMBER_BYTES = 64 * 1024 * 1024  # per CSV once inflated: the raw-payload cap, against zip bombs
SOURCE_FILE = "evalhouse.source_file"
MODEL_ID_COLUMN = "evalhouse.model_id_column"

SOURCE = SourceSpec(
    key="epoch-benchmarks",
    name="Epoch AI Benchmarking Hub",
    kind="aggregator_export",
    tier=2,
    organisation="Epoch AI",
    homepage="https://epoch.ai/benchmarks",
    default_urls=(ZIP_URL,),
    cadence="daily",
    parser_version="epoch-benchmarks/1",
    collection="epoch-benchmarks",
    description=(
        "Epoch AI's benchmark data export: Epoch's own Inspect runs (GPQA Diamond, MATH Level 5, "
        "FrontierMath, OTIS Mock AIME, SWE-bench Verified), scores Epoch collected from other "
        "leaderboards and papers (*_external.csv), and the Epoch Capabilities Index."
    ),
    licence="CC BY 4.0 (credit: Epoch AI, 'AI Benchmarking', https://epoch.ai/benchmarks)",
    # the 43 CSVs of the export, as kept byte for byte in a public repository; the mirror zips them
    verified_on=Recording(
        repository="pranmod01/apart-sprint (frontend/public/data/raw/epoch_benchmark_data/)",
        commit="4a36c99904069cef92e011865efe20ccf61d2e33",
        recorded="2025-11-02",
        licence="CC BY 4.0",
        files=("shared:datasets/epoch-benchmarks-2025-11",),
    ),
)

Evaluation = Literal["own_run", "composite", "external"]
_CI_TEXT_RE = re.compile(r"\+\s*(\d+(?:\.\d+)?)\s*/\s*-\s*(\d+(?:\.\d+)?)")
_SHOTS_RE = re.compile(r"(\d+)(?:\.0)?(?:\s*-?\s*shots?)?", re.IGNORECASE)


# --------------------------------------------------------------------------------------------
# The declared mapping


@dataclass(frozen=True)
class ScoreColumn:
    column: str
    metric: str
    unit: str
    bounds: tuple[float | str, float | str]
    benchmark: str | None = None
    kind: str | None = None
    lower_is_better: bool = False
    stderr: str | None = None
    ci_low: str | None = None
    ci_high: str | None = None
    ci_text: str | None = None
    samples: str | None = None

    @property
    def uncertainty_columns(self) -> tuple[str, ...]:
        cols = (self.stderr, self.ci_low, self.ci_high, self.ci_text, self.samples)
        return tuple(c for c in cols if c)


@dataclass(frozen=True)
class FileMapping:
    file: str
    benchmark: str
    evaluation: Evaluation
    headline: str
    scores: tuple[ScoreColumn, ...]
    name_columns: tuple[str, ...] = ()
    setup: Mapping[str, str] = field(default_factory=dict)
    details: Mapping[str, str] = field(default_factory=dict)
    model_facts: Mapping[str, str] = field(default_factory=dict)
    ignored: Mapping[str, str] = field(default_factory=dict)

    def required_columns(self, model_version: str) -> tuple[str, ...]:
        """Columns whose absence means the file changed shape: every row then fails."""
        cols = [model_version, self.headline, *self.setup]
        for sc in self.scores:
            cols += [sc.column, *sc.uncertainty_columns]
        return tuple(dict.fromkeys(cols))


@dataclass(frozen=True)
class EvaluatedByRule:
    sources: tuple[str, ...]
    links: tuple[str, ...]
    evaluated_by: str | None
    developer: tuple[str, ...]


@dataclass(frozen=True)
class EpochMapping:
    files: Mapping[str, FileMapping]
    common: Mapping[str, Any]
    page_url: str
    own_run_source: str
    composite_source: str
    accessibility: Mapping[str, str]
    rules: tuple[EvaluatedByRule, ...]


def _score_column(raw: dict[str, Any], unit_bounds: Mapping[str, Any], where: str) -> ScoreColumn:
    unit = raw["unit"]
    declared = raw.get("bounds") or unit_bounds.get(unit)
    if declared is None:
        raise ValueError(f"{where}: unit {unit!r} has no default bounds; declare `bounds`")
    metric = raw["metric"]
    if not re.fullmatch(r"[a-z0-9_]+(?:\.[a-z0-9_]+)?", metric):
        raise ValueError(f"{where}: metric id {metric!r} must be kind or kind.qualifier")
    return ScoreColumn(
        column=raw["column"],
        metric=metric,
        unit=unit,
        bounds=(common.bound(declared[0]), common.bound(declared[1])),
        benchmark=raw.get("benchmark"),
        kind=raw.get("kind"),
        lower_is_better=bool(raw.get("lower_is_better", False)),
        stderr=raw.get("stderr"),
        ci_low=raw.get("ci_low"),
        ci_high=raw.get("ci_high"),
        ci_text=raw.get("ci_text"),
        samples=raw.get("samples"),
    )


def load_mapping() -> EpochMapping:
    """The declared per-file mapping, checked so a bad entry fails at import, not mid-ingest."""
    data = common.load_mapping(MAPPING_FILE)
    unit_bounds = data["unit_bounds"]
    files: dict[str, FileMapping] = {}
    for name, raw in data["files"].items():
        scores = tuple(_score_column(s, unit_bounds, f"{name} {s.get('column')!r}") for s in raw["scores"])
        if raw["evaluation"] not in ("own_run", "composite", "external"):
            raise ValueError(f"{name}: evaluation {raw['evaluation']!r} is not own_run/composite/external")
        if raw["headline"] not in {s.column for s in scores}:
            raise ValueError(f"{name}: headline {raw['headline']!r} is not one of its score columns")
        files[name] = FileMapping(
            file=name,
            benchmark=raw["benchmark"],
            evaluation=raw["evaluation"],
            headline=raw["headline"],
            scores=scores,
            name_columns=tuple(raw.get("name_columns", ())),
            setup=dict(raw.get("setup", {})),
            details=dict(raw.get("details", {})),
            model_facts=dict(raw.get("model_facts", {})),
            ignored=dict(raw.get("ignored", {})),
        )
    rules = tuple(
        EvaluatedByRule(
            sources=tuple(s.casefold() for s in r.get("sources", ())),
            links=tuple(r.get("links", ())),
            evaluated_by=r.get("evaluated_by"),
            developer=tuple(d.casefold() for d in r.get("developer", ())),
        )
        for r in data["evaluated_by"]
    )
    for rule in rules:
        if (rule.evaluated_by is None) == (not rule.developer):
            raise ValueError(f"evaluated_by rule {rule} needs exactly one of evaluated_by / developer")
        if rule.evaluated_by is not None and rule.evaluated_by not in EVALUATED_BY_VALUES:
            raise ValueError(f"evaluated_by rule {rule}: {rule.evaluated_by!r} is not one of {EVALUATED_BY_VALUES}")
    return EpochMapping(
        files=files,
        common=data["common"],
        page_url=data["page_url"],
        own_run_source=data["own_run_source"],
        composite_source=data["composite_source"],
        accessibility=data["model_accessibility"],
        rules=rules,
    )


MAPPING = load_mapping()


# --------------------------------------------------------------------------------------------
# Plan


def plan(state: SourceState) -> list[FetchRequest]:
    """One conditional GET of the export; an unchanged ETag comes back as not-modified."""
    return [FetchRequest(url=ZIP_URL, label="benchmark_data.zip", **state.conditional(ZIP_URL))]


# --------------------------------------------------------------------------------------------
# Parse


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """Records from the export zip (members in sorted order) or from one CSV named by the meta."""
    names = [_last_component(x) for x in (meta.label, meta.url) if x]
    if body[:4] in (b"PK\x03\x04", b"PK\x05\x06"):
        members = _read_zip(body)
        yield from _missing_members(members, export=EXPORT_NAME in names)
        for name, data in members:
            yield from parse_csv(name, data, meta=meta)
        return
    if any(n.lower().endswith(".zip") for n in names):
        raise ParseError(f"expected the Epoch zip export, got {len(body)} bytes starting {body[:16]!r}")
    csv_name = next((n for n in names if n.lower().endswith(".csv")), None)
    if csv_name is None:
        raise ParseError(
            "a single Epoch CSV needs its file name to pick its mapping: neither meta.label "
            f"({meta.label!r}) nor meta.url ({meta.url!r}) ends in <name>.csv"
        )
    yield from parse_csv(csv_name, body, meta=meta)


def _last_component(text: str) -> str:
    try:
        path = urlsplit(text).path if "://" in text else text
    except ValueError:  # a malformed URL still names no file
        path = text
    return PurePosixPath(path.replace("\\", "/")).name


def _missing_members(members: list[tuple[str, bytes]], *, export: bool) -> Iterator[ParseItem]:
    """Every file the mapping declares that the zip lacks, as a refused row naming it.

    A run of an export missing files is therefore never ``completed``; the daily export
    (``benchmark_data.zip``) holding fewer than half of them is refused whole, so a truncated
    export never replaces the hub's data with a sliver of it.
    """
    present = {name for name, _ in members}
    missing = sorted(set(MAPPING.files) - present)
    declared = len(MAPPING.files)
    held = declared - len(missing)
    if export and held * 2 < declared:
        shown = ", ".join(missing[:5]) + (f" and {len(missing) - 5} more" if len(missing) > 5 else "")
        raise ParseError(
            f"the Epoch export holds {held} of the {declared} files {MAPPING_FILE} declares (missing: {shown});"
            " a partial export is refused"
        )
    for name in missing:
        yield ParseFailure(
            f"{EXPORT_NAME}:{name}",
            f"the export holds no {name}, which {MAPPING_FILE} declares ({held} of {declared} files present)",
        )


def _read_zip(body: bytes) -> list[tuple[str, bytes]]:
    """Every CSV member, inflated and CRC-checked before anything is yielded, within the archive
    budgets (:mod:`evalhouse.ingest.budgets`: total bytes and lines, refused before inflating).

    Members are known by their file name (the export has kept them at the top level or in one
    folder); two members with one name in different folders are refused, never one picked.
    """
    try:
        with zipfile.ZipFile(io.BytesIO(body)) as archive:
            infos = sorted(
                (i for i in archive.infolist() if not i.is_dir() and i.filename.lower().endswith(".csv")),
                key=lambda i: i.filename,
            )
            names = archive.namelist()[:10]
    except (zipfile.BadZipFile, zipfile.LargeZipFile, zlib.error, EOFError, struct.error) as exc:
        raise ParseError(f"the Epoch zip is truncated or corrupt ({len(body)} bytes): {exc}") from exc
    except (NotImplementedError, RuntimeError, ValueError, OSError) as exc:  # encrypted member, odd method
        raise ParseError(f"the Epoch zip cannot be read ({len(body)} bytes): {exc}") from exc
    if not infos:
        raise ParseError(f"the Epoch zip holds no CSV files (members: {names})")
    by_name: dict[str, list[str]] = {}
    for info in infos:
        by_name.setdefault(PurePosixPath(info.filename).name, []).append(info.filename)
    twice = {name: paths for name, paths in by_name.items() if len(paths) > 1}
    if twice:
        name, paths = sorted(twice.items())[0]
        raise ParseError(
            f"the Epoch zip holds {len(paths)} members named {name} in different folders ({', '.join(paths)});"
            f" which one is the export's is ambiguous, so the zip is refused ({len(twice)} such name(s))"
        )
    big = next((i for i in infos if i.file_size > MAX_MEMBER_BYTES), None)
    if big is not None:
        raise ParseError(f"zip member {big.filename} inflates to {big.file_size} bytes (cap {MAX_MEMBER_BYTES})")
    order = {info.filename: n for n, info in enumerate(infos)}
    members = read_zip(body, what="the Epoch zip", keep=lambda i: i.filename in order)
    return [(PurePosixPath(name).name, data) for name, data in sorted(members, key=lambda m: order[m[0]])]


def _read_rows(text: str, name: str) -> tuple[list[str], list[list[str]]]:
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as exc:
        raise ParseError(f"{name} is not readable CSV: {exc}") from exc
    if not rows:
        raise ParseError(f"{name} is empty (no header row)")
    return rows[0], rows[1:]


def parse_csv(name: str, data: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """One Epoch CSV file: rows become records; an unknown file or changed header fails per row."""
    header, rows = _read_rows(common.decode_text(data, name), name)
    fm = MAPPING.files.get(name)
    missing: list[str] = []
    if fm is not None:
        present = set(header)
        missing = [c for c in fm.required_columns(MAPPING.common["model_version"]) if c not in present]
    for n, cells in enumerate(rows, start=1):
        locator = f"{name}:row {n}"
        row = dict(zip(header, cells, strict=False))
        payload = common.lazy_payload(row if len(cells) <= len(header) else {"cells": cells})
        if fm is None:
            yield ParseFailure(locator, f"no mapping for {name}: add it to {MAPPING_FILE}", payload())
        elif missing:
            yield ParseFailure(
                locator,
                f"header of {name} changed: declared columns {missing} are missing; found header {header}",
                payload(),
            )
        elif len(cells) != len(header):
            yield ParseFailure(locator, f"row has {len(cells)} fields, the header has {len(header)}", payload())
        else:
            yield from _parse_row(fm, row, locator, payload, meta)


def _cell(row: Mapping[str, str], column: str | None) -> str:
    return (row.get(column) or "").strip() if column else ""


def _parse_row(
    fm: FileMapping, row: Mapping[str, str], locator: str, payload: Callable[[], str], meta: FetchMeta
) -> Iterator[ParseItem]:
    failures: list[ParseFailure] = []

    def fail(column: str, error: CellError) -> None:
        failures.append(ParseFailure(f"{locator}:column '{column}'", f"{error} (column {column!r})", payload()))

    details = {key: text for col, key in fm.details.items() if (text := _cell(row, col))}
    setup = {key: _setup_value(key, text) for col, key in fm.setup.items() if (text := _cell(row, col))}
    provenance = _provenance(fm, row)
    results = []
    for sc in fm.scores:
        text = _cell(row, sc.column)
        if not text:
            continue
        try:
            value = common.parse_number(text, sc.unit)
        except CellError as exc:
            fail(sc.column, exc)
            continue
        uncertainty, errors = _uncertainty(sc, row, value)
        for column, error in errors:
            fail(column, error)
        results.append(
            common.score_result(
                source_key=SOURCE.key,
                dataset_name=sc.benchmark or fm.benchmark,
                url=provenance["url"],
                metric_id=sc.metric,
                metric_name=sc.column,
                metric_kind=sc.kind or sc.metric.split(".")[0],
                unit=sc.unit,
                lower_is_better=sc.lower_is_better,
                bounds=sc.bounds,
                score=value,
                uncertainty=uncertainty,
                details=details,
                setup=setup,
            )
        )
    model_info = _model_info(fm, row, fail)
    yield from failures
    if not results:
        if not failures:
            columns = [sc.column for sc in fm.scores]
            yield ParseFailure(locator, f"no score reported: every score column {columns} is empty", payload())
        return
    if model_info is None:
        names = [MAPPING.common["model_version"], *fm.name_columns]
        yield ParseFailure(locator, f"no model identified: columns {names} are all empty", payload())
        return
    yield common.build_record(
        meta=meta,
        source_metadata=common.source_metadata(
            name=SOURCE.name,
            organisation="Epoch AI",
            organisation_url="https://epoch.ai",
            evaluated_by=provenance["evaluated_by"],
            details=provenance["details"],
        ),
        eval_library={
            "name": "inspect_ai" if fm.evaluation == "own_run" else "unknown",
            "version": "unknown",
        },
        model_info=model_info,
        results=results,
        locator=locator,
        payload=payload,
    )


def _uncertainty(
    sc: ScoreColumn, row: Mapping[str, str], score: float
) -> tuple[dict[str, Any], list[tuple[str, CellError]]]:
    """The score's declared uncertainty columns; a bad uncertainty cell fails alone."""
    errors: list[tuple[str, CellError]] = []

    def read(column: str | None, reader: Callable[[str], Any]) -> Any:
        text = _cell(row, column)
        if column is None or not text:
            return None
        try:
            return reader(text)
        except CellError as exc:
            errors.append((column, exc))
            return None

    def number(text: str) -> float:
        return common.parse_number(text, sc.unit)

    uncertainty: dict[str, Any] = {}
    if (se := read(sc.stderr, number)) is not None:
        uncertainty.update(common.standard_error(se))
    low, high = read(sc.ci_low, number), read(sc.ci_high, number)
    if low is not None and high is not None:
        uncertainty.update(common.confidence_interval(low, high))
    if (ci := read(sc.ci_text, lambda t: _ci_from_text(t, score))) is not None:
        uncertainty.update(ci)
    if (n := read(sc.samples, _num_samples)) is not None:
        uncertainty["num_samples"] = n
    return uncertainty, errors


def _ci_from_text(text: str, score: float) -> dict[str, Any]:
    """Arena's ``"+7.34 / -8.86"``: half-widths around the score, stored as absolute bounds."""
    match = _CI_TEXT_RE.fullmatch(text)
    if match is None:
        raise CellError(f"value {text!r} is not a confidence interval like '+7.34 / -8.86'")
    upper, lower = float(match[1]), float(match[2])
    return common.confidence_interval(round(score - lower, 10), round(score + upper, 10))


def _num_samples(text: str) -> int:
    value = common.parse_number(text, "count")
    if not value.is_integer() or value < 0:
        raise CellError(f"value {text!r} is not a whole, non-negative count")
    return int(value)


def _setup_value(key: str, text: str) -> str:
    """Setup values as given, except shot counts, which the export spells "5", "5-shot", "0\\n"."""
    if key == "shots" and (match := _SHOTS_RE.fullmatch(text)):
        return match[1]
    return text


def _model_info(
    fm: FileMapping, row: Mapping[str, str], fail: Callable[[str, CellError], None]
) -> dict[str, Any] | None:
    """``model_info``: id ``<organisation slug>/<Model version>``, name the Model version."""
    cols = MAPPING.common
    version = _cell(row, cols["model_version"])
    name_column = next((c for c in fm.name_columns if _cell(row, c)), None)
    display = _cell(row, name_column) if name_column else ""
    if not version and not display:
        return None
    organisation = _cell(row, cols["organization"])
    slug = common.slugify(organisation.split(",")[0]) if organisation else ""
    details: dict[str, str] = {"deployment_type": "unknown", "model_availability": "unknown"}
    if not version:
        details[MODEL_ID_COLUMN] = name_column or ""
    try:
        details.update(common.date_details(_cell(row, cols["release_date"])))
    except CellError as exc:
        fail(cols["release_date"], exc)
    for key, column in (("country", cols["country"]), ("training_compute_flop", cols["training_compute"])):
        if text := _cell(row, column):
            details[key] = text
    for column, key in fm.model_facts.items():
        if text := _cell(row, column):
            details[key] = text
    if access := details.get("model_accessibility"):
        details["model_availability"] = MAPPING.accessibility.get(access, "unknown")
    # The hub's "Model version" is the identifier evalhouse resolves; the original source's own
    # label for the model (a paper's "GPT-3", an agent leaderboard's "OpenHands + Llama 3.1 70B")
    # is provenance, kept beside it.
    if display and version and display != version:
        details["evalhouse.original_model_name"] = display
    info: dict[str, Any] = {"name": version or display, "id": f"{slug or 'unknown'}/{version or display}"}
    if organisation:
        info["developer"] = organisation
    info["additional_details"] = details
    return info


def _provenance(fm: FileMapping, row: Mapping[str, str]) -> dict[str, Any]:
    """Who ran the evaluation and where the number was published."""
    cols = MAPPING.common
    if fm.evaluation != "external":
        original = MAPPING.own_run_source if fm.evaluation == "own_run" else MAPPING.composite_source
        return {
            "evaluated_by": "aggregator",
            "url": MAPPING.page_url,
            "details": {
                ORIGINAL_SOURCE: original,
                ORIGINAL_SOURCE_URL: MAPPING.page_url,
                SOURCE_FILE: fm.file,
            },
        }
    source = _cell(row, cols["source"])
    link = next((text for c in cols["source_links"] if (text := _cell(row, c))), "")
    details = {ORIGINAL_SOURCE: source, ORIGINAL_SOURCE_URL: link, SOURCE_FILE: fm.file}
    return {
        "evaluated_by": evaluated_by(source, link, _cell(row, cols["organization"])),
        "url": link or MAPPING.page_url,
        "details": {k: v for k, v in details.items() if v},
    }


@lru_cache(maxsize=4096)
def evaluated_by(source: str, link: str, organisation: str) -> str:
    """The declared rule for an external row; a developer's report is first party only for its own models.

    Remembered per (source, link, organisation): an export repeats a few hundred of them over
    thousands of rows, and trying every rule on each row was a fifth of parsing it."""
    key = " ".join(source.split()).casefold()
    for rule in MAPPING.rules:
        if not (any(key.startswith(s) for s in rule.sources) or any(s in link for s in rule.links if link)):
            continue
        if rule.evaluated_by is not None:
            return rule.evaluated_by
        orgs = {o.strip().casefold() for o in organisation.split(",") if o.strip()}
        if not orgs:
            return "unknown"
        return "model_developer" if orgs & set(rule.developer) else "independent_evaluator"
    return "unknown"
