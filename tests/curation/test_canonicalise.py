"""Canonicalisation: raw value and unit -> canonical value, unit and direction, or a refusal."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from evalhouse.curation.canonicalise import Canonicaliser, CanonicalScore, Rejection
from evalhouse.curation.registry import RegistryError, build_registry, load_registry, normalise_alias

REG = load_registry()


def result(
    value: float,
    *,
    bench: str = "gpqa_diamond",
    metric: str | None = "accuracy",
    unit: str | None = "proportion",
    lo: object = 0,
    hi: object = 1,
    lib: bool | None = False,
) -> dict:
    config = {
        "metric_id": metric,
        "metric_unit": unit,
        "lower_is_better": lib,
        "score_type": "continuous",
        "min_score": lo,
        "max_score": hi,
    }
    return {
        "evaluation_name": f"x.{bench}",
        "source_data": {"dataset_name": bench, "source_type": "other"},
        "metric_config": {k: v for k, v in config.items() if v is not None},
        "score_details": {"score": value},
    }


def canon(res: dict, source: str = "test", provisional: bool = False) -> CanonicalScore | Rejection:
    return Canonicaliser(REG, allow_provisional=provisional).canonicalise(res, source_key=source)


def test_percent_becomes_a_proportion_and_keeps_the_raw_value() -> None:
    out = canon(result(87.5, unit="percent", hi=100))
    assert isinstance(out, CanonicalScore)
    assert (out.raw_value, out.raw_unit, out.value, out.unit) == (87.5, "percent", 0.875, "proportion")
    assert any("x0.01" in step for step in out.steps)


def test_explicit_denominators_convert() -> None:
    out = canon(result(25, unit="x/50", hi=50))
    assert isinstance(out, CanonicalScore) and out.value == 0.5


@pytest.mark.parametrize(
    ("res", "reason"),
    [
        (result(1.7, hi=2), "impossible value: 1.7 proportion"),
        (result(250, unit="percent", hi=1000), "impossible value: 250"),
        (result(-0.1, lo=-1), "impossible value: -0.1"),
        (result(0.5, bench="no_such_benchmark"), "unmapped benchmark 'no_such_benchmark'"),
        (result(0.5, metric="fancy_metric"), "unmapped metric 'fancy_metric'"),
        (result(0.5, lib=True), "direction conflict"),
        (result(0.5, unit="furlongs"), "unknown unit 'furlongs'"),
        (
            result(1200, bench="webdev_arena", metric="elo", unit="percent", lo=0, hi=100 * 100),
            "no conversion from unit 'percent'",
        ),
        (result(1.5, lo=0, hi=1), "outside the record's own bounds"),
        (result(0.5, unit=None, lo=0, hi=10), "refusing to guess"),
    ],
)
def test_refusals_name_the_reason(res: dict, reason: str) -> None:
    out = canon(res)
    assert isinstance(out, Rejection), out
    assert reason in out.reason
    # the drift guard's bulk check gives the same refusal, worded the same
    assert Canonicaliser(REG).rejection(res, source_key="test") == out


@given(
    st.floats(min_value=-2, max_value=300, allow_nan=False),
    st.sampled_from([("proportion", 1), ("percent", 100), ("x/50", 50), (None, 1), (None, 10)]),
    st.sampled_from(["gpqa_diamond", "no_such_benchmark"]),
)
def test_the_bulk_rejection_check_agrees_with_canonicalise(value: float, unit_hi: tuple, bench: str) -> None:
    unit, hi = unit_hi
    res = result(value, unit=unit, hi=hi, bench=bench)
    out = canon(res)
    expected = out if isinstance(out, Rejection) else None
    canonicaliser = Canonicaliser(REG)
    assert canonicaliser.rejection(res, source_key="test") == expected
    assert canonicaliser.rejection(res, source_key="test") == expected  # and again, from its cached group


def test_nothing_is_clamped_at_the_boundary() -> None:
    assert canon(result(1.0)).value == 1.0
    assert isinstance(canon(result(1.0 + 1e-6, hi=2)), Rejection)


def test_native_scale_metrics_are_not_rescaled() -> None:
    out = canon(result(1350.0, bench="webdev_arena", metric="elo", unit="elo", lo="-Infinity", hi="Infinity"))
    assert isinstance(out, CanonicalScore) and out.value == 1350.0 and out.unit == "elo"


def test_lower_is_better_metrics_keep_their_direction() -> None:
    out = canon(result(3.2, bench="metr_time_horizons", metric="latency", unit="seconds", lo=0, hi=None, lib=True))
    assert isinstance(out, CanonicalScore) and out.lower_is_better and out.value == 3.2


def test_missing_unit_is_read_from_declared_bounds_not_from_the_value() -> None:
    assert canon(result(0.7, unit=None, lo=0, hi=1)).raw_unit == "proportion"
    assert canon(result(70, unit=None, lo=0, hi=100)).value == 0.7


def test_provisional_entries_only_for_self_describing_imports() -> None:
    res = result(0.5, bench="brand_new_bench", metric="brand_new_metric")
    assert isinstance(canon(res), Rejection)
    out = canon(res, source="eee-c", provisional=True)
    assert isinstance(out, CanonicalScore)
    assert out.provisional_benchmark is not None and out.benchmark_id == "eee_c.brand_new_bench"
    assert out.provisional_metric is not None and out.metric_id.startswith("eee_c.")


def test_gpqa_diamond_from_both_sources_is_one_benchmark() -> None:
    epoch = REG.benchmark_for("gpqa_diamond", "epoch-benchmarks")
    aa = REG.benchmark_for("gpqa", "artificial-analysis")
    assert epoch is aa and epoch.id == "gpqa_diamond"
    for alias in ("GPQA Diamond", "gpqa_diamond", "GPQA-D", "  gpqa   DIAMOND "):
        assert REG.benchmark_for(alias).id == "gpqa_diamond"


def test_versions_are_distinct_benchmarks_in_one_family() -> None:
    tb = [b for b in REG.benchmarks.values() if b.family == "terminal_bench"]
    assert len({b.id for b in tb}) >= 2 and len({b.version for b in tb}) == len(tb)


def test_registry_refuses_inconsistent_files() -> None:
    metrics = {
        "version": 1,
        "metrics": [{"id": "m", "kind": "k", "unit": "nope", "bounds": [0, 1], "lower_is_better": False}],
    }
    units = {"version": 1, "units": [{"id": "proportion"}], "conversions": []}
    benches = {"version": 1, "benchmarks": [{"id": "b", "name": "B", "family": "missing"}]}
    devs = {"version": 1, "developers": []}
    kinds = {"version": 1, "kinds": []}
    with pytest.raises(RegistryError) as info:
        build_registry(
            {
                "metrics.yaml": metrics,
                "units.yaml": units,
                "benchmarks.yaml": benches,
                "developers.yaml": devs,
                "evidence_kinds.yaml": kinds,
            }
        )
    assert "unknown unit 'nope'" in str(info.value) and "unknown family 'missing'" in str(info.value)


def test_every_metric_unit_and_registry_version_is_recorded() -> None:
    assert set(REG.versions) == {
        "metrics", "units", "benchmarks", "developers", "evidence_kinds", "model_tokens", "model_snapshots",
        "setup_policy", "benchmark_links",
    }  # fmt: skip
    assert REG.version.count("@") == 9 and "#" in REG.version


finite = st.floats(min_value=-1e9, max_value=1e9, allow_nan=False)


@given(
    finite,
    st.sampled_from(
        [("percent", "proportion"), ("seconds", "minutes"), ("hours", "minutes"), ("milliseconds", "seconds")]
    ),
)
def test_unit_conversion_round_trips(value: float, units: tuple[str, str]) -> None:
    a, b = units
    there = REG.convert(value, a, b)
    back = REG.convert(there, b, a) if (b, a) in REG.conversions else there / REG.convert(1.0, a, b)
    assert math.isclose(back, value, rel_tol=1e-9, abs_tol=1e-9)


@given(st.text(max_size=30))
def test_alias_normalisation_is_idempotent(text: str) -> None:
    assert normalise_alias(normalise_alias(text)) == normalise_alias(text)


def test_the_bulk_rejection_check_of_an_unmapped_result_without_a_number_is_canonicalise_s() -> None:
    res = result(0.5, bench="no_such_benchmark")
    res["score_details"]["score"] = "n/a"  # a parser's output before validation
    expected = canon(res)
    assert isinstance(expected, Rejection) and "unmapped benchmark" in expected.reason
    assert Canonicaliser(REG).rejection(res, source_key="test") == expected


def declared(bench: str, text: str | None) -> dict:
    res = result(61.0, bench=bench, metric="score", unit="percent", hi=100)
    if text is not None:
        res["source_data"]["additional_details"] = {"evalhouse.declared_benchmark": text}
    return res


def test_a_benchmark_the_source_declares_is_registered_from_its_words_never_merged() -> None:
    canon_ = Canonicaliser(REG, declared=True)
    text = "LiveBench Data Analysis task 'cta' (categories_2025_04_02.json)"
    out = canon_.canonicalise(declared("LiveBench: cta", text), source_key="livebench", collection="livebench")
    assert isinstance(out, CanonicalScore) and out.provisional_benchmark is not None
    assert out.benchmark_id == "livebench.livebench_cta" and text in out.provisional_benchmark.description
    assert out.value == 0.61
    # what the registry knows resolves as always, declared or not (never a second benchmark)
    known = canon_.canonicalise(declared("GPQA Diamond", "GPQA Diamond as the source ran it"), source_key="x")
    assert isinstance(known, CanonicalScore) and known.benchmark_id == "gpqa_diamond"
    assert known.provisional_benchmark is None
    # an unknown benchmark the source does not declare is refused, as from any other source
    bare = canon_.canonicalise(declared("LiveBench: cta", None), source_key="livebench")
    assert isinstance(bare, Rejection) and bare.reason.startswith("unmapped benchmark")
    # and a source that declares nothing never registers a benchmark from a stray declaration
    plain = Canonicaliser(REG).canonicalise(declared("LiveBench: cta", text), source_key="livebench")
    assert isinstance(plain, Rejection) and plain.reason.startswith("unmapped benchmark")
