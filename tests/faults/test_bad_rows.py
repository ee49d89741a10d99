"""One bad row never takes its collection or source down: it is quarantined with its reason, and
its neighbours load (with the expectations checkpoint on, as a user runs it).

The probes are values a valid-looking record can hold that no measurement can mean: a score
written as the integer 10^400, as the string "0.5" or the boolean true; a percent that is a
fraction; a negative standard error or sample count; an interval upside down; an Elo of 1e308;
a record retrieved "yesterday" or evaluated in 1900 or 2100; a model released in 1900, in 2100 or
on 2024-02-30. On the real pinned payloads: an Artificial Analysis row released in 1900 and an
aider pass rate written as a fraction among percentages.
"""

from __future__ import annotations

import csv
import io
import json
import subprocess
import sys
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import duckdb
import jsonschema_rs
import pytest
from eee_records import eee_record, write_file

from evalhouse.ingest.catalog import get_source
from evalhouse.ingest.source import FetchMeta
from evalhouse.schema.records import ParsedRecord

BIG = "1" + "0" * 400  # the integer 10^400, written into the JSON text as a literal

Edit = Callable[[dict[str, Any]], None]


@dataclass(frozen=True)
class Probe:
    name: str
    edit: Edit
    scope: str  # what is quarantined: "record", "result" (evaluation_results[0]) or "fact" (the release date)
    words: str  # in the quarantine reason


def _score(value: Any) -> Edit:
    return lambda r: r["evaluation_results"][0]["score_details"].__setitem__("score", value)


def _uncertainty(**unc: Any) -> Edit:
    return lambda r: r["evaluation_results"][0]["score_details"].__setitem__("uncertainty", unc)


def _percent(value: float, top: float = 100.0) -> Edit:
    def edit(r: dict[str, Any]) -> None:
        result = r["evaluation_results"][0]
        result["metric_config"].update(metric_unit="percent", max_score=top)
        result["score_details"]["score"] = value

    return edit


def _released(text: str) -> Edit:
    return lambda r: r["model_info"]["additional_details"].__setitem__("release_date", text)


def _elo(value: float) -> Edit:
    def edit(r: dict[str, Any]) -> None:
        result = r["evaluation_results"][0]
        result["metric_config"] = {"metric_id": "elo", "metric_unit": "elo", "lower_is_better": False}
        result["score_details"]["score"] = value

    return edit


PROBES = (
    Probe("score 10^400", _score("@BIG@"), "result", "does not fit a 64-bit float"),
    Probe("score as a string", _score("0.5"), "record", "score: Input should be a valid number"),
    Probe("score as a boolean", _score(True), "record", "score: Input should be a valid number"),
    Probe("percent 0.61 bounded by 1 (a fraction)", _percent(0.61, top=1.0), "result", "disagrees with max_score 1.0"),
    Probe("negative standard error", _uncertainty(standard_error={"value": -0.1}), "result", "is negative"),
    Probe("num_samples -5", _uncertainty(num_samples=-5), "result", "num_samples -5 is negative"),
    Probe("votes -100", _uncertainty(num_samples=-100), "result", "num_samples -100 is negative"),
    Probe("interval upside down", _uncertainty(confidence_interval={"lower": 0.6, "upper": 0.4}), "result", "above"),
    Probe("Elo 1e308", _elo(1e308), "result", "impossible value"),
    Probe(
        "result evaluated in 1900",
        lambda r: r["evaluation_results"][0].__setitem__("evaluation_timestamp", "1900-01-01T00:00:00Z"),
        "result",
        "before 2015-01-01",
    ),
    Probe(
        "record evaluated in 2100",
        lambda r: r.__setitem__("evaluation_timestamp", "2100-01-01T00:00:00Z"),
        "record",
        "in the future",
    ),
    Probe(
        "retrieved 'yesterday'",
        lambda r: r.__setitem__("retrieved_timestamp", "yesterday"),
        "record",
        "is not Unix seconds or an ISO 8601 time",
    ),
    Probe("released 1900-01-01", _released("1900-01-01"), "fact", "before 2015-01-01"),
    Probe("released 2100-01-01", _released("2100-01-01"), "fact", "in the future"),
    Probe("released 2024-02-30", _released("2024-02-30"), "fact", "is not a date"),
)
PROBE_IDS = [p.name for p in PROBES]


def _tree(root: Path) -> dict[str, Probe]:
    """Collection ``a``: four good records, then one record per probe holding the bad result and a
    good one beside it; returns the probes by their file's repository path."""
    for i in range(4):
        rec = eee_record(f"org/good{i}", {"bench_a": 0.1 * (i + 1), "bench_b": 0.5}, evaluation_id=f"a/good{i}/1")
        write_file(root, f"a/org/good{i}/{uuid.uuid4()}.json", rec)
    where = {}
    for n, probe in enumerate(PROBES):
        rec = eee_record(f"org/probe{n}", {"bench_a": 0.42, "bench_b": 0.5}, evaluation_id=f"a/probe{n}/1")
        probe.edit(rec)
        rel = f"a/org/probe{n}/{uuid.uuid4()}.json"
        write_file(root, rel, json.dumps(rec).replace('"@BIG@"', BIG))
        where[f"data/{rel}"] = probe
    return where


def _cli(db: Path, *args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "evalhouse", "--db", str(db), *args],
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )


@pytest.fixture(scope="module")
def imported(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path, dict[str, Probe], dict]:
    tmp = tmp_path_factory.mktemp("bad-rows")
    tree, db = tmp / "tree", tmp / "w.duckdb"
    probes = _tree(tree)
    proc = _cli(db, "import-eee", str(tree), "--json")  # the expectations checkpoint runs after the load
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    assert proc.returncode == 1, proc.stdout[-2000:] + proc.stderr[-2000:]  # rows were quarantined: exit 1
    (run,) = json.loads(proc.stdout)["runs"]
    return tree, db, probes, run


@pytest.mark.parametrize("probe", PROBES, ids=PROBE_IDS)
def test_the_bad_row_is_quarantined_with_its_reason(imported, probe: Probe, figures) -> None:
    _, db, probes, _run = imported
    (path,) = [p for p, pr in probes.items() if pr is probe]
    with duckdb.connect(str(db), read_only=True) as con:
        rows = con.execute(
            "SELECT locator, stage, reason FROM quarantine WHERE locator LIKE ?", [path + "%"]
        ).fetchall()
        scores = con.execute(
            "SELECT count(*) FROM score s JOIN evaluation e USING (evaluation_id) WHERE e.datastore_path = ?", [path]
        ).fetchone()[0]
    expected_locator = {
        "record": path,
        "result": f"{path} / evaluation_results[0]",
        "fact": f"{path} / model_info.additional_details.release_date",
    }[probe.scope]
    ok = len(rows) == 1 and rows[0][0] == expected_locator and probe.words in rows[0][2]
    # the record's good neighbour result loads unless the record itself was refused
    ok = ok and scores == {"record": 0, "result": 1, "fact": 2}[probe.scope]
    figures.fault("bad rows (EEE import)", probe.name, ok, f"{rows} scores={scores}")
    assert ok, (rows, scores)


def test_the_neighbours_load_and_every_cell_is_accounted_for(imported) -> None:
    tree, db, probes, run = imported
    assert run["status"] == "partial", run  # not failed: the checkpoint did not roll the collection back
    cells = 0  # counted from the files themselves, not from what the loader reports
    for path in sorted((tree / "data").rglob("*.json")):
        cells += len(json.loads(path.read_text().replace(BIG, "0"))["evaluation_results"])
    with duckdb.connect(str(db), read_only=True) as con:
        loaded = con.execute("SELECT count(*) FROM score").fetchone()[0]
        results_refused = con.execute(
            "SELECT count(*) FROM quarantine WHERE locator LIKE '%evaluation_results[%'"
        ).fetchone()[0]
        refused_records = [
            p
            for (p,) in con.execute(
                "SELECT locator FROM quarantine WHERE stage = 'validate' AND locator LIKE '%.json'"
            ).fetchall()
        ]
        evaluations = con.execute("SELECT count(*) FROM evaluation").fetchone()[0]
        validation = con.execute(
            "SELECT count(*), count(*) FILTER (WHERE success) FROM validation_result WHERE run_id = ?", [run["run_id"]]
        ).fetchone()
    in_refused = 2 * len(refused_records)  # each probe record holds two results
    assert loaded + results_refused + in_refused == cells, (loaded, results_refused, in_refused, cells)
    assert evaluations == 4 + len(PROBES) - len(refused_records)
    assert sorted(refused_records) == sorted(p for p, pr in probes.items() if pr.scope == "record")
    assert validation[0] > 0 and validation[0] == validation[1]  # the checkpoint ran and every expectation held


def test_the_export_holds_only_what_eee_accepts(imported, shared: Path, tmp_path: Path) -> None:
    """Scores the strict types refuse never reach an export: every file EEE's schema validates."""
    _, db, _probes, _run = imported
    schema = json.loads((shared / "formats/eee/eval.schema.json").read_text())
    validator = jsonschema_rs.validator_for(schema)
    out = tmp_path / "export"
    proc = _cli(db, "export-eee", str(out))
    assert "Traceback" not in proc.stderr, proc.stderr[-2000:]
    files = sorted(out.rglob("*.json"))
    assert files
    bad = [f.name for f in files if not validator.is_valid(json.loads(f.read_text()))]
    assert not bad, bad
    scores = [r["score_details"]["score"] for f in files for r in json.loads(f.read_text())["evaluation_results"]]
    assert all(type(s) in (int, float) for s in scores), scores


# -- real payloads: one bad upstream row --------------------------------------------------------


def _results(key: str, body: bytes, label: str) -> int:
    meta = FetchMeta(key, f"file:///{label}", "0" * 64, datetime.now(UTC), None, label)
    items = get_source(key).parse(body, meta=meta)
    return sum(len(i.record["evaluation_results"]) for i in items if isinstance(i, ParsedRecord))


def _ingest(tmp_path: Path, key: str, path: Path) -> tuple[dict, list[tuple[str, str]], int]:
    db = tmp_path / "w.duckdb"
    proc = _cli(db, "ingest", key, str(path), "--json")
    assert "Traceback" not in proc.stderr, proc.stderr[-3000:]
    run = json.loads(proc.stdout)
    run = run["runs"][0] if "runs" in run else run
    with duckdb.connect(str(db), read_only=True) as con:
        quarantined = con.execute("SELECT locator, reason FROM quarantine ORDER BY locator").fetchall()
        scores = con.execute("SELECT count(*) FROM score").fetchone()[0]
    return run, quarantined, scores


def test_an_aa_row_released_in_1900_does_not_block_the_source(aa_csv: Path, tmp_path: Path, figures) -> None:
    text = aa_csv.read_text(encoding="utf-8")
    rows = list(csv.reader(io.StringIO(text, newline="")))
    column = rows[0].index("releaseDate")
    row = next(i for i, r in enumerate(rows[1:], start=1) if r[column])
    rows[row][column] = "1900-01-01"
    out = io.StringIO()
    csv.writer(out, lineterminator="\n").writerows(rows)
    path = tmp_path / aa_csv.name
    path.write_text(out.getvalue(), encoding="utf-8")
    expected = _results("artificial-analysis", aa_csv.read_bytes(), aa_csv.name)  # the unedited payload's results
    run, quarantined, scores = _ingest(tmp_path, "artificial-analysis", path)
    ok = run["status"] == "partial" and scores == expected and len(quarantined) == 1
    ok = ok and quarantined[0][0] == f"row {row} / model_info.additional_details.release_date"
    ok = ok and "before 2015-01-01" in quarantined[0][1]
    figures.fault("bad rows (real payloads)", "AA row released 1900-01-01", ok, f"{run['status']} {quarantined}")
    assert ok, (run, quarantined, scores, expected)


def test_a_fraction_among_aider_percentages_is_refused(shared: Path, tmp_path: Path, figures) -> None:
    source = shared / "datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml"
    text = source.read_text(encoding="utf-8")
    lines = text.splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("pass_rate_2:"))
    value = float(lines[at].split(":", 1)[1])
    lines[at] = lines[at].split(":", 1)[0] + f": {value / 100:g}\n"  # 79.6 written as 0.796
    path = tmp_path / source.name
    path.write_text("".join(lines), encoding="utf-8")
    expected = _results("aider-polyglot", source.read_bytes(), source.name)
    run, quarantined, scores = _ingest(tmp_path, "aider-polyglot", path)
    ok = run["status"] == "partial" and scores == expected - 1 and len(quarantined) == 1
    ok = ok and f"{value / 100:g} reads as a fraction among percentages" in quarantined[0][1]
    figures.fault("bad rows (real payloads)", "aider pass_rate_2 as a fraction", ok, f"{run['status']} {quarantined}")
    assert ok, (run, quarantined, scores, expected)


def test_an_aider_rate_of_10_to_the_400_is_one_refused_cell(shared: Path, tmp_path: Path, figures) -> None:
    source = shared / "datasets/real-payloads-2026-12/aider-polyglot/polyglot_leaderboard.yml"
    lines = source.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.strip().startswith("pass_rate_1:"))
    lines[at] = lines[at].split(":", 1)[0] + f": {BIG}\n"
    path = tmp_path / source.name
    path.write_text("".join(lines), encoding="utf-8")
    expected = _results("aider-polyglot", source.read_bytes(), source.name)
    run, quarantined, scores = _ingest(tmp_path, "aider-polyglot", path)
    ok = run["status"] == "partial" and scores == expected - 1 and len(quarantined) == 1
    ok = ok and quarantined[0][0].endswith(".pass_rate_1") and "does not fit a 64-bit float" in quarantined[0][1]
    figures.fault("bad rows (real payloads)", "aider pass_rate_1 of 10^400", ok, f"{run['status']} {quarantined}")
    assert ok, (run, quarantined, scores, expected)


@pytest.mark.parametrize("key", ["bfcl", "livebench", "swe-bench"])
def test_the_real_lowest_scores_of_percent_boards_are_not_refused_as_fractions(key: str, tmp_path: Path) -> None:
    """BFCL writes 0.50 % web-search accuracy, LiveBench 0.5 on zebra puzzles among 2.25 to 100,
    SWE-bench Lite 0.33 %: real scores below 1 %, the lowest of their columns, written like their
    peers. Being the lowest of a column is no evidence of another unit: they load."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "ingest"))
    from replay_night import replay_night

    from evalhouse.ingest.catalog import get_source

    with replay_night(get_source(key).SOURCE, tmp_path) as (result, wh):
        refused = wh.con.execute(
            "SELECT locator, reason FROM quarantine WHERE source_key = ? AND reason LIKE 'unit disagrees%'", [key]
        ).fetchall()
        below_one = wh.scalar(
            "SELECT count(*) FROM score WHERE source_key = ? AND raw_unit = 'percent' AND raw_value > 0"
            " AND raw_value < 1",
            [key],
        )
    assert result.status in ("completed", "partial") and not refused, refused
    assert below_one >= 1  # the real sub-1 % scores are there, as written
