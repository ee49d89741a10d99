"""Sources meet in one cell, and the canonical choice says which rule decided: on the real
warehouse (Epoch AI + Artificial Analysis through the real refresh over loopback)."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest
from clirunner import CliRunner

from evalhouse.cli import app
from evalhouse.config import duckdb_config

runner = CliRunner()
AA, EPOCH = "artificial-analysis", "epoch-benchmarks"
ORDER_KEYS = ("tier", "who ran it", "observation date")


@pytest.fixture(scope="module")
def con(real_warehouse: Path):
    # opened as evalhouse opens it, so the CLI run in this process shares its DuckDB instance
    c = duckdb.connect(str(real_warehouse), read_only=True, config=duckdb_config())
    yield c
    c.close()


def cli(db: Path, *args: str) -> str:
    out = runner.invoke(app, ["--db", str(db), *args], env={"COLUMNS": "250"})
    assert out.exit_code == 0, out.output
    return out.output


def test_every_aa_and_epoch_gpqa_diamond_pair_of_one_configuration_shares_a_cell(con) -> None:
    # the pairs, from the score rows alone: configurations both sources report GPQA Diamond for
    pairs = [
        r[0]
        for r in con.execute(
            "SELECT config_id FROM score WHERE benchmark_id = 'gpqa_diamond' AND source_key IN (?, ?)"
            " GROUP BY config_id HAVING count(DISTINCT source_key) = 2 ORDER BY 1",
            [AA, EPOCH],
        ).fetchall()
    ]
    print(f"{len(pairs)} AA/Epoch GPQA Diamond pairs share a configuration")
    assert len(pairs) >= 22  # the count before the date vocabulary
    for config in pairs:
        cells = con.execute(
            "SELECT cell_id, list(DISTINCT source_key ORDER BY source_key),"
            " list(DISTINCT json_extract_string(setup, '$.harness'))"
            " FROM v_cell_candidates WHERE config_id = ? AND benchmark_id = 'gpqa_diamond' GROUP BY cell_id",
            [config],
        ).fetchall()
        assert len(cells) == 1, (config, cells)  # every row of both sources in one cell
        _, sources, harnesses = cells[0]
        assert sources == [AA, EPOCH]
        assert sorted(harnesses) == ["artificial-analysis", "inspect_ai"]  # two harnesses: attributes, not the cell


@pytest.mark.parametrize(("aa_name", "epoch_name"), [("GPT-4.1", "gpt-4.1-2025-04-14"),
                                                     ("GPT-4o (Aug '24)", "gpt-4o-2024-08-06")])  # fmt: skip
def test_names_only_the_date_and_alias_rules_make_one_configuration_share_a_gpqa_diamond_cell(
    con, aa_name: str, epoch_name: str
) -> None:
    """AA's undated alias and its month-dated name meet Epoch's dated snapshot: the configuration
    is one because an identity link (with its evidence) said so, and the rows share a cell."""
    configs = {
        source: {r[0] for r in con.execute(
            "SELECT DISTINCT e.config_id FROM evaluation e JOIN score s USING (evaluation_id)"
            " WHERE e.source_key = ? AND e.model_name = ? AND s.benchmark_id = 'gpqa_diamond'", [source, name]
        ).fetchall()}
        for source, name in ((AA, aa_name), (EPOCH, epoch_name))
    }  # fmt: skip
    assert len(configs[AA]) == 1 and configs[AA] == configs[EPOCH]
    [config] = configs[AA]
    [(sources,)] = con.execute(
        "SELECT candidate_sources FROM v_scores_canonical WHERE config_id = ? AND benchmark_id = 'gpqa_diamond'",
        [config],
    ).fetchall()
    assert sorted(sources) == [AA, EPOCH]
    # the link's evidence: a registry URL, or the day the source's own identifier states
    evidence = con.execute(
        "SELECT coalesce(json_extract_string(detail, '$.evidence'), rule) FROM curation_decision"
        " WHERE kind = 'identity_link'"
        " AND json_extract_string(subject, '$.source_key') = ? AND json_extract_string(subject, '$.config_id') = ?"
        " AND json_extract_string(detail, '$.model_name') = ?",
        [AA, config, aa_name],
    ).fetchall()
    assert evidence and all(e.startswith("https://") or "own identifier" in e for (e,) in evidence)


def test_stats_counts_the_cells_two_sources_meet_in_per_pair(con, real_warehouse: Path) -> None:
    shared = con.execute(
        "SELECT count(*) FROM (SELECT cell_id FROM v_cell_candidates GROUP BY cell_id"
        " HAVING count(DISTINCT source_key) >= 2)"
    ).fetchone()[0]
    data = json.loads(cli(real_warehouse, "stats", "--json"))
    assert data["cells_with_several_sources"] == shared >= 22
    assert data["source_pairs"][0]["sources"] == [AA, EPOCH] and data["source_pairs"][0]["cells"] == shared
    assert "cells two sources meet in, per pair of sources" in cli(real_warehouse, "stats")


def _order(c: dict) -> tuple:
    return (not c["eligible"], c["source_tier"], c["evaluator_rank"], -c["observed_on"].toordinal(), c["score_id"])


def test_the_canonical_choice_is_the_first_in_the_documented_order_and_says_which_key_decided(con) -> None:
    """Recomputed here from the candidates: policy (prefer-independent), tier, who ran it,
    observation date, lowest score id; `decided_by` is the first key where the used row and the
    next differ."""
    assert con.execute("SELECT value FROM curation_setting WHERE key = 'conflict_policy'").fetchone()[0] == (
        "prefer-independent"
    )
    cols = ["cell_id", "score_id", "developer_reported", "source_tier", "evaluator_rank", "observed_on"]
    cands: dict[str, list[dict]] = {}
    for row in con.execute(
        f"SELECT {', '.join(cols)} FROM v_cell_candidates WHERE cell_id IN"
        " (SELECT cell_id FROM v_scores_canonical WHERE n_candidates > 1)"
    ).fetchall():
        c = dict(zip(cols, row, strict=True))
        cands.setdefault(c["cell_id"], []).append(c)
    chosen = {r[0]: (r[1], r[2], r[3]) for r in con.execute(
        "SELECT cell_id, score_ids, decided_by, decision FROM v_scores_canonical WHERE n_candidates > 1"
    ).fetchall()}  # fmt: skip
    assert len(chosen) > 100
    seen = set()
    for cell_id, rows in cands.items():
        independent = any(not c["developer_reported"] for c in rows)
        for c in rows:
            c["eligible"] = not c["developer_reported"] or not independent
        first, second = sorted(rows, key=_order)[:2]
        used, decided_by, decision = chosen[cell_id]
        assert used == [first["score_id"]], cell_id
        keys = dict(zip(("policy", *ORDER_KEYS), _order(first)[:4], strict=True))
        nexts = dict(zip(("policy", *ORDER_KEYS), _order(second)[:4], strict=True))
        expected = next((k for k in keys if keys[k] != nexts[k]), "tiebreak")
        assert decided_by == expected, (cell_id, decided_by, expected)
        assert decision and (decided_by != "tiebreak" or "lowest score id" in decision)
        seen.add(decided_by)
    assert {"tiebreak", "policy"} <= seen


def test_llama_2_70b_gsm8k_5_shot_says_its_tiebreak_and_credits_the_epoch_run(con, real_warehouse: Path) -> None:
    """Two Epoch rows quoting HELM (0.484 and 0.133, the latter a 7B row filed under the 70B model),
    same tier, same evaluator, same observation: the lowest score id decides, and says so."""
    rows = con.execute(
        "SELECT score_id, value, run_id, cell_id FROM v_cell_candidates"
        " WHERE config_id = 'meta/llama-2-70b' AND benchmark_id = 'gsm8k' AND setup_key = 'shots=5' ORDER BY score_id"
    ).fetchall()
    assert sorted(round(v, 3) for _, v, _, _ in rows) == [0.133, 0.484]
    (low, low_value, run, cell_id), _ = rows
    assert {r[2] for r in rows} == {run} and run.startswith(EPOCH)
    value, decided_by, decision, rule_run = con.execute(
        "SELECT value, decided_by, decision, rule_run_id FROM v_scores_canonical WHERE cell_id = ?", [cell_id]
    ).fetchone()
    assert value == pytest.approx(low_value) and decided_by == "tiebreak" and rule_run == run
    assert "tiebreak: equal on policy prefer-independent, source tier 2" in decision
    # the decision is the Epoch run's, not the run that happened to record it (AA loaded last)
    runs = [r[0] for r in con.execute(
        "SELECT run_id FROM curation_decision WHERE kind = 'conflict_resolution'"
        " AND json_extract_string(subject, '$.cell_id') = ?", [cell_id]
    ).fetchall()]  # fmt: skip
    assert runs == [run]
    text = cli(real_warehouse, "audit", "score", str(low))
    assert "decided by    tiebreak: equal on policy prefer-independent" in text and "lowest score id" in text
    assert "then the lowest score id (a tiebreak)" in text  # the whole order, said out loud
    text = cli(real_warehouse, "conflicts", "--model", "meta/llama-2-70b", "--benchmark", "gsm8k")
    assert "decided by tiebreak: equal on policy prefer-independent, source tier 2" in text and run in text


def test_conflicts_names_what_kept_a_base_models_cells_apart(real_warehouse: Path) -> None:
    # the example now meets: AA 0.409 and Epoch 0.442 in one cell
    data = json.loads(cli(real_warehouse, "conflicts", "--model", "Llama-3.1-70B-Instruct", "--benchmark",
                          "gpqa_diamond", "--json"))  # fmt: skip
    [cell] = data["cells"]
    assert sorted(c["source_key"] for c in cell["candidates"]) == [AA, EPOCH]
    assert sorted(round(c["value"], 3) for c in cell["candidates"]) == [0.409, 0.442]
    # GPT-4o: five configurations of one base model on GPQA Diamond; a pair of sources that did
    # not meet is explained by the key part that differs
    data = json.loads(cli(real_warehouse, "conflicts", "--model", "GPT-4o", "--benchmark", "GPQA Diamond", "--json"))
    near = data["near_misses"]
    assert near["base_models"] == ["openai/gpt-4o"] and len(near["cells"]) >= 5
    assert near["pairs"] and near["pairs_total"] >= len(near["pairs"])
    for pair in near["pairs"]:
        assert pair["a"]["sources"] != pair["b"]["sources"]  # two sources that could have met
        parts = {d["part"]: d for d in pair["apart_by"]}
        assert parts, pair
        for part, d in parts.items():
            key = {"configuration": "config_id", "benchmark": "benchmark_id", "metric": "metric_id"}.get(part)
            if key:
                assert (d["a"], d["b"]) == (pair["a"][key], pair["b"][key])
    # the August 2024 model (a regression test): AA's "GPT-4o (Aug '24)", whose own id states the
    # day, and Epoch's gpt-4o-2024-08-06 are one configuration, and their rows share one cell
    [august] = [c for c in near["cells"] if "2024-08" in c["config_id"]]
    assert august["config_id"] == "openai/gpt-4o|date=2024-08-06" and august["sources"] == [AA, EPOCH]
    text = cli(real_warehouse, "conflicts", "--model", "GPT-4o", "--benchmark", "GPQA Diamond")
    assert "near misses:" in text and "kept apart by:" in text and "configuration:" in text


def test_the_site_prints_the_rule_that_decided(real_snapshot: Path, tmp_path: Path) -> None:
    out = runner.invoke(app, ["site", str(tmp_path / "site"), "--snapshot", str(real_snapshot), "--no-analyses"])
    assert out.exit_code == 0, out.output
    pages = {p.name: p.read_text() for p in (tmp_path / "site").rglob("*.html")}
    gpqa = next(text for name, text in pages.items() if name.startswith("gpqa-diamond-"))
    assert 'class="meta decision"' in gpqa and "by tiebreak" in gpqa  # the AA/Epoch cells: nothing else decided
    assert any('<dt>decided by</dt><dd class="decision">tiebreak: equal on policy' in text for text in pages.values())


def test_the_site_reads_a_snapshot_whose_canonical_view_predates_the_decision_columns() -> None:
    from evalhouse.site.data import _decisions

    con = duckdb.connect()
    con.execute("CREATE VIEW v_scores_canonical AS SELECT 'c' AS cell_id, 2 AS n_candidates")
    assert _decisions(con) == {}
    con.execute(
        "CREATE OR REPLACE VIEW v_scores_canonical AS SELECT 'c' AS cell_id, 2 AS n_candidates,"
        " 'tier' AS decided_by, 'source tier 1 before tier 2' AS decision, ['a', 'b'] AS candidate_sources"
    )
    assert _decisions(con) == {"c": ("tier", "source tier 1 before tier 2")}
