"""The papers source on real arXiv LaTeXML tables (tests/fixtures/papers/SOURCE.md), fetched through the
real client from a loopback server standing in for arxiv.org/html.

Each recorded table is served as arXiv serves it: inside a ``figure.ltx_table`` whose caption is the
paper's own (``recorded/tables.csv``), the tables of one paper on one page. The numbers of each table
are counted here from its HTML with BeautifulSoup, not by the parser: every ``td``/``th`` whose text is
a number. Every one of them must be loaded with the value it prints or refused with its row and
column (none twice, none dropped), and the result tables must load at least 99% of them with the
identity their headers state: checked cell by cell against values read off the bytes by hand.
"""

from __future__ import annotations

import csv
import json
import re
from dataclasses import dataclass
from pathlib import Path

import pytest
from bs4 import BeautifulSoup
from httpserver import serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.mirror import build_mirror
from evalhouse.ingest.sources import papers
from evalhouse.pipeline.refresh import RefreshOptions
from evalhouse.pipeline.targets import refresh_targets
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

RECORDED = Path(__file__).resolve().parents[1] / "fixtures" / "papers" / "recorded"
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "max_retries": 0, "trust_env": False}
_NUMBER = re.compile(r"[+-]?\d+(?:\.\d+)?")
#: The one recorded table whose numbers state no metric anywhere (header or caption): all refused.
NO_METRIC = ("2503.10460", "5")


@dataclass(frozen=True)
class Recorded:
    file: str
    paper: str  # "2501.12948v1", or without a version where the page does not state one
    table: str
    caption: str

    @property
    def arxiv_id(self) -> str:
        return self.paper.split("v")[0]

    @property
    def html(self) -> str:
        return (RECORDED / self.file).read_text(encoding="utf-8")


def _recorded() -> list[Recorded]:
    text = (RECORDED / "tables.csv").read_text(encoding="utf-8")
    rows = csv.DictReader(line for line in text.splitlines() if not line.startswith("#"))
    return [Recorded(r["file"], r["paper"], r["table"], r["caption"]) for r in rows]


TABLES = _recorded()


def page(paper: str) -> bytes:
    """The paper's page as the test serves it: its recorded tables, each in a figure with its caption."""
    figures = "\n".join(
        f'<figure class="ltx_table" id="T{t.table}"><figcaption class="ltx_caption">'
        f'<span class="ltx_tag ltx_tag_table">Table {t.table}: </span>{t.caption}</figcaption>\n{t.html}\n</figure>'
        for t in TABLES
        if t.paper == paper
    )
    return f'<html><body><article class="ltx_document">\n{figures}\n</article></body></html>'.encode()


def numbers(html: str) -> dict[tuple[int, int], float]:
    """``(row, column) -> value`` of every numeric cell, rows counted from the table's first ``tr``
    and columns by position (1-based); checked to be grid positions: no row holding a number is
    entered by a rowspan from above or holds a spanning cell."""
    table = BeautifulSoup(html, "html.parser").find("table")
    rows = table.find_all("tr")
    spanned = {
        r + k
        for r, tr in enumerate(rows, start=1)
        for cell in tr.find_all(["td", "th"], recursive=False)
        for k in range(1, int(cell.get("rowspan", 1)))
    }
    out = {}
    for r, tr in enumerate(rows, start=1):
        cells = tr.find_all(["td", "th"], recursive=False)
        found = {
            (r, c): float(text)
            for c, cell in enumerate(cells, start=1)
            if _NUMBER.fullmatch(text := cell.get_text(" ", strip=True))
        }
        if found:
            assert r not in spanned and all(int(cell.get("colspan", 1)) == 1 for cell in cells), (r, html[:80])
        out.update(found)
    return out


@pytest.fixture(scope="module")
def loaded(tmp_path_factory: pytest.TempPathFactory):
    root = tmp_path_factory.mktemp("papers")
    pages = {f"{papers.ARXIV_HTML}/{t.paper}": page(t.paper) for t in TABLES}
    build_mirror(root / "m" / "m", pages)
    with serve(static_dir=root / "m") as srv:

        def client(_mirror: str | None) -> HttpClient:
            return HttpClient(mirror=f"{srv.url}/m", **FAST)

        wh = Warehouse.open(root / "w.duckdb")
        targets = sorted({t.paper for t in TABLES})
        result = refresh_targets(wh, RawStore(root / "raw"), "paper", targets, RefreshOptions(client_factory=client))
    with wh:
        yield result, wh


_DETAIL = "json_extract_string(e.record, '$.evaluation_results[' || s.result_index || '].{}')"
_SCORES = (
    f"SELECT {_DETAIL.format('score_details.details.row')}, {_DETAIL.format('score_details.details.column')},"
    " s.raw_value, e.model_name, s.benchmark_id, s.metric_id, s.metric_params_key, s.setup_key, s.unit,"
    f" {_DETAIL.format('score_details.details.provenance')}"
    " FROM score s JOIN evaluation e USING (evaluation_id)"
    " WHERE s.source_key = 'papers' AND e.record->>'$.source_metadata.additional_details.arxiv_id' = ?"
    f" AND {_DETAIL.format('score_details.details.table')} = ?"
)


def scores(wh: Warehouse, t: Recorded) -> list[tuple]:
    return wh.con.execute(_SCORES, [t.arxiv_id, t.table]).fetchall()


def refused(wh: Warehouse, t: Recorded) -> dict[tuple[int, int], str]:
    """Quarantined cells of the table: refused while parsing (the locator names row and column) or
    while canonicalising (the stored result names them)."""
    out = {}
    for locator, reason, payload in wh.con.execute(
        "SELECT locator, reason, payload FROM quarantine WHERE source_key = 'papers' AND locator LIKE ?",
        [f"arXiv:{t.paper} %"],
    ).fetchall():
        if m := re.search(rf" table {re.escape(t.table)} \(#\d+\) row (\d+) col (\d+)$", locator):
            out[(int(m[1]), int(m[2]))] = reason
        elif " / evaluation_results[" in locator and payload:
            details = json.loads(payload).get("score_details", {}).get("details", {})
            if details.get("table") == t.table:
                out[(int(details["row"]), int(details["column"]))] = reason
    return out


@pytest.mark.parametrize("t", TABLES, ids=[t.file for t in TABLES])
def test_every_number_of_a_real_table_is_loaded_as_printed_or_refused_by_position(loaded, t: Recorded) -> None:
    _result, wh = loaded
    cells = numbers(t.html)
    rows = scores(wh, t)
    got = {(int(r), int(c)): v for r, c, v, *_ in rows}
    quarantined = refused(wh, t)
    assert len(rows) == len(got)  # no cell loaded twice
    assert all(cells.get(pos) == value for pos, value in got.items())  # loaded as printed, where printed
    assert not set(got) & set(quarantined)
    duplicates = 0  # a result repeated within one record; none in these tables
    assert len(got) + len(quarantined.keys() & cells.keys()) + duplicates == len(cells)  # nothing dropped
    recall = len(got) / len(cells)
    print(f"\n{t.file}: {len(got)} of {len(cells)} numbers loaded ({recall:.1%}), {len(quarantined)} refused")
    if (t.arxiv_id, t.table) == NO_METRIC:
        assert not got and all("names a metric" in why for why in quarantined.values())
    else:
        assert recall >= 0.99, sorted(quarantined.items())[:5]


def _row(html: str, first: str) -> list[str]:
    """The cell texts of the row whose first cell reads ``first`` (for checking a hand label)."""
    for tr in BeautifulSoup(html, "html.parser").find("table").find_all("tr"):
        cells = [c.get_text(" ", strip=True) for c in tr.find_all(["td", "th"], recursive=False)]
        if cells and cells[0] == first:
            return cells
    raise AssertionError(f"no row {first!r}")


# (file, model as the table prints it, column counted from the model's cell, benchmark, metric,
# metric parameters, setup, value as printed) - read off the bytes by hand.
VOTE = ("majority_vote_accuracy", "samples=64")
SPOTS = [
    ("2501.12948_table2.html", "DeepSeek-R1-Zero", 4, "gpqa_diamond", "pass_rate", "", "", 73.3),
    ("2501.12948_table2.html", "OpenAI-o1-0912", 5, "livecodebench", "pass_rate", "", "", 63.4),
    ("2501.12948_table2.html", "OpenAI-o1-mini", 2, "aime", *VOTE, "", 80.0),
    ("2501.12948_table2.html", "OpenAI-o1-0912", 6, "codeforces", "contest_rating", "", "", 1843.0),
    ("2501.12948_table2.html", "DeepSeek-R1-Zero", 3, "math_500", "pass_rate", "", "", 95.9),
    ("2501.12948_table5.html", "QwQ-32B-Preview", 2, "aime", *VOTE, "", 60.0),
    ("2501.12948_table5.html", "DeepSeek-R1-Distill-Llama-70B", 4, "gpqa_diamond", "pass_rate", "", "", 65.2),
    ("2501.12948_table5.html", "GPT-4o-0513", 6, "codeforces", "contest_rating", "", "", 759.0),
    ("2501.12948_table5.html", "DeepSeek-R1-Distill-Qwen-1.5B", 1, "aime", "pass_rate", "", "", 28.9),
    ("2501.12948_table5.html", "Claude-3.5-Sonnet-1022", 5, "livecodebench", "pass_rate", "", "", 38.9),
    ("2501.12948_table6.html", "DeepSeek-R1-Zero-Qwen-32B", 1, "aime", "pass_rate", "", "", 47.0),
    ("2501.12948_table6.html", "DeepSeek-R1-Zero-Qwen-32B", 2, "aime", *VOTE, "", 60.0),
    ("2501.12948_table6.html", "QwQ-32B-Preview", 4, "gpqa_diamond", "pass_rate", "", "", 54.5),
    ("2501.12948_table6.html", "DeepSeek-R1-Distill-Qwen-32B", 5, "livecodebench", "pass_rate", "", "", 57.2),
    ("2501.12948_table6.html", "DeepSeek-R1-Distill-Qwen-32B", 3, "math_500", "pass_rate", "", "", 94.3),
    ("2502.11089_table1.html", "Full Attn", 1, "mmlu", "accuracy", "", "shots=5", 0.567),
    ("2502.11089_table1.html", "NSA", 3, "cmmlu", "accuracy", "", "shots=5", 0.587),
    ("2502.11089_table1.html", "NSA", 6, "math", "accuracy", "", "shots=4", 0.264),
    ("2502.11089_table1.html", "Full Attn", 7, "drop", "f1", "", "shots=1", 0.503),
    ("2502.11089_table1.html", "NSA", 9, "humaneval", "pass_rate", "", "shots=0", 0.348),
    ("2502.11089_table1.html", "Full Attn", 8, "mbpp", "pass_rate", "", "shots=3", 0.482),
    ("2503.10460_table2.html", "DeepSeek-R1-distill-Qwen-32B", 1, "aime", "pass_rate", "", "", 72.6),
    ("2503.10460_table2.html", "DeepSeek-R1-distill-Qwen-32B", 2, "aime", "pass_rate", "", "", 72.3),
    ("2503.10460_table2.html", "DeepSeek-R1-distill-Qwen-14B", 1, "aime", "pass_rate", "", "", 69.7),
    ("2503.10460_table2.html", "DeepSeek-R1-distill-Qwen-7B", 2, "aime", "pass_rate", "", "", 54.0),
    ("2503.10460_table2.html", "QWQ-32B", 1, "aime", "pass_rate", "", "", 79.5),
]
# LIMO table 3 is transposed: (file, benchmark row as printed, model column, benchmark, value).
LIMO_SPOTS = [
    ("AIME24", "OpenAI-o1-preview", "aime", 44.6),
    ("MATH500", "LIMO (817)", "math_500", 94.8),
    ("GPQA", "QwQ-32B-preview", "gpqa", 65.1),  # "GPQA": the question set is not stated, so not Diamond
    ("OlympiadBench", "NuminaMath (100k)", "olympiadbench", 36.7),
    ("CHMath", "OpenThoughts (114k)", "papers.chmath", 74.1),  # not in the registry: named by the paper
    ("Minerva", "Qwen2.5-32B-Instruct", "papers.minerva", 41.2),
    ("AMC23", "LIMO (817)", "amc_2023", 92.0),
]


@pytest.mark.parametrize("spot", SPOTS, ids=[f"{s[0]}:{s[1]}:{s[2]}" for s in SPOTS])
def test_spot_values_against_the_bytes(loaded, spot) -> None:
    file, model, offset, bench, metric, params, setup, value = spot
    t = next(t for t in TABLES if t.file == file)
    printed = _row(t.html, model)
    assert float(printed[offset]) == value  # the hand label is what the bytes print
    _result, wh = loaded
    got = {(m, b, mt, p, s, v) for _r, _c, v, m, b, mt, p, s, *_ in scores(wh, t)}
    assert (model, bench, metric, params, setup, value) in got


@pytest.mark.parametrize("spot", LIMO_SPOTS, ids=[s[0] for s in LIMO_SPOTS])
def test_spot_values_of_the_transposed_limo_table(loaded, spot) -> None:
    row, model, bench, value = spot
    t = next(t for t in TABLES if t.arxiv_id == "2502.03387")
    assert str(value) in _row(t.html, row)
    _result, wh = loaded
    got = {(m, b, mt, v) for _r, _c, v, m, b, mt, *_ in scores(wh, t)}
    assert (model, bench, "pass_rate", value) in got  # the metric is the caption's "pass@1"


def test_new_benchmarks_and_table_averages_are_registered_with_a_decision_never_merged(loaded) -> None:
    _result, wh = loaded
    provisional = dict(
        wh.con.execute(
            "SELECT benchmark_id, registry_version FROM benchmark WHERE registry_version = 'provisional:papers'"
        ).fetchall()
    )
    named_by_limo = {"papers.chmath", "papers.gaokao", "papers.kaoyan", "papers.gradeschool", "papers.minerva"}
    assert named_by_limo <= set(provisional)
    averages = {b for b in provisional if "_avg" in b}
    assert averages == {"papers.arxiv_2502_11089v1_table_1_avg", "papers.arxiv_2502_03387_table_3_avg"}
    decided = {
        row[0]
        for row in wh.con.execute(
            "SELECT subject->>'$.id' FROM curation_decision WHERE kind = 'provisional_benchmark'"
        ).fetchall()
    }
    assert set(provisional) <= decided
    # a label the registry knows is never re-registered, and a generic word is read only as scoped
    assert wh.scalar("SELECT count(*) FROM benchmark WHERE benchmark_id LIKE 'papers.%gpqa%'") == 0


def test_the_same_claim_in_two_papers_meets_in_one_cell(loaded) -> None:
    """Light-R1's "paper" column quotes DeepSeek-R1's own distilled-model results: same cell."""
    _result, wh = loaded
    cells = wh.con.execute(
        "SELECT e.record->>'$.source_metadata.additional_details.arxiv_id', s.config_id, s.benchmark_id,"
        " s.metric_id, s.metric_params_key, s.setup_key, s.subset, s.raw_value"
        " FROM score s JOIN evaluation e USING (evaluation_id)"
        " WHERE s.source_key = 'papers' AND s.benchmark_id = 'aime' AND s.metric_id = 'pass_rate'"
        " AND s.raw_value = 72.6"
    ).fetchall()
    by_paper = {row[0]: row[1:7] for row in cells}
    assert by_paper["2501.12948"] == by_paper["2503.10460"]


def test_a_table_that_states_no_metric_is_refused_with_the_reason(loaded) -> None:
    result, wh = loaded
    assert result.status == "partial", result.error  # loaded, with the refused cells quarantined
    t = next(t for t in TABLES if (t.arxiv_id, t.table) == NO_METRIC)
    reasons = set(refused(wh, t).values())
    assert reasons and all("neither the header nor the caption names a metric" in r for r in reasons)
    assert "N/A" not in {c for c in numbers(t.html).values()}  # "N/A" is no number: not counted, not refused
