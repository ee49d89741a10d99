"""Artificial Analysis (AA): one parser for the Data API JSON, the leaderboard page and the CSV.

AA publishes one row per model *configuration* ("GPT-5 (high)", "Claude Sonnet 4.6 (Non-reasoning,
High Effort)"). The same rows reach evalhouse three ways: the keyed Data API, the public page's
Next.js flight payload (what paper 000 captured when the API refused it) and that paper's CSV.
The form is told from the content, and all three are read through one declared mapping
(``artificial_analysis.yaml``), so a model gives the same record - and the same fingerprint -
whichever way it arrived.
"""

from __future__ import annotations

import csv
import io
import json
import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from functools import cached_property
from typing import Any, Literal
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import FetchMeta, LayoutChanged, ParseError, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources._common import CellError
from evalhouse.schema.records import ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, ParseFailure, ParseItem

MAPPING_FILE = "artificial_analysis.yaml"
API_KEY_ENV = "EVALHOUSE_AA_API_KEY"
Form = Literal["csv", "page", "api"]
FORMS: tuple[Form, ...] = ("csv", "page", "api")

_MAPPING = common.load_mapping(MAPPING_FILE)
PAGE_URL: str = _MAPPING["page_url"]
API_URL: str = _MAPPING["api_url"]
INDEX_MAJOR_VERSION: int = int(_MAPPING["index_major_version"])
CREATOR_SLUGS: Mapping[str, str] = dict(_MAPPING["creator_slugs"])
#: The Data API is paginated: every page follow() finds continues one listing (pipeline/guards.py).
DRIFT = {"pagination": True}

SOURCE = SourceSpec(
    key="artificial-analysis",
    name="Artificial Analysis",
    kind="leaderboard",
    tier=2,
    organisation="Artificial Analysis",
    homepage="https://artificialanalysis.ai",
    default_urls=(PAGE_URL, API_URL),
    cadence="daily",
    parser_version="artificial-analysis/1",
    collection="artificial-analysis",
    description=(
        "Artificial Analysis model leaderboard: AA's own runs of its Intelligence Index battery "
        "(GDPval-AA, tau2, Terminal-Bench, SciCode, AA-LCR, AA-Omniscience, IFBench, HLE, GPQA "
        "Diamond, CritPt, ...) per model configuration, from the Data API when a key is set, "
        "else from the public leaderboard page."
    ),
    optional_env=(API_KEY_ENV,),
    licence=(
        "Artificial Analysis site terms (attribution to https://artificialanalysis.ai required); "
        "the paper-000 CSV is CC BY 4.0 from its parser, with AA as the source of every score"
    ),
    # the leaderboard page's model array captured 2026-07-06 and flattened to CSV (548 configurations);
    # beside it, page 1 of 3 of the free Data API (200 models), recorded byte for byte from
    # cezaryt5/ciri data/artificial_analysis.json @ 487ef161 (2026-06-27): tests/fixtures/artificial-analysis/SOURCE.md
    verified_on=Recording(
        repository="louisyzhu/frontier-ai-economic-validity (data/raw/aa_models_raw_parsed.csv)",
        commit="c5d939e26ca573c9ce1aa2fdbe3502d1546006b7",
        recorded="2026-07-06",
        licence="CC BY 4.0",
        files=(
            "shared:datasets/artificial-analysis-2026-07-06/aa_models_raw_parsed.csv",
            "fixtures:artificial-analysis/language_models_free_page1.json",
        ),
    ),
)

# The opening of one flight chunk; the JS string literal after it is read by a decoder, not a regex
# (a regex over a multi-megabyte literal backtracks badly on a truncated page).
_PUSH_RE = re.compile(r'self\.__next_f\.push\(\[\s*1\s*,\s*(?=")')
_DECODER = json.JSONDecoder(strict=False)
_MODELS_RE = re.compile(r'"models"\s*:\s*\[')
_HTML_RE = re.compile(r"^\s*(?:<!doctype html|<html|<head|<body|<script)", re.IGNORECASE)
_UNDEFINED = "$undefined"


# --------------------------------------------------------------------------------------------
# The declared mapping


@dataclass(frozen=True)
class Field:
    """Where each form keeps one value, and how to read it (text, number or bool)."""

    paths: Mapping[str, str]
    type: str = "text"

    def path(self, form: Form) -> str | None:
        return self.paths.get(form)


@dataclass(frozen=True)
class Benchmark:
    key: str
    metric: str
    unit: str
    bounds: tuple[float | str, float | str]
    value: Field
    ci_low: Field | None = None
    ci_high: Field | None = None
    details: Mapping[str, Field] = field(default_factory=dict)
    lower_is_better: bool = False


def _field(raw: Mapping[str, Any]) -> Field:
    return Field(paths={f: raw[f] for f in FORMS if raw.get(f)}, type=raw.get("type", "text"))


def _benchmark(raw: Mapping[str, Any], unit_bounds: Mapping[str, Any]) -> Benchmark:
    declared = raw.get("bounds") or unit_bounds.get(raw["unit"])
    if declared is None:
        raise ValueError(f"{MAPPING_FILE}: {raw['key']} needs bounds for unit {raw['unit']!r}")
    return Benchmark(
        key=raw["key"],
        metric=raw["metric"],
        unit=raw["unit"],
        bounds=(common.bound(declared[0]), common.bound(declared[1])),
        value=_field(raw["fields"]),
        ci_low=_field(raw["ci_low"]) if raw.get("ci_low") else None,
        ci_high=_field(raw["ci_high"]) if raw.get("ci_high") else None,
        details={k: _field(v) for k, v in raw.get("details", {}).items()},
        lower_is_better=bool(raw.get("lower_is_better", False)),
    )


IDENTITY: Mapping[str, Field] = {k: _field(v) for k, v in _MAPPING["identity"].items()}
FACTS: Mapping[str, Field] = {k: _field(v) for k, v in _MAPPING["facts"].items()}
BENCHMARKS: tuple[Benchmark, ...] = tuple(_benchmark(b, _MAPPING["unit_bounds"]) for b in _MAPPING["benchmarks"])


def csv_columns() -> tuple[str, ...]:
    """Every CSV column the mapping reads: the header must hold all of them."""
    fields = [*IDENTITY.values(), *FACTS.values()]
    for bench in BENCHMARKS:
        fields += [bench.value, *(f for f in (bench.ci_low, bench.ci_high) if f), *bench.details.values()]
    return tuple(dict.fromkeys(p for f in fields if (p := f.path("csv"))))


# --------------------------------------------------------------------------------------------
# Plan


def plan(state: SourceState) -> list[FetchRequest]:
    """The Data API's first page when a key is configured (sent as a declared secret header), else
    the public page. The API's later pages come from :func:`follow`; its first page is fetched
    unconditionally, since a 304 on page 1 says nothing of the pages after it."""
    key = state.env.get(API_KEY_ENV)
    if key:
        return [
            FetchRequest(
                url=api_page_url(1),
                headers={"x-api-key": key, "accept": "application/json"},
                secret_headers=frozenset({"x-api-key"}),
                label="api",
            )
        ]
    return [FetchRequest(url=PAGE_URL, label="page", **state.conditional(PAGE_URL))]


def api_page_url(page: int, url: str = API_URL) -> str:
    """``url`` asking for page ``page`` (its other query parameters kept)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "page"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("page", str(page))])))


def follow(body: bytes, *, meta: FetchMeta) -> list[FetchRequest]:
    """The next page of a paginated API response (``pagination.has_more``), else nothing.

    Pure: the next page's URL is the fetched one with ``page`` + 1. A payload whose pagination
    does not read raises :class:`ParseError` (its parse says why, and the refresh fails the run).
    """
    text = body.decode("utf-8-sig", errors="replace").lstrip()
    if not text.startswith("{"):
        return []
    pagination = _pagination(_api_document(text), meta)
    if pagination is None or not pagination.has_more:
        return []
    return [FetchRequest(url=api_page_url(pagination.page + 1, meta.url), label=meta.label or "api")]


# --------------------------------------------------------------------------------------------
# Parse


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """Records from any of the three forms; the form is told from the bytes, not the URL."""
    text = common.decode_text(body, "the Artificial Analysis payload")
    head = text.lstrip()[:200]
    if head.startswith(("{", "[")):
        doc = _api_document(text)
        _pagination(doc, meta)  # a page that does not say where it sits in the listing is refused
        envelope = _envelope_details(doc)
        yield from _parse_models(doc["data"], "api", "data", meta, envelope)
    elif _HTML_RE.match(head) or "self.__next_f" in text:
        if _expects_json(meta):
            title = re.search(r"<title>(.*?)</title>", text, re.IGNORECASE | re.DOTALL)
            hint = f"title {title[1].strip()[:80]!r}" if title else f"starts {head[:60]!r}"
            raise ParseError(f"expected JSON from the AA API, got HTML ({len(body)} bytes, {hint})")
        yield from _parse_models(_page_models(text), "page", "models", meta)
    elif not head:
        raise ParseError("the Artificial Analysis payload is empty")
    else:
        yield from _parse_csv(text, meta)


def _expects_json(meta: FetchMeta) -> bool:
    return "/api/" in meta.url or "json" in (meta.content_type or "").lower() or meta.label == "api"


# -- API ----------------------------------------------------------------------------------------


def _api_document(text: str) -> dict[str, Any]:
    try:
        doc = json.loads(text)
    except json.JSONDecodeError as exc:
        raise ParseError(f"the AA API body is not valid JSON: {exc}") from exc
    except RecursionError as exc:
        raise ParseError("the AA API body nests JSON too deeply to read") from exc
    if not isinstance(doc, dict) or not isinstance(doc.get("data"), list):
        keys = sorted(doc)[:10] if isinstance(doc, dict) else type(doc).__name__
        raise ParseError(f'the AA API body has no "data" list of models (found {keys})')
    return doc


@dataclass(frozen=True)
class Pagination:
    page: int
    total_pages: int
    has_more: bool


def _pagination(doc: Mapping[str, Any], meta: FetchMeta) -> Pagination | None:
    """Where an API page sits in its listing, checked against itself and the URL it was fetched
    from; ``None`` for a response without pagination (the legacy endpoint's one list).

    A page whose ``has_more`` contradicts ``page``/``total_pages``, or that is not the page asked
    for (an API ignoring ``page`` would serve page 1 forever), is a layout change: following it
    could neither reach the end nor know it had."""
    raw = doc.get("pagination")
    if raw is None:
        return None
    if not isinstance(raw, Mapping):
        raise LayoutChanged(f"layout changed: the AA API pagination is {raw!r}, not an object")
    page, total, more = raw.get("page"), raw.get("total_pages"), raw.get("has_more")
    if not (_count(page) and _count(total) and isinstance(more, bool)):
        raise LayoutChanged(
            f"layout changed: the AA API pagination {dict(raw)} lacks page/total_pages (counts) or has_more (a bool)"
        )
    if more != (page < total):
        raise LayoutChanged(f"layout changed: the AA API says page {page} of {total} with has_more={more}")
    asked = dict(parse_qsl(urlsplit(meta.url).query)).get("page", "1")
    if asked != str(page):
        raise LayoutChanged(f"layout changed: {meta.url} asked for page {asked} and the AA API answered page {page}")
    return Pagination(page, total, more)


def _count(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= 1


def _envelope_details(doc: Mapping[str, Any]) -> dict[str, str]:
    """Facts of the whole API page its index scores carry (the index version), checked against
    the version the registry's benchmark stands for."""
    version = doc.get("intelligence_index_version")
    if version is None:
        return {}
    major = str(version).split(".")[0]
    if major != str(INDEX_MAJOR_VERSION):
        raise LayoutChanged(
            f"layout changed: the AA API serves Intelligence Index version {version}; the registry's benchmark is "
            f"v{INDEX_MAJOR_VERSION} (a new version is a new benchmark: register it, then set index_major_version)"
        )
    return {"intelligence_index_version": str(version)}


# -- page -----------------------------------------------------------------------------------------


def _page_models(html: str) -> list[Any]:
    """The richest ``"models":[…]`` array in the page's RSC flight payload, ``$undefined`` → null."""
    chunks = [_js_literal(html, m.end()) for m in _PUSH_RE.finditer(html)]
    if not chunks:
        raise ParseError(
            f'no Next.js flight payload in the AA page: no self.__next_f.push([1,"…"]) chunks in {len(html)} characters'
        )
    flight = "".join(chunks)
    best: list[Any] = []
    best_rank = (0, 0)
    for match in _MODELS_RE.finditer(flight):
        try:
            value, _end = _DECODER.raw_decode(flight, match.end() - 1)
        except (json.JSONDecodeError, RecursionError):
            continue
        objects = [m for m in value if isinstance(m, dict) and ("slug" in m or "name" in m)]
        rank = (len(objects), sum(len(m) for m in objects))
        if rank > best_rank:
            best, best_rank = value, rank
    if not best:
        raise ParseError(
            f"the AA flight payload ({len(chunks)} chunks, {len(flight)} characters) has no "
            '"models":[…] array of model objects'
        )
    try:
        return _undefined_to_none(best)
    except RecursionError as exc:
        raise ParseError("the AA models array nests too deeply to read") from exc


def _js_literal(html: str, start: int) -> str:
    """The JS string literal opening at ``html[start]`` (JSON escapes, plus JS's ``\\xHH``, ``\\'``)."""
    try:
        value, _end = _DECODER.raw_decode(html, start)
        if isinstance(value, str):
            return value
    except (json.JSONDecodeError, RecursionError):
        pass
    end = start + 1
    while end < len(html) and html[end] != '"':
        end += 2 if html[end] == "\\" else 1
    if end >= len(html):
        raise ParseError(f"a flight payload chunk at character {start} is an unterminated string")
    body = re.sub(r"\\x([0-9a-fA-F]{2})", r"\\u00\1", html[start + 1 : end]).replace("\\'", "'")
    try:
        return json.loads(f'"{body}"', strict=False)
    except (json.JSONDecodeError, RecursionError) as exc:
        raise ParseError(f"a flight payload chunk at character {start} is not a valid JS string: {exc}") from exc


def _undefined_to_none(value: Any) -> Any:
    """RSC spells JS ``undefined`` as the string ``"$undefined"`` and a literal ``$`` as ``$$``."""
    if isinstance(value, dict):
        return {k: _undefined_to_none(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_undefined_to_none(v) for v in value]
    if value == _UNDEFINED:
        return None
    if isinstance(value, str) and value.startswith("$$"):
        return value[1:]
    return value


# -- CSV ------------------------------------------------------------------------------------------


def _parse_csv(text: str, meta: FetchMeta) -> Iterator[ParseItem]:
    try:
        rows = [r for r in csv.reader(io.StringIO(text, newline="")) if r]
    except csv.Error as exc:
        raise ParseError(f"the AA CSV is not readable CSV: {exc}") from exc
    if not rows:
        raise ParseError("the AA CSV has no header row")
    header = rows[0]
    missing = [c for c in csv_columns() if c not in header]
    if missing:
        raise ParseError(f"the AA CSV header changed: columns {missing} are missing; found header {header}")
    for n, cells in enumerate(rows[1:], start=1):
        row = dict(zip(header, cells, strict=False))
        if len(cells) != len(header):
            reason = f"row has {len(cells)} fields, the header has {len(header)}"
            yield ParseFailure(f"row {n}", reason, common.row_payload({"cells": cells}))
            continue
        yield from _parse_model(row, "csv", f"row {n}", meta)


# -- one model --------------------------------------------------------------------------------


def _parse_models(
    models: list[Any], form: Form, prefix: str, meta: FetchMeta, envelope: Mapping[str, str] | None = None
) -> Iterator[ParseItem]:
    for i, model in enumerate(models):
        if not isinstance(model, dict):
            payload = common.row_payload({"value": model})
            yield ParseFailure(f"{prefix}[{i}]", f"expected a model object, got {type(model).__name__}", payload)
            continue
        yield from _parse_model(model, form, f"{prefix}[{i}] slug={model.get('slug')}", meta, envelope or {})


def _get(model: Mapping[str, Any], spec: Field | None, form: Form) -> Any:
    """The value at a field's path for this form (dotted paths walk nested objects)."""
    path = spec.path(form) if spec else None
    if path is None:
        return None
    if form == "csv":
        return model.get(path)
    value: Any = model
    for part in path.split("."):
        if not isinstance(value, Mapping):
            return None
        value = value.get(part)
    return value


def _typed(value: Any, kind: str, unit: str) -> Any:
    """A value as the same Python value in every form (``"108.0"`` and ``108`` give ``"108.0"``)."""
    if kind == "score":
        return common.parse_number(value, unit)
    if kind == "number":
        return common.fact_text(common.parse_number(value, unit))
    if kind == "bool":
        text = str(value).strip().lower() if not isinstance(value, bool) else None
        if isinstance(value, bool) or text in ("true", "false"):
            return "true" if value is True or text == "true" else "false"
        raise CellError(f"value {value!r} is not a boolean")
    if isinstance(value, dict | list):
        raise CellError(f"value {value!r} is not a text value")
    return common.fact_text(value)


@dataclass
class _Reader:
    """Reads one model's fields; a bad field becomes a ParseFailure and reads as missing."""

    model: Mapping[str, Any]
    form: Form
    locator: str
    failures: list[ParseFailure] = field(default_factory=list)

    @cached_property
    def payload(self) -> str:
        """The model's JSON text, for a failure's quarantine row: written only when one needs it."""
        return common.row_payload(self.model)

    def fail(self, path: str, error: CellError) -> None:
        reason = f"{error} (field {path!r})"
        self.failures.append(ParseFailure(f"{self.locator}:field '{path}'", reason, self.payload))

    def read(self, spec: Field | None, kind: str, unit: str = "number") -> Any:
        value = _get(self.model, spec, self.form)
        if value is None or (isinstance(value, str) and not value.strip()):
            return None
        try:
            return _typed(value, kind, unit)
        except CellError as exc:
            self.fail((spec.path(self.form) if spec else None) or "?", exc)
            return None


def _parse_model(
    model: Mapping[str, Any], form: Form, locator: str, meta: FetchMeta, envelope: Mapping[str, str] | None = None
) -> Iterator[ParseItem]:
    reader = _Reader(model, form, locator)
    results = [r for bench in BENCHMARKS if (r := _result(reader, bench, envelope or {})) is not None]
    model_info = _model_info(reader)
    unreadable = not results and bool(reader.failures)  # only bad cells: the failures say it all
    if form == "api":
        _undeclared_evaluations(reader)
    yield from reader.failures
    if unreadable:
        return
    # A listed configuration with no score yet is still a configuration of the leaderboard: its
    # facts (creator, release date, parameters) load as a record with no results.
    if model_info is None:
        yield ParseFailure(locator, "no model identified: slug, name and creator are empty", reader.payload)
        return
    yield common.build_record(
        meta=meta,
        source_metadata=common.source_metadata(
            name=SOURCE.name,
            organisation="Artificial Analysis",
            organisation_url="https://artificialanalysis.ai",
            evaluated_by="aggregator",
            details={ORIGINAL_SOURCE: "Artificial Analysis", ORIGINAL_SOURCE_URL: PAGE_URL},
        ),
        eval_library={"name": "artificial-analysis", "version": "unknown"},
        model_info=model_info,
        results=results,
        locator=locator,
        payload=lambda: reader.payload,
    )


def _result(reader: _Reader, bench: Benchmark, envelope: Mapping[str, str]) -> dict[str, Any] | None:
    score = reader.read(bench.value, "score", bench.unit)
    if score is None:
        return None
    low = reader.read(bench.ci_low, "score", bench.unit)
    high = reader.read(bench.ci_high, "score", bench.unit)
    details = {k: v for k, spec in bench.details.items() if (v := reader.read(spec, spec.type)) is not None}
    if bench.metric == "index":
        details.update(envelope)
    return common.score_result(
        source_key=SOURCE.key,
        dataset_name=bench.key,
        url=PAGE_URL,
        metric_id=bench.metric,
        metric_name=bench.key,
        metric_kind=bench.metric.split(".")[0],
        unit=bench.unit,
        lower_is_better=bench.lower_is_better,
        bounds=bench.bounds,
        score=score,
        uncertainty=common.confidence_interval(low, high) if low is not None and high is not None else None,
        details=details,
    )


def _model_info(reader: _Reader) -> dict[str, Any] | None:
    """Configuration (name, slug) and base model (short_name) kept apart; id = creator/slug."""
    ident = {
        k: reader.read(IDENTITY[k], "text") for k in ("aa_model_id", "slug", "name", "creator_name", "creator_slug")
    }
    slug = ident["slug"] or (common.slugify(ident["name"]) if ident["name"] else None)
    creator = ident["creator_slug"] or _creator_slug(ident["creator_name"])
    name = ident["name"] or slug
    if not (name and slug and creator):
        return None
    open_weights = reader.read(IDENTITY["open_weights"], "bool")
    details: dict[str, str] = {
        "deployment_type": "externally_managed",
        "model_availability": {"true": "open_weights", "false": "closed_weights"}.get(open_weights or "", "unknown"),
    }
    if release := reader.read(IDENTITY["release_date"], "text"):
        try:
            details.update(common.date_details(release))
        except CellError as exc:
            reader.fail(IDENTITY["release_date"].path(reader.form) or "release_date", exc)
    if ident["aa_model_id"]:
        details["aa_model_id"] = ident["aa_model_id"]
    details["slug"] = slug
    for key, spec in FACTS.items():
        if (value := reader.read(spec, spec.type)) is not None:
            details[key] = value
    info: dict[str, Any] = {"name": name, "id": f"{creator}/{slug}"}
    if ident["creator_name"]:
        info["developer"] = ident["creator_name"]
    info["additional_details"] = details
    return info


def _creator_slug(name: str | None) -> str | None:
    """AA's slug of a creator the API names without one: its declared slug, else the name slugified."""
    if not name:
        return None
    return CREATOR_SLUGS.get(name) or common.slugify(name)


#: The ``evaluations`` fields the mapping reads in the API form (``gdpval_breakdown`` for its Elo).
_API_EVALUATIONS = frozenset(
    path.split(".")[1]
    for bench in BENCHMARKS
    for spec in (bench.value, bench.ci_low, bench.ci_high, *bench.details.values())
    if spec is not None and (path := spec.path("api") or "").startswith("evaluations.")
)


def _undeclared_evaluations(reader: _Reader) -> None:
    """An evaluation the API returns with a value and the mapping does not declare is quarantined
    with its name, never dropped (a new index, a Pro-tier field): declare it to load it."""
    evaluations = reader.model.get("evaluations")
    if not isinstance(evaluations, Mapping):
        return
    for name, value in evaluations.items():
        if name not in _API_EVALUATIONS and value is not None:
            reader.fail(
                f"evaluations.{name}",
                CellError(f"undeclared AA evaluation {name!r} = {value!r}: not in {MAPPING_FILE}, so not loaded"),
            )
