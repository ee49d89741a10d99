"""The papers source: authored ar5iv-style tables (tests/fixtures/papers), scored against hand labels.

The extraction's precision, recall and micro-F1 are printed per table (run with ``-s`` to see
them; ``benchmarks/papers.py`` prints the same report). Tables are read through the real parser
and loaded through the real pipeline; a redirect to a login page is served by a local server.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path

import pytest
from httpserver import Reply, serve

from evalhouse.ingest.http import HttpClient
from evalhouse.ingest.source import ParseError
from evalhouse.ingest.sources import _paper_quality as quality
from evalhouse.ingest.sources import papers
from evalhouse.pipeline.ingest_file import ingest_file
from evalhouse.pipeline.refresh import RefreshOptions
from evalhouse.warehouse.db import Warehouse
from evalhouse.warehouse.raw.store import RawStore

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "papers"
PAPERS = sorted(FIXTURES.glob("*.html"))
FAST = {"backoff_base": 0.001, "backoff_max": 0.01, "timeout": 2.0, "max_retries": 0, "trust_env": False}


def _doc(name: str) -> papers.Document:
    path = FIXTURES / name
    return papers.read_document(path.read_text("utf-8"), path.resolve().as_uri())


def _tables() -> list[dict[str, str]]:
    text = "\n".join(
        line for line in (FIXTURES / "tables.csv").read_text("utf-8").splitlines() if not line.startswith("#")
    )
    return list(csv.DictReader(io.StringIO(text)))


@pytest.fixture(scope="module")
def scores() -> list[quality.Score]:
    gold = quality.read_labels((FIXTURES / "labels.csv").read_text("utf-8"))
    extracted = [t for path in PAPERS for t in papers.triples(_doc(path.name))]
    return quality.score(extracted, gold, [(t["paper"], t["table"]) for t in _tables()])


def test_extraction_quality_against_the_hand_labels(scores: list[quality.Score]) -> None:
    print("\n" + quality.report(scores))
    well_formed = {(t["paper"], t["table"]) for t in _tables() if t["well_formed"] == "yes"}
    good = quality.micro([s for s in scores if (s.paper, s.table) in well_formed])
    overall = quality.micro(scores)
    print(f"micro-F1 well-formed tables {good.f1:.3f}; all tables {overall.f1:.3f} (AxCell: {quality.AXCELL_MICRO_F1})")
    assert good.f1 >= 0.8
    assert good.precision == 1.0  # nothing is guessed: every extracted triple is a labelled one
    # where it falls short: a header that does not say which ARC, with no metric anywhere, is refused
    short = next(s for s in scores if (s.paper, s.table) == ("9912.00001v2", "5"))
    assert short.expected == 4 and short.extracted == 0
    # the non-result tables yield nothing
    for s in scores:
        if s.paper == "9912.00002v1" and s.table in {"2", "3", "4", "5"}:
            assert (s.expected, s.extracted) == (0, 0), s


def test_markers_uncertainty_and_provenance_are_kept() -> None:
    doc = _doc("9912.00002v1.html")
    assert (doc.paper.arxiv_id, doc.paper.version) == ("9912.00002", "v1")
    by_cell = {(c.model, c.benchmark_id): c for c in doc.candidates}
    best = by_cell[("WizardLM-2-8x22B", "gpqa_diamond")]
    assert best.bold and not best.underline and best.value == 43.4 and best.unit == "percent"
    assert best.uncertainty == {"standard_error": {"value": 2.3}} and best.uncertainty_text == "± 2.3"
    assert by_cell[("Qwen2-72B-Instruct", "gpqa_diamond")].underline
    assert (best.table, best.row, best.col) == ("1", 2, 2)
    notes = {(c.model, c.benchmark_id): c for c in _doc("9912.00001v2.html").candidates if c.table == "4"}
    falcon = notes[("Falcon3-10B-Instruct", "ifeval")]
    assert falcon.markers == ("*",) and falcon.model_markers == ("1",)  # the footnote body is not in the name
    assert notes[("SeaLLMs-v3-7B-Chat", "bbh")].markers == ("*",) and notes[("SeaLLMs-v3-7B-Chat", "bbh")].value == 33.8


def test_merged_header_cells_are_resolved_into_paths_and_groups() -> None:
    cands = [c for c in _doc("9912.00001v2.html").candidates if c.table == "3"]
    sppo = {c.benchmark_id: c for c in cands if c.model == "Llama-3-Instruct-8B-SPPO-Iter3"}
    assert set(sppo) == {"ifeval", "bbh", "mmlu_pro"}  # its v1 cells are dashes: nothing, not failures
    assert sppo["bbh"].header_path == ("Open LLM Leaderboard v2 (normalised score, %)", "BBH")
    assert sppo["bbh"].metric_id == "normalized_score" and sppo["bbh"].group == "Llama"  # rowspan group label
    calme = {c.benchmark_id: c for c in cands if c.model == "calme-2.3-phi3-4b"}
    assert calme["mmlu"].metric_id == "accuracy" and calme["mmlu"].value == 69.24


def test_transposed_tables_take_metric_and_shots_from_the_row_label() -> None:
    cands = {(c.model, c.benchmark_id): c for c in _doc("9912.00001v2.html").candidates if c.table == "2"}
    hs = cands[("smol_llama-220M-GQA", "hellaswag")]
    assert (hs.metric_id, hs.shots, hs.value) == ("normalized_accuracy", 10, 29.76)
    assert cands[("calme-2.3-phi3-4b", "mmlu")].metric_id == "accuracy"


def test_non_result_and_ambiguous_tables_are_refused_with_their_locator() -> None:
    refusals = {r.locator: r.reason for r in _doc("9912.00002v1.html").refusals}
    assert "hyperparameter" in refusals["table 2 (#2)"]
    assert "loadings" in refusals["table 3 (#3)"]
    assert refusals["table 4 (#4)"].startswith("ambiguous") and "'p'" in refusals["table 4 (#4)"]
    assert "no row or column label names a benchmark" in refusals["table 5 (#5)"]
    short = {r.locator: r.reason for r in _doc("9912.00001v2.html").refusals}
    assert "'ARC' names no benchmark" in short["table 5 (#5) row 2 col 2"]
    assert "neither the header nor the caption names a metric" in short["table 5 (#5) row 2 col 3"]


def test_locate_turns_ids_and_urls_into_html_requests() -> None:
    assert papers.locate("2406.01234").url == "https://arxiv.org/html/2406.01234"
    assert papers.locate("arXiv:2406.01234v2").url == "https://arxiv.org/html/2406.01234v2"
    assert papers.locate("https://arxiv.org/abs/2406.01234v3").url == "https://arxiv.org/html/2406.01234v3"
    assert papers.locate("https://arxiv.org/pdf/2406.01234v3.pdf").url == "https://arxiv.org/html/2406.01234v3"
    ar5iv = "https://ar5iv.labs.arxiv.org/html/1706.03762"
    assert papers.locate(ar5iv).url == ar5iv
    assert papers.locate("not an id") is None and papers.locate("/tmp/paper.html") is None


def test_a_paper_loads_with_every_cell_accounted_for(tmp_path: Path) -> None:
    with Warehouse.open(tmp_path / "w.duckdb") as wh:
        result = ingest_file(wh, RawStore(tmp_path / "raw"), "paper", str(FIXTURES / "9912.00001v2.html"))
        assert result.status == "partial", result.error  # table 5 is refused cell by cell
        doc = _doc("9912.00001v2.html")
        assert result.report.scores_loaded + result.report.scores_quarantined == len(doc.candidates) == 56
        assert wh.scalar("SELECT count(*) FROM quarantine WHERE stage = 'parse'") == len(doc.refusals)
        row = wh.con.execute(
            "SELECT s.benchmark_id, s.raw_value, s.value, s.unit, src.tier,"
            " e.record->>'$.source_metadata.additional_details.arxiv_version'"
            " FROM score s JOIN evaluation e USING (evaluation_id) JOIN source src ON src.source_key = s.source_key"
            " WHERE e.model_name = 'WizardLM-2-8x22B' AND s.benchmark_id = 'gpqa'"
        ).fetchone()
    assert row[:4] == ("gpqa", 17.56, pytest.approx(0.1756), "proportion") and row[4] == 4 and row[5] == "v2"


def test_bad_pages_fail_clearly(tmp_path: Path) -> None:
    login = b"<!DOCTYPE html><html><head><title>Sign in</title></head><body>"
    login += b'<form><input type="password"></form></body></html>'
    routes = {"/m/arxiv.org/html/2406.01234": Reply(302, headers={"Location": "/login"}), "/login": Reply(200, login)}
    with serve(routes) as srv, Warehouse.open(tmp_path / "w.duckdb") as wh:
        replay = lambda _m: HttpClient(mirror=f"{srv.url}/m", **FAST)  # noqa: E731 - the local arXiv
        result = ingest_file(
            wh, RawStore(tmp_path / "raw"), "paper", "arXiv:2406.01234", RefreshOptions(client_factory=replay)
        )
        assert srv.requests_for("/login")
    assert result.status == "failed" and "login page" in result.error
    with pytest.raises(ParseError, match="no tables"):
        papers.read_document('<html><body><div class="ltx_page_main">arXiv:2406.01234v1</div></body></html>', "x")
    with pytest.raises(ParseError, match="no arXiv id"):
        papers.read_document('<html><body><table class="ltx_tabular"><tr><td>1</td></tr></table></body></html>', "x")


def test_label_decisions_real_tables_do_not_show() -> None:
    """Named edge cases beside the recorded tables: a family name with no year, a model property on
    the benchmark axis, a subset under a registry benchmark, pass@k with k > 1, shots and CoT."""

    def row(tag: str, *cells: str) -> str:
        return "<tr>" + "".join(f"<{tag}>{c}</{tag}>" for c in cells) + "</tr>"

    head = row("th", "Model", "AIME", "Params", "AIME 2024", "HumanEval pass@8", "MMLU (5-shot, CoT, acc)")
    head += row("th", "", "", "", "Easy", "", "")
    body = row("td", "Llama-3-8B", "30.0", "8", "12.5", "61.0", "66.6")
    body += row("td", "Qwen2-7B", "33.0", "7", "14.0", "64.0", "70.1")
    html = (
        '<html><body><figure class="ltx_table"><figcaption><span class="ltx_tag ltx_tag_table">Table 1: </span>'
        'Results (%).</figcaption><table class="ltx_tabular"><thead class="ltx_thead">'
        f"{head}</thead><tbody>{body}</tbody></table></figure></body></html>"
    )
    doc = papers.read_document(html, "https://arxiv.org/html/2406.01234v1")
    why = {r.locator: r.reason for r in doc.refusals}
    assert "names the family aime" in why["table 1 (#1) row 3 col 2"]  # which year: never AIME 2024 on a guess
    assert "is not a benchmark" in why["table 1 (#1) row 3 col 3"]
    assert "sits under aime" in why["table 1 (#1) row 3 col 4"]  # "Easy" under AIME 2024: a subset
    got = {(c.model, c.benchmark_id): c for c in doc.candidates}
    assert set(got) == {(m, b) for m in ("Llama-3-8B", "Qwen2-7B") for b in ("humaneval", "mmlu")}
    he, mmlu = got[("Llama-3-8B", "humaneval")], got[("Llama-3-8B", "mmlu")]
    assert (he.metric_id, dict(he.metric_params), he.unit) == ("pass_rate", {"k": 8}, "percent")
    assert (mmlu.metric_id, dict(mmlu.setup), mmlu.value) == ("accuracy", {"shots": "5", "cot": "true"}, 66.6)
