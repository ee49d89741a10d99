"""The commands end to end: simulate-panel, ingest of harness logs, analyze items (+ welfare), report section."""

from __future__ import annotations

import csv
import json
import shutil
from pathlib import Path

import duckdb
import pandas as pd
import pytest
from clirunner import CliRunner

from evalhouse.analytics.items.report import section
from evalhouse.cli import app

AUTHORED = Path(__file__).parent / "data" / "authored_welfare"
runner = CliRunner()


def _run(*args: str) -> dict:
    result = runner.invoke(app, list(args))
    assert result.exit_code == 0, result.output
    return json.loads(result.stdout)


def _welfare_folder(tmp_path: Path, truth: pd.DataFrame) -> Path:
    """Welfare inputs: the authored GWA ratings, and authored rankings of the simulated items
    (math items on the GWA with the least automation desire, others spread over all three)."""
    folder = tmp_path / "welfare"
    folder.mkdir()
    for name in ("task_ratings.csv", "task_gwa.csv"):
        shutil.copy(AUTHORED / name, folder / name)
    with open(folder / "item_gwa_rankings.csv", "w", newline="") as fh:
        w = csv.writer(fh)
        w.writerow(["item_id", "framing", "rank", "gwa_id", "ranker"])
        for n, (item, bench) in enumerate(zip(truth["item_id"], truth["benchmark"], strict=True)):
            order = ["G3", "G2", "G1"] if bench == "mathqa" else [["G1", "G2", "G3"], ["G2", "G1", "G3"]][n % 2]
            for framing in ("automation", "augmentation"):
                for k, g in enumerate(order, start=1):
                    w.writerow([item, framing, k, g, "authored"])
    return folder


def test_v_star_options_and_output(tmp_path: Path) -> None:
    """analyze items --welfare: Eq. 1's weights, the r sweep, r's units and the stated assumptions."""
    db = str(tmp_path / "w.duckdb")
    _run("--db", db, "simulate-panel", "--items", "240", "--truth", str(tmp_path / "truth.csv"), "--json")
    folder = _welfare_folder(tmp_path, pd.read_csv(tmp_path / "truth.csv"))
    summary = _run("--db", db, "analyze", "items", "--n-boot", "20", "--welfare", str(folder),
                   "--out", str(tmp_path / "out"), "--json")  # fmt: skip
    items = pd.read_csv(tmp_path / "out" / "items.csv")
    # v* of Eq. 1: excluded items get none and say why; the sweep compares the three weightings
    excluded = items["excluded"].notna()
    assert (items.loc[excluded, "v_star"] == 0).all() and items.loc[excluded, "v_star_reason"].notna().all()
    v = summary["welfare"]["v_star"]
    assert v["r_over_r0"] == 1 and v["n_weighted"] == int((~excluded).sum()) and v["sigma"] == "diagonal"
    assert [row["r_over_r0"] for row in v["sweep"]] == pytest.approx([0.1, 1, 10, 100])
    for row in v["sweep"]:  # shares of the attainable W(v*) under the estimates: Eq. 1 is the maximum
        assert row["share_eq1"] == pytest.approx(1.0, abs=1e-9)
        assert row["share_diagonal"] <= 1 + 1e-9 and row["share_uniform"] <= 1 + 1e-9
    assert any("linear prices" in a for a in v["assumptions"]) and any("per dollar" in a for a in v["assumptions"])
    absolute = _run("--db", db, "analyze", "items", "--n-boot", "20", "--welfare", str(folder), "--r", "1",
                    "--r-unit", "per-dollar", "--r-sweep", "1", "--json")  # fmt: skip
    va = absolute["welfare"]["v_star"]
    assert va["r_per_dollar"] == 1 and va["r_over_r0"] == pytest.approx(1 / va["r0_per_dollar"])
    text = runner.invoke(app, ["--db", db, "analyze", "items", "--n-boot", "20", "--welfare", str(folder)])
    assert text.exit_code == 0, text.output
    for needle in ("v* (Eq. 1", "negative weights", "diagonal rule", "best uniform", "assumptions"):
        assert needle in text.output
    bad = runner.invoke(app, ["--db", db, "analyze", "items", "--welfare", str(folder), "--r-sweep", "a,b"])
    assert bad.exit_code == 2 and "--r-sweep" in bad.output


def test_simulate_then_analyze_with_welfare(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    sim = _run("--db", db, "simulate-panel", "--items", "240", "--truth", str(tmp_path / "truth.csv"), "--json")
    assert sim["status"] == "completed" and sim["loaded"] == sim["read"] == 240 * 101
    truth = pd.read_csv(tmp_path / "truth.csv")
    # Welfare inputs: the authored GWA ratings, and authored rankings of the simulated items
    # (math items on the GWA with the least automation desire, others spread over all three).
    folder = _welfare_folder(tmp_path, truth)
    summary = _run("--db", db, "analyze", "items", "--n-boot", "100", "--welfare", str(folder),
                   "--out", str(tmp_path / "out"), "--json")  # fmt: skip
    assert summary["n_items"] == 240
    assert {b["benchmark"] for b in summary["benchmarks"]} == set(truth["benchmark"])
    assert summary["welfare"]["n_scored"] == 240
    assert summary["welfare"]["math_on_frontier"] == 0
    assert summary["welfare"]["fosd_general_over_math"]["dominates"]
    items = pd.read_csv(tmp_path / "out" / "items.csv")
    assert {"w_auto", "w_aug", "quadrant", "v_star", "v_star_diagonal", "v_star_reason"} <= set(items.columns)
    con = duckdb.connect(db, read_only=True)
    stored = con.execute("SELECT count(*), count(w_auto), count(v_star) FROM analysis_item").fetchall()[0]
    assert stored == (240, 240, 240)
    sec = section(con, None)
    con.close()
    assert sec.status == "ok"
    assert sum("<img" in b for b in sec.blocks) == 3  # cost/noise, cheapest axis, welfare landscape
    # ... and the same section is on the HTML report page
    page = tmp_path / "report.html"
    report = _run("--db", db, "report", "--no-record", "--welfare", str(folder), "--output", str(page), "--json")
    by_title = {s["title"]: s for s in report["sections"]}
    assert by_title[sec.title]["status"] == "ok" and by_title[sec.title]["figures"] == 3
    assert "welfare" in page.read_text(encoding="utf-8").lower()
    # the page is pinned to a snapshot frozen beside the warehouse; an unchanged warehouse reuses it
    frozen = list((tmp_path / "w.snapshots").iterdir())
    assert (
        len(frozen) == 1
        and report["snapshot_id"] == json.loads((frozen[0] / "manifest.json").read_text())["snapshot_id"]
    )
    again = _run("--db", db, "report", "--no-record", "--output", str(page), "--json")
    assert again["snapshot_id"] == report["snapshot_id"] and len(list((tmp_path / "w.snapshots").iterdir())) == 1
    # without --welfare the snapshot (which holds no analysis results) gets a fresh audit, no landscape
    assert {s["title"]: s for s in again["sections"]}[sec.title]["figures"] == 2
    live = _run("--db", db, "report", "--no-record", "--live", "--output", str(page), "--json")
    assert live["snapshot_id"].startswith("warehouse-state:")


def test_ingest_command_routes_harness_logs(tmp_path: Path, formats: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    run = _run("--db", db, "ingest", "helm-run", str(formats / "helm" / "hellaswag-pythia-1b"), "--skip-validation",
               "--json")  # fmt: skip
    assert (run["status"], run["items"]["responses_read"], run["items"]["responses_loaded"]) == ("completed", 10, 10)
    assert run["items"]["unmapped_fields"]  # what no column holds is named, and kept in unmapped
    listed = _run("sources", "--json")
    kinds = {s["key"]: s["kind"] for s in listed}
    for key in ("lm-eval", "helm-run", "inspect-log", "eee-instances", "panel-csv"):
        assert kinds[key] == "harness_log"


def test_report_section_without_item_data(tmp_path: Path) -> None:
    con = duckdb.connect()
    assert section(con, None).status.startswith("no item-level data")


def test_a_missing_or_broken_welfare_folder_is_bad_input(tmp_path: Path) -> None:
    db = str(tmp_path / "w.duckdb")
    _run("--db", db, "simulate-panel", "--items", "40", "--json")
    broken = tmp_path / "broken"
    broken.mkdir()
    (broken / "task_ratings.csv").write_text('a,b\n"unclosed\n')
    for folder, why in ((tmp_path / "absent", "no such file"), (broken, "not a readable CSV")):
        for args in (["analyze", "items", "--n-boot", "10"], ["report", "--no-record", "--live"]):
            result = runner.invoke(app, ["--db", db, *args, "--welfare", str(folder)])
            assert result.exit_code == 2 and why in result.output, (args, result.output[-400:])


def test_the_kept_and_excluded_counts_say_which_rule_they_count(tmp_path: Path) -> None:
    """'noise kept' is what the noise rule keeps; each rule's exclusions are printed as that rule's,
    counted here from the items file the audit wrote."""
    db = str(tmp_path / "w.duckdb")
    _run("--db", db, "simulate-panel", "--items", "240", "--json")
    args = ["--db", db, "analyze", "items", "--n-boot", "20", "--out", str(tmp_path / "out")]
    text = runner.invoke(app, args)
    assert text.exit_code == 0, text.output
    items = pd.read_csv(tmp_path / "out" / "items.csv")
    n = len(items)
    kept_noise = int(items["excluded_noise"].isna().sum())
    kept_impr = int(items["excluded_improvability"].isna().sum())
    assert kept_impr < n  # the simulated panel has items the improvability rule excludes
    out = " ".join(text.stdout.split())
    assert f"the noise rule keeps {kept_noise:,} of {n:,} items" in out
    assert f"the improvability rule keeps {kept_impr:,} of {n:,}" in out
    for reason, count in items["excluded_improvability"].value_counts().items():
        assert f"excluded by the improvability rule: {count:,} — {reason}" in out
    assert f"excluded by either rule: {int(items['excluded'].notna().sum()):,} of {n:,} items" in out
    summary = _run(*args, "--json")
    noise_kept_column = sum(b["n_noise_items"] for b in summary["benchmarks"])
    assert noise_kept_column == kept_noise  # the table's 'noise kept' column adds up to the rule's count
    assert summary["excluded_by_rule"]["improvability"] == items["excluded_improvability"].value_counts().to_dict()
