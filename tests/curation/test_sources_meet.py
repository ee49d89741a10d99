"""Sources meet where they report the same measurement, on real bytes: Epoch AI's rows quoting HELM
Classic, aider and Artificial Analysis beside those sources' own, τ²-bench's telecom domain beside
Artificial Analysis's, the Open LLM Leaderboard's normalised score from its contents and from the
model cards; and where they stay apart, ``conflicts`` says why (tests/meeting_corpus.py)."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.config import duckdb_config

runner = CliRunner()
EPOCH, AA, HELM = "epoch-benchmarks", "artificial-analysis", "eee-helm-classic"
EPOCH_DIR = ("datasets", "epoch-benchmarks-2025-11")
HELM_DIR = ("datasets", "eee-datastore-legacy", "data", "helm_classic")


@pytest.fixture(scope="module")
def corpus(real_warehouse: Path, shared: Path, tmp_path_factory: pytest.TempPathFactory) -> Path:
    from meeting_corpus import build

    return build(real_warehouse, shared, tmp_path_factory.mktemp("meeting"))


@pytest.fixture(scope="module")
def con(corpus: Path):
    # opened as evalhouse opens it, so the CLI run in this process shares its DuckDB instance
    c = duckdb.connect(str(corpus), read_only=True, config=duckdb_config())
    yield c
    c.close()


def cli(db: Path, *args: str) -> str:
    out = runner.invoke(app, ["--db", str(db), *args], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    return out.output


def shared_cells(con, a: str, b: str, benchmark: str) -> list[tuple]:
    """``(cell_id, config_id, values of a, values of b)`` of every cell holding both sources."""
    return con.execute(
        "SELECT cell_id, any_value(config_id), list(value) FILTER (source_key = ?), list(value) FILTER (source_key = ?)"
        " FROM v_cell_candidates WHERE benchmark_id = ? GROUP BY cell_id"
        " HAVING count(DISTINCT source_key) FILTER (source_key IN (?, ?)) = 2",
        [a, b, benchmark, a, b],
    ).fetchall()


def cell_keys(con, cell_ids: list[str]) -> dict[str, tuple[str, str]]:
    """Each cell's ``(metric_id, setup_key)``, read in one pass over ``v_scores_canonical`` (a cell has one)."""
    rows = con.execute(
        "SELECT DISTINCT cell_id, metric_id, setup_key FROM v_scores_canonical WHERE list_contains(?, cell_id)",
        [cell_ids],
    ).fetchall()
    keys = {cell: (metric, setup) for cell, metric, setup in rows}
    assert len(keys) == len(rows), "a cell with two metrics or setups"
    return keys


def epoch_rows(shared: Path, stem: str, source: str) -> list[dict[str, str]]:
    with (shared.joinpath(*EPOCH_DIR) / f"{stem}.csv").open(newline="", encoding="utf-8") as f:
        return [r for r in csv.DictReader(f) if r["Source"] == source]


def helm_values(shared: Path, name: str) -> set[float]:
    """Every value HELM Classic's collection states for the scenario ``name``, read from its files."""
    out = set()
    for path in shared.joinpath(*HELM_DIR).rglob("*.json"):
        for result in json.loads(path.read_text(encoding="utf-8"))["evaluation_results"]:
            if result["evaluation_name"] == name and result["score_details"]["score"] >= 0:
                out.add(round(result["score_details"]["score"], 6))
    return out


@pytest.mark.parametrize("case", [
    ("bool_q_external", "boolq", "BoolQ", "5", 45),
    ("hella_swag_external", "hellaswag", "HellaSwag", "0", 20),
])  # fmt: skip
def test_epoch_rows_quoting_helm_classic_meet_helm_classics_own(con, corpus: Path, shared: Path, case: tuple) -> None:
    stem, benchmark, scenario, shots, least = case
    quoted = epoch_rows(shared, stem, "Stanford HELM")
    helm = helm_values(shared, scenario)
    cells = shared_cells(con, EPOCH, HELM, benchmark)
    print(f"{benchmark}: {len(cells)} cells hold Epoch's HELM quote and HELM Classic's own row")
    assert least <= len(cells) <= len(quoted)
    keys = cell_keys(con, [c[0] for c in cells])
    for cell_id, config, epoch, ours in cells:
        assert len(ours) == 1 and round(ours[0], 6) in helm, config
        assert round(ours[0], 3) in {round(v, 3) for v in epoch}, (config, epoch, ours)  # the same number
        assert keys.get(cell_id) == ("accuracy", f"shots={shots}"), config
    # the same measurement: no shared cell disagrees, and the link is a recorded decision
    data = json.loads(cli(corpus, "stats", "--json"))
    pair = next(p for p in data["source_pairs"] if p["sources"] == [HELM, EPOCH])
    assert pair["cells"] >= len(cells) and pair["cells_disagreeing"] == 0
    linked = {
        json.loads(s)["id"]: (json.loads(s)["linked_to"], json.loads(d))
        for s, d in con.execute(
            "SELECT subject, detail FROM curation_decision WHERE kind = 'benchmark_link'"
        ).fetchall()
    }
    target, link = linked[f"helm_classic.{benchmark}"]
    assert target == benchmark and link["metrics"] == {"exact_match": "accuracy"} and link["setup"] == {"shots": shots}


def test_helm_classics_boolq_says_its_link_and_protocol_in_the_chain(con) -> None:
    chains = [json.loads(c) for (c,) in con.execute(
        "SELECT CAST(canonical_steps AS VARCHAR) FROM score WHERE source_key = ? AND benchmark_id = 'boolq'", [HELM]
    ).fetchall()]  # fmt: skip
    assert len(chains) >= 60
    for chain in chains:
        text = " | ".join(chain)
        assert "linked to registry benchmark boolq by benchmark_links.yaml" in text
        assert "exact_match -> accuracy" in text and "protocol fixes shots=5" in text


def test_what_stays_apart_from_helm_says_why(corpus: Path) -> None:
    """HELM Lite's GSM8K is not Epoch's HELM-quoted GSM8K (the values differ for the same model):
    the near miss names the link file's reason."""
    data = json.loads(cli(corpus, "conflicts", "--model", "meta/llama-2-70b", "--benchmark", "gsm8k", "--json"))
    pairs = [p for p in data["near_misses"]["pairs"]
             if {p["a"]["benchmark_id"], p["b"]["benchmark_id"]} == {"gsm8k", "helm_lite.gsm8k"}]  # fmt: skip
    assert pairs
    for pair in pairs:
        [part] = [d for d in pair["apart_by"] if d["part"] == "benchmark"]
        assert "earlier HELM release" in part["note"]


def test_aider_rows_epoch_quotes_meet_the_boards_own(con, corpus: Path, shared: Path) -> None:
    quoted = epoch_rows(shared, "aider_polyglot_external", "Aider LLM Leaderboards")
    cells = shared_cells(con, EPOCH, "aider-polyglot", "aider_polyglot")
    keys = cell_keys(con, [c[0] for c in cells])
    pass_rate = [c for c in cells if keys[c[0]][0] == "pass_rate"]
    same = [c for c in pass_rate if {round(v, 3) for v in c[2]} == {round(v, 3) for v in c[3]}]
    print(f"aider: {len(pass_rate)} of Epoch's {len(quoted)} quoted runs share a pass-rate cell with the board's,"
          f" {len(same)} with the same value")  # fmt: skip
    assert 45 <= len(pass_rate) <= len(quoted) and len(same) >= 0.9 * len(pass_rate)
    # the others are one configuration run again (aider's o3 (high) of 2025-06-25 replaced the run
    # Epoch quotes): the same measurement, their spread within the disagreement tolerance
    data = json.loads(cli(corpus, "stats", "--json"))
    pair = next(p for p in data["source_pairs"] if p["sources"] == ["aider-polyglot", EPOCH])
    assert pair["cells"] >= len(pass_rate) and pair["cells_disagreeing"] == 0


def test_artificial_analysis_tau2_is_the_telecom_domain_and_says_what_keeps_it_from_the_leaderboard(
    con, corpus: Path
) -> None:
    subsets = con.execute(
        "SELECT DISTINCT subset FROM score WHERE source_key = ? AND benchmark_id = 'tau2_bench'", [AA]
    ).fetchall()
    assert subsets == [("telecom",)]
    # GPT-4.1: both report its telecom pass rate; the leaderboard's run states its user simulator
    # and version, AA's states neither, so they are two measurements and the near miss says so
    data = json.loads(cli(corpus, "conflicts", "--model", "gpt-4.1-2025-04-14", "--benchmark", "tau2_bench", "--json"))
    pairs = [
        p for p in data["near_misses"]["pairs"]
        if {*p["a"]["sources"], *p["b"]["sources"]} == {AA, "tau2-bench"}
        and p["a"]["subset"] == p["b"]["subset"] == "telecom" and p["a"]["metric_id"] == p["b"]["metric_id"]
    ]  # fmt: skip
    assert pairs
    for pair in pairs:
        parts = {d["part"] for d in pair["apart_by"]}
        assert "subset" not in parts and "benchmark" not in parts and "configuration" not in parts
        assert "setup user_simulator" in parts and "setup tau2_bench_version" in parts


def test_the_open_llm_leaderboards_normalised_score_is_one_metric_at_its_protocols_shots(con, shared: Path) -> None:
    found = con.execute(
        "SELECT source_key, benchmark_id, metric_id, setup_key FROM score WHERE benchmark_id = "
        "'open_llm_leaderboard_v2.bbh' AND source_key IN ('open-llm-leaderboard', 'model-cards', 'eee-hfopenllm-v2')"
    ).fetchall()
    by_source = {}
    for source, _, metric, setup in found:
        by_source.setdefault(source, set()).add((metric, setup))
    assert ("normalized_score", "shots=3") in by_source["open-llm-leaderboard"]  # its score.normalised
    assert by_source["model-cards"] == {("normalized_score", "shots=3")}  # the card states 3 shots itself
    assert ("normalized_accuracy", "shots=3") in by_source["eee-hfopenllm-v2"]  # the protocol's shots
    # the leaderboard's own row and the collection's of one model still meet, now at 3 shots
    cells = shared_cells(con, "eee-hfopenllm-v2", "open-llm-leaderboard", "open_llm_leaderboard_v2.bbh")
    assert len(cells) == 1 and [round(v, 4) for v in cells[0][2]] == [round(v, 4) for v in cells[0][3]]


def test_stats_counts_the_pairs_of_sources_that_meet(corpus: Path) -> None:
    data = json.loads(cli(corpus, "stats", "--json"))
    pairs = {tuple(p["sources"]): p["cells"] for p in data["source_pairs"]}
    assert pairs[(AA, EPOCH)] >= 59 and pairs[("aider-polyglot", EPOCH)] >= 100 and pairs[(HELM, EPOCH)] >= 70
    assert 0 < data["cells_with_several_sources"] <= sum(pairs.values())  # a cell of three sources is in three pairs
