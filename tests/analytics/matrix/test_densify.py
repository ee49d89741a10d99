"""Densifiers on small hand-checked matrices (paper 002, Appendix F)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from evalhouse.analytics.matrix.densify import Densifier, densify

N = np.nan


def frame(rows: list[list[float]], cols: str) -> pd.DataFrame:
    return pd.DataFrame(rows, index=[f"r{i}" for i in range(len(rows))], columns=list(cols), dtype=float)


def test_column_primary_drops_sparsest_benchmarks_first():
    # obs per column a4 b3 c1 d1; density 9/16 -> drop c (first of the tie) -> 8/12 -> drop d -> 7/8
    X = frame([[1, 2, N, N], [2, 1, N, N], [3, N, 5, N], [4, 3, N, 7]], "abcd")
    d = Densifier("C", target_density=0.7, min_obs=1).fit(X)
    assert list(d.columns_) == ["a", "b"] and list(d.rows_) == ["r0", "r1", "r2", "r3"]
    assert d.density_ == pytest.approx(7 / 8)


def test_row_primary_drops_sparsest_models_first():
    # row obs r0 3, r1 2, r2 1, r3 3, r4 1; 10/15 -> drop r2 -> 9/12 -> drop r4 -> 8/9
    X = frame([[1, 2, 3], [2, 1, N], [N, N, 4], [4, 3, 6], [5, N, N]], "abc")
    d = Densifier("R", target_density=0.8, min_obs=1).fit(X)
    assert list(d.rows_) == ["r0", "r1", "r3"] and list(d.columns_) == ["a", "b", "c"]
    assert d.density_ == pytest.approx(8 / 9)


def test_symmetric_drops_lowest_fill_rate_and_clears_emptied_rows():
    # column rates a .75 b .75 c .5 d .25, row rates r0 .75 r1 .5 r2 .75 r3 .25: the tie at .25
    # drops column d, which empties r3.
    X = frame([[1, 2, 3, N], [2, 1, N, N], [3, 3, 5, N], [N, N, N, 9]], "abcd")
    d = Densifier("S", target_density=0.75, min_obs=1).fit(X)
    assert list(d.columns_) == ["a", "b", "c"] and list(d.rows_) == ["r0", "r1", "r2"]
    assert d.density_ == pytest.approx(8 / 9)


def test_floor_iterates_to_a_fixed_point():
    # Dropping r3, r4, r5 (< 3 observations) starves column d, dropped on the second pass.
    X = frame(
        [[1, 2, 3, N], [2, 1, 4, N], [3, 3, 1, N], [N, N, 2, 1], [N, N, N, 2], [4, N, N, 3]],
        "abcd",
    )
    out = densify(X, "C", target_density=0.01, min_obs=3)
    assert list(out.columns) == ["a", "b", "c"] and list(out.index) == ["r0", "r1", "r2"]


def test_guard_drops_degenerate_columns():
    X = frame([[1, 2, 5, N], [2, 1, 5, N], [3, 4, 5, 7], [4, 3, 5, N]], "abcd")
    out = densify(X, "C", target_density=0.1, min_obs=1)
    assert list(out.columns) == ["a", "b"]  # c has zero variance, d one observation
    assert out.shape == (4, 2)


def test_already_dense_matrix_is_untouched():
    X = frame([[1, 2, 3], [2, 1, 4], [3, 4, 1], [4, 3, 2]], "abc")
    for method in ("C", "R", "S"):
        assert densify(X, method).equals(X)


def test_bad_options_and_empty_results():
    X = frame([[1, N], [N, 2]], "ab")
    with pytest.raises(ValueError, match=r"\['raw', 'C', 'R', 'S'\]"):
        Densifier("X").fit(X)
    with pytest.raises(ValueError, match="target_density"):
        Densifier("C", target_density=0).fit(X)
    with pytest.raises(ValueError, match="empty matrix"):
        Densifier("C", min_obs=3).fit(X)


def test_raw_keeps_every_model_and_benchmark_but_the_degenerate_columns():
    # no peel and no floor (paper 002's raw rows): r3 with one observation stays; d (one value) and
    # e (zero variance) go by the guard; r4, left with nothing, goes too
    X = frame([[1, 2, 3, N, 5], [2, 1, N, N, 5], [3, N, 1, N, 5], [N, 4, N, N, N], [N, N, N, 9, 5]], "abcde")
    d = Densifier("raw", target_density=0.9, min_obs=3).fit(X)
    assert list(d.columns_) == ["a", "b", "c"] and list(d.rows_) == ["r0", "r1", "r2", "r3"]
    assert d.density_ == pytest.approx(8 / 12)
