"""The panel CSV (fast and exact paths, bad lines with their numbers) and lm-eval's choice statistics."""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import pytest

from evalhouse.ingest.sources._items import choice_stats

HEADER = "item_id,benchmark,suite,checkpoint,axis,effort,seed,p_correct\n"


def _panel(rows: list[str]) -> str:
    return HEADER + "".join(r + "\n" for r in rows)


def test_panel_csv_loads_every_line(ingest, tmp_path: Path) -> None:
    rows = [f"q{i},arc,evo,sft-{k},SFT,{1000 * (k + 1)},0,{0.1 + 0.01 * k}" for i in range(50) for k in range(4)]
    path = tmp_path / "panel.csv"
    path.write_text(_panel(rows))
    result = ingest("panel-csv", path)
    assert result.status == "completed"
    assert result.counts["loaded"] == 200
    got = ingest.rows(
        "SELECT r.line, r.p_correct, c.effort, c.effort_unit, c.axis, r.seed, i.benchmark, i.source_item_id"
        " FROM item_response r JOIN checkpoint c USING (checkpoint_id) JOIN item i USING (item_id) ORDER BY r.line"
    )
    for (line, p, effort, unit, axis, seed, bench, src), text in zip(got, rows, strict=True):
        item, b, _suite, _ckpt, ax, e, s, pv = text.split(",")
        assert (src, bench, axis, effort, seed, p) == (item, b, ax, float(e), int(s), float(pv))
        assert unit == "sft_pairs"
        assert rows[line - 2] == text  # line numbers count the header as line 1


def test_panel_csv_bad_lines_keep_their_numbers(ingest, tmp_path: Path) -> None:
    rows = [
        "q1,arc,evo,pt-0,PT,1e9,0,0.5",
        "q2,arc,evo,pt-0,XX,1e9,0,0.5",  # line 3: axis
        "q3,arc,evo,pt-0,PT,1e9,0,1.5",  # line 4: not a probability
        "q4,arc,evo,pt-0,PT,lots,0,0.5",  # line 5: effort not a number
        "q5,arc,evo,pt-0,PT,1e9",  # line 6: ragged
        "q6,arc,evo,pt-0,PT,1e9,,0.25",  # seed unknown: allowed
    ]
    path = tmp_path / "panel.csv"
    path.write_text(_panel(rows))
    result = ingest("panel-csv", path)
    assert result.status == "partial"
    assert result.counts == {"read": 6, "loaded": 2, "quarantined": 4, "duplicate": 0}
    bad = dict(ingest.rows("SELECT locator, reason FROM quarantine ORDER BY quarantine_id"))
    assert sorted(bad) == ["panel.csv:3", "panel.csv:4", "panel.csv:5", "panel.csv:6"]
    assert "axis" in bad["panel.csv:3"] and "probability" in bad["panel.csv:4"]
    assert ingest.rows("SELECT checkpoint_id FROM checkpoint ORDER BY 1") == [("evo/pt-0",), ("evo/pt-0/seed=0",)]


def test_panel_csv_repeated_key_is_quarantined(ingest, tmp_path: Path) -> None:
    path = tmp_path / "panel.csv"
    path.write_text(_panel(["q1,arc,evo,pt-0,PT,1e9,0,0.5", "q1,arc,evo,pt-0,PT,1e9,0,0.6"]))
    result = ingest("panel-csv", path)
    assert result.counts == {"read": 2, "loaded": 1, "quarantined": 1, "duplicate": 0}
    assert ingest.rows("SELECT p_correct FROM item_response") == [(0.5,)]
    assert ingest.rows("SELECT locator FROM quarantine") == [("panel.csv:3",)]


def test_choice_stats_follow_lm_eval_definitions() -> None:
    """acc = argmax ll is gold; acc_norm = argmax ll/len(choice); p = softmax(gold); margin per char.

    The expected values are computed here with numpy from the definitions in lm-evaluation-harness's
    ``multiple_choice`` process_results; inputs are authored."""
    rng = np.random.default_rng(3)
    for _ in range(200):
        k = int(rng.integers(2, 6))
        lls = list(rng.normal(-10, 4, k))
        chars = list(rng.integers(3, 40, k))
        gold = int(rng.integers(0, k))
        st = choice_stats(lls, chars, gold)
        norm = np.array(lls) / np.array(chars)
        assert st.acc == float(np.argmax(lls) == gold)
        assert st.acc_norm == float(np.argmax(norm) == gold)
        assert st.p_correct == pytest.approx(math.exp(lls[gold]) / sum(math.exp(x) for x in lls), rel=1e-12)
        assert st.margin == pytest.approx(norm[gold] - np.max(np.delete(norm, gold)), abs=1e-12)


def test_lm_eval_multiple_choice_keeps_every_choice(ingest, tmp_path: Path) -> None:
    """An lm-eval multiple-choice log in the harness's format (strings in ``resps``; authored
    values): every per-choice log-likelihood and greedy flag is kept, and acc / acc_norm recomputed
    from them equal the per-sample values the harness wrote and its results file to 1e-9."""
    rng = np.random.default_rng(7)
    ts = "2026-01-01T00-00-00.000001"
    lines, accs, norms = [], [], []
    for doc_id in range(40):
        choices = [f"answer {'x' * int(rng.integers(1, 20))}" for _ in range(4)]
        lls = rng.normal(-8, 3, 4)
        gold = int(rng.integers(0, 4))
        acc = float(np.argmax(lls) == gold)
        norm = float(np.argmax(lls / np.array([len(c) for c in choices])) == gold)
        accs.append(acc)
        norms.append(norm)
        lines.append({
            "doc_id": doc_id, "doc": {"q": f"question {doc_id}", "choices": choices, "label": gold},
            "target": gold,
            "arguments": {f"gen_args_{j}": {"arg_0": f"Q{doc_id}", "arg_1": " " + c} for j, c in enumerate(choices)},
            "resps": [[[str(v), "False"]] for v in lls], "filtered_resps": [[str(v), "False"] for v in lls],
            "filter": "none", "metrics": ["acc", "acc_norm"], "doc_hash": "h", "prompt_hash": "p",
            "target_hash": "t", "acc": acc, "acc_norm": norm,
        })  # fmt: skip
    results = {
        "results": {"mc": {"alias": "mc", "acc,none": float(np.mean(accs)), "acc_norm,none": float(np.mean(norms))}},
        "configs": {
            "mc": {"task": "mc", "output_type": "multiple_choice", "target_delimiter": " ", "test_split": "test"}
        },
        "n-shot": {"mc": 0}, "n-samples": {"mc": {"original": 40, "effective": 40}},
        "config": {"model": "hf", "model_args": "pretrained=org/m", "model_sha": "abc"},
        "model_name": "org/m", "lm_eval_version": "0.4.9", "date": 1.0,
    }  # fmt: skip
    (tmp_path / f"results_{ts}.json").write_text(json.dumps(results))
    (tmp_path / f"samples_mc_{ts}.jsonl").write_text("".join(json.dumps(x) + "\n" for x in lines))
    result = ingest("lm-eval", tmp_path)
    assert result.items.responses_loaded == 40
    rows = ingest.rows(
        "SELECT acc, acc_norm, choice_logprob, choice_is_greedy, choice_chars, json_extract(scores, '$.acc')::DOUBLE"
        " FROM item_response ORDER BY line"
    )
    for (acc, norm, lls, greedy, chars, stored), line in zip(rows, lines, strict=True):
        assert lls == [float(r[0][0]) for r in line["resps"]]
        assert greedy == [False] * 4
        assert chars == [len(a["arg_1"]) - 1 for a in line["arguments"].values()]
        assert acc == stored == line["acc"] and norm == line["acc_norm"]
    mean_acc, mean_norm = ingest.rows("SELECT avg(acc), avg(acc_norm) FROM item_response")[0]
    assert abs(mean_acc - results["results"]["mc"]["acc,none"]) < 1e-9
    assert abs(mean_norm - results["results"]["mc"]["acc_norm,none"]) < 1e-9
