"""arXiv papers: result tables from LaTeXML HTML (arxiv.org/html, ar5iv), every cell traceable.

``evalhouse ingest paper 2406.01234v2`` fetches the paper's HTML; ``parse`` reads each table with
:mod:`._latexml` (spans, headers, typography) and :mod:`._paper_tables` (orientation, models,
metric, scale) into candidate rows, and each model row of a table becomes one EEE record whose
results carry the table number, row, column, caption, cell text, header path, bold/underline and
footnote marks. A table or cell whose meaning the text does not settle is refused with that
locator - never guessed. A benchmark the registry does not know is named by the paper's own header
and registered provisionally when loaded (this source's kind is self-describing); an average column
is a composite of its own table. Provenance is the arXiv id and version; the numbers are the
authors' claims (tier 4), and who ran them is unknown (papers copy baselines from other papers)
unless a column says so ("paper" / "ours": one record per model and provenance).
See docs/sources-papers.md.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from evalhouse.ingest.fetch import FetchRequest
from evalhouse.ingest.source import FetchMeta, ParseError, Recording, SourceSpec, SourceState
from evalhouse.ingest.sources import _common as common
from evalhouse.ingest.sources import _latexml as latexml
from evalhouse.ingest.sources import _paper_quality as quality
from evalhouse.ingest.sources import _paper_tables as tables
from evalhouse.schema.records import EVALUATED_BY, ORIGINAL_SOURCE, ORIGINAL_SOURCE_URL, ParseFailure, ParseItem

MAPPING_FILE = "papers.yaml"
_MAPPING = common.load_mapping(MAPPING_FILE)
RULES = tables.rules_from(_MAPPING)
ARXIV_HTML: str = _MAPPING["arxiv_html"].rstrip("/")
ARXIV_ABS: str = _MAPPING["arxiv_abs"].rstrip("/")
#: Other names the command line accepts for this source (``evalhouse ingest paper ID``).
ALIASES = ("paper",)

SOURCE = SourceSpec(
    key="papers",
    name="arXiv paper tables",
    kind="paper",
    tier=4,
    organisation="arXiv (paper authors)",
    homepage="https://arxiv.org",
    default_urls=(),
    cadence="manual",
    parser_version="papers/2",
    collection="papers",
    description=(
        "Result tables of arXiv papers (LaTeXML HTML from arxiv.org/html or ar5iv): model x benchmark "
        "x metric x value with table, row, column and caption as the locator; the authors' own claims."
    ),
    licence="each paper's own licence (arXiv); the values are facts reported by the authors",
    # Fetched on demand (``evalhouse ingest paper ID``): nothing to replay in a nightly mirror.
    verified_on=Recording(
        repository=(
            "deep-diver/ai-paper-reviewer (content/paper-reviews/<arXiv id>/index.md: the arXiv LaTeXML "
            "tables quoted whole; four papers at four commits, tests/fixtures/papers/SOURCE.md)"
        ),
        commit="8fcb3074b3455a4c634eba76b001734740d3c5e1",
        recorded="2025-01-22",
        licence="MIT (the site); each table under its paper's arXiv licence",
        files=(
            "fixtures:papers/recorded/2501.12948_table2.html",
            "fixtures:papers/recorded/2501.12948_table5.html",
            "fixtures:papers/recorded/2501.12948_table6.html",
            "fixtures:papers/recorded/2502.11089_table1.html",
            "fixtures:papers/recorded/2502.03387_table3.html",
            "fixtures:papers/recorded/2503.10460_table2.html",
            "fixtures:papers/recorded/2503.10460_table5.html",
            "fixtures:papers/recorded/tables.csv",
        ),
    ),
)

_ID = r"(?P<id>\d{4}\.\d{4,5}|[a-z-]+(?:\.[A-Z]{2})?/\d{7})(?P<v>v\d+)?"
_ID_RE = re.compile(rf"^(?:arxiv:)?{_ID}$", re.IGNORECASE)
_URL_RE = re.compile(
    rf"^https?://(?:www\.|export\.)?(?:arxiv\.org|ar5iv\.labs\.arxiv\.org|ar5iv\.org)/(?P<kind>abs|pdf|html)/{_ID}(?:\.pdf)?/?$",
    re.IGNORECASE,
)
_DOC_ID_RE = re.compile(rf"arxiv(?:\.org/(?:abs|html|pdf)/|:)\s*{_ID}", re.IGNORECASE)


@dataclass(frozen=True)
class Paper:
    arxiv_id: str
    version: str | None  # "v2"; None when the page does not say (ar5iv serves the latest)
    title: str | None

    @property
    def label(self) -> str:
        return f"arXiv:{self.arxiv_id}{self.version or ''}"

    @property
    def abs_url(self) -> str:
        return f"{ARXIV_ABS}/{self.arxiv_id}{self.version or ''}"


# --------------------------------------------------------------------------------------------
# Plan


def plan(state: SourceState) -> list[FetchRequest]:
    """No default URLs: papers are fetched one by one (``locate``)."""
    return []


def locate(target: str, state: SourceState | None = None) -> FetchRequest | None:
    """The HTML of an arXiv id (``2406.01234``, ``arXiv:2406.01234v2``) or abs/pdf/html URL."""
    text = target.strip()
    match = _ID_RE.match(text) or _URL_RE.match(text)
    if match is None:
        return None
    as_given = "kind" in match.groupdict() and match["kind"].lower() == "html"
    url = text if as_given else f"{ARXIV_HTML}/{match['id']}{match['v'] or ''}"
    conditional = state.conditional(url) if state is not None else {}
    return FetchRequest(
        url=url, headers={"accept": "text/html"}, label=f"arxiv:{match['id']}{match['v'] or ''}", **conditional
    )


# --------------------------------------------------------------------------------------------
# Parse


@dataclass
class Document:
    paper: Paper
    candidates: list[tables.Candidate]
    refusals: list[tables.Refusal]
    n_tables: int


def read_document(html: str, url: str) -> Document:
    """Every table of one paper read into candidates and refusals (pure; used by ``parse``)."""
    soup = latexml.soup_of(html)
    if soup.find(class_=re.compile(r"^ltx_")) is None:
        raise ParseError(_not_latexml(html, url, soup))
    paper = _provenance(soup, url)
    found = latexml.tables(soup)
    if not found:
        raise ParseError(f"{paper.label} has no tables (no figure.ltx_table or table.ltx_tabular)")
    candidates: list[tables.Candidate] = []
    refusals: list[tables.Refusal] = []
    for table in found:
        for item in tables.extract(table, RULES, scope=paper.label):
            (candidates if isinstance(item, tables.Candidate) else refusals).append(item)
    return Document(paper, candidates, refusals, len(found))


def triples(doc: Document) -> list[quality.Triple]:
    """The (model, benchmark, value) triples a document's candidates claim, for scoring."""
    paper = f"{doc.paper.arxiv_id}{doc.paper.version or ''}"
    return [quality.Triple(paper, c.table, c.model, c.benchmark_id, c.value) for c in doc.candidates]


def _not_latexml(html: str, url: str, soup: Any) -> str:
    title = soup.title.get_text(" ", strip=True)[:80] if soup.title else html.lstrip()[:60]
    login = soup.find("input", attrs={"type": "password"}) is not None or re.search(
        r"log\s*in|sign\s*in|/login", f"{url} {title}", re.IGNORECASE
    )
    what = "a login page" if login else "a page that is not LaTeXML/ar5iv HTML"
    return f"expected an arXiv HTML paper from {url}, got {what} ({len(html)} characters, title {title!r})"


def _provenance(soup: Any, url: str) -> Paper:
    title = soup.find(class_="ltx_title_document")
    title_text = title.get_text(" ", strip=True) if title else None
    candidates = [url]
    for link in soup.find_all("link", rel="canonical"):
        candidates.append(str(link.get("href", "")))
    for meta in soup.find_all("meta", attrs={"property": "og:url"}):
        candidates.append(str(meta.get("content", "")))
    for cand in candidates:
        if match := _URL_RE.match(cand.strip()):
            return Paper(match["id"], match["v"], title_text)
    if match := _DOC_ID_RE.search(soup.get_text(" ")[:20000]):
        return Paper(match["id"], match["v"], title_text)
    raise ParseError(f"no arXiv id in {url}: neither the URL, a canonical link nor the text names one")


def parse(body: bytes, *, meta: FetchMeta) -> Iterator[ParseItem]:
    """One record per (table, model row); every refused table or cell a ParseFailure."""
    doc = read_document(common.decode_text(body, "the arXiv HTML page"), meta.url)
    for refusal in doc.refusals:
        yield ParseFailure(f"{doc.paper.label} {refusal.locator}", refusal.reason, refusal.cell)
    groups: dict[tuple[int, str, str | None], list[tables.Candidate]] = {}
    for cand in doc.candidates:
        groups.setdefault((cand.ordinal, cand.model, cand.provenance), []).append(cand)
    for (_ordinal, model, provenance), members in groups.items():
        first = members[0]
        locator = f"{doc.paper.label} table {first.table} (#{first.ordinal}) model {model!r}"
        if provenance:
            locator += f" ({provenance} column)"
        row = {"paper": doc.paper.label, "table": first.table, "model": model}
        yield common.build_record(
            meta=meta,
            source_metadata=_source_metadata(doc.paper, provenance),
            eval_library={"name": "unknown", "version": "unknown"},
            model_info=_model_info(first),
            results=[_result(doc.paper, c) for c in members],
            locator=locator,
            payload=common.row_payload({**row, "provenance": provenance} if provenance else row),
        )


def _source_metadata(paper: Paper, provenance: str | None = None) -> dict[str, Any]:
    details = {
        EVALUATED_BY: "unknown",
        ORIGINAL_SOURCE: paper.label,
        ORIGINAL_SOURCE_URL: paper.abs_url,
        "arxiv_id": paper.arxiv_id,
        "arxiv_version": paper.version or "unstated (the page did not name a version)",
    }
    if paper.title:
        details["paper_title"] = paper.title
    if provenance:
        details["evalhouse.paper_column_provenance"] = f"{provenance}: {RULES.words.provenance.get(provenance, '')}"
    return {
        "source_name": SOURCE.name,
        "source_type": "documentation",
        "source_organization_name": "arXiv",
        "source_organization_url": "https://arxiv.org",
        "evaluator_relationship": "other",
        "additional_details": details,
    }


def _model_info(cand: tables.Candidate) -> dict[str, Any]:
    details = {"deployment_type": "unknown", "model_availability": "unknown"}
    if cand.model_markers:
        details["evalhouse.paper_model_markers"] = " ".join(cand.model_markers)
    if cand.group:
        details["evalhouse.paper_row_group"] = cand.group
    return {"name": cand.model, "id": cand.model, "additional_details": details}


def _result(paper: Paper, cand: tables.Candidate) -> dict[str, Any]:
    details = {
        "arxiv_id": paper.arxiv_id,
        "arxiv_version": paper.version or "unstated",
        "table": cand.table,
        "table_ordinal": str(cand.ordinal),
        "row": str(cand.row),
        "column": str(cand.col),
        "caption": cand.caption[:500],
        "cell_text": cand.text,
        "header_path": " > ".join(cand.header_path),
        "benchmark_label": cand.benchmark_raw,
        "evalhouse.benchmark_status": cand.benchmark_status,
        "evalhouse.benchmark_decision": cand.benchmark_why,
        "evalhouse.metric_decision": cand.metric_why,
        "evalhouse.scale_decision": cand.scale_why,
    }
    if cand.provenance:
        details["provenance"] = cand.provenance
    if cand.bold:
        details["bold"] = "true"
    if cand.underline:
        details["underline"] = "true"
    if cand.markers:
        details["markers"] = " ".join(cand.markers)
    if cand.uncertainty_text:
        details["uncertainty_text"] = cand.uncertainty_text
    lo, hi = cand.metric.bounds
    bounds: tuple[float | str, float | str] = (
        (0.0, 100.0)
        if cand.unit == "percent"
        else (0.0, 1.0)
        if cand.unit == "proportion"
        else ("-Infinity" if lo is None else lo, "Infinity" if hi is None else hi)
    )
    return common.score_result(
        source_key=SOURCE.key,
        dataset_name=cand.benchmark_name,
        url=paper.abs_url,
        metric_id=cand.metric_id,
        metric_name=cand.metric_id,
        metric_kind=cand.metric.kind,
        unit=cand.unit,
        lower_is_better=cand.metric.lower_is_better,
        bounds=bounds,
        score=cand.value,
        uncertainty=cand.uncertainty,
        details=details,
        setup=dict(cand.setup) or None,
        metric_parameters={k: str(v) for k, v in cand.metric_params.items()} or None,
    )
