"""τ²-bench on its recorded real submissions (sierra-research/tau2-bench @ a2c0247): the manifest and all
64 submission files it lists, crawled over loopback (manifest -> follow -> submissions).

Cells are counted from the files themselves: every non-null ``pass_1`` … ``pass_4`` and ``cost`` of every
non-null domain of every listed submission.
"""

from __future__ import annotations

import json

import pytest
from replay_night import replay_night, scores

from evalhouse.ingest.recordings import DEFAULT_FIXTURES
from evalhouse.ingest.sources import tau2_bench

ROOT = DEFAULT_FIXTURES / "tau2-bench" / "submissions"
FIELDS = ("pass_1", "pass_2", "pass_3", "pass_4", "cost")


def submissions() -> dict[str, dict]:
    manifest = json.loads((ROOT / "manifest.json").read_text(encoding="utf-8"))
    return {
        sid: json.loads((ROOT / sid / "submission.json").read_text(encoding="utf-8"))
        for ids in manifest.values()
        for sid in ids
    }


def payload_cells() -> list[tuple[str, str, str, float, str]]:
    return [
        (sid, domain, f, values[f], str((doc.get("methodology") or {}).get("tau2_bench_version")))
        for sid, doc in submissions().items()
        for domain, values in doc["results"].items()
        if values
        for f in FIELDS
        if values.get(f) is not None
    ]


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory):
    with replay_night(tau2_bench.SOURCE, tmp_path_factory.mktemp("tau2")) as done:
        yield done


def test_every_cell_of_the_recorded_submissions_is_accounted_for(night) -> None:
    result, wh = night
    subs = submissions()
    assert len(subs) == 29 + 19 + 16
    expected = payload_cells()
    assert result.status == "completed", result.error
    r = result.report
    assert r.records_loaded + r.records_duplicate == len(subs)
    assert r.scores_loaded + r.scores_quarantined + r.scores_in_duplicates == len(expected), r.reasons
    assert r.scores_loaded >= 0.99 * len(expected), r.reasons
    # the legacy submissions measured on the original τ-bench are filed there, never under τ²-Bench
    original = {f"{c[0]}.{c[1]}.{c[2]}" for c in expected if c[4] == "original tau-bench"}
    benches = {s["result_id"]: s["benchmark"] for s in scores(wh, "tau2-bench")}
    assert original and {benches[rid] for rid in original} == {"tau_bench_original"}


def test_spot_values_against_the_bytes(night) -> None:
    _result, wh = night
    got = {(s["result_id"], s["benchmark"], s["raw_value"], s["evaluated_by"]) for s in scores(wh, "tau2-bench")}
    gpt54 = submissions()["gpt-5-4_sierra_2026-03-25"]["results"]["banking_knowledge"]
    assert (gpt54["pass_1"], gpt54["pass_4"], gpt54["cost"]) == (39.43, 21.65, 1.8423)  # the bytes
    for spot in [
        ("gpt-5-4_sierra_2026-03-25.banking_knowledge.pass_1", "tau3_banking", 39.43, "benchmark_creator"),
        ("gpt-5-4_sierra_2026-03-25.banking_knowledge.pass_2", "tau3_banking", 29.55, "benchmark_creator"),
        ("gpt-5-4_sierra_2026-03-25.banking_knowledge.pass_4", "tau3_banking", 21.65, "benchmark_creator"),
        ("gpt-5-4_sierra_2026-03-25.banking_knowledge.cost", "tau3_banking", 1.8423, "benchmark_creator"),
    ]:
        assert spot in got, spot
    by_id = {rid: (b, v) for rid, b, v, _e in got}
    for sid, domain, field, value, version in payload_cells()[:40]:
        bench = "tau3_banking" if domain == "banking_knowledge" else "tau2_bench"
        if version == "original tau-bench":
            bench = "tau_bench_original"
        assert by_id[f"{sid}.{domain}.{field}"] == (bench, value)
    assert {(rid, v) for rid, _b, v, _e in got} <= {(f"{s}.{d}.{f}", v) for s, d, f, v, _ in payload_cells()}


def test_a_developers_own_submission_is_its_claim_and_versions_never_share_a_cell(night) -> None:
    _result, wh = night
    rows = scores(wh, "tau2-bench")
    roles = {s["result_id"].rsplit(".", 2)[0]: s["evaluated_by"] for s in rows}
    subs = submissions()
    for sid, role in roles.items():
        doc = subs[sid]
        if doc["submitting_organization"] == "Sierra":
            assert role == "benchmark_creator", sid
        elif doc["submitting_organization"] == doc["model_organization"]:
            assert role == "model_developer", sid
    versions = {json.loads(s["setup"])["tau2_bench_version"] for s in rows}
    assert {"1.0.1", "0.1.3"} <= versions and "v0.1.3" not in versions
