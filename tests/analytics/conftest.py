"""Fixtures of the factor-analysis tests: planted-structure data and the paper-000 run."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import pytest
from synthetic import aa_frames_from_csv

from evalhouse.analytics.reproduce.paper000_results import run_paper000


def planted_data(
    loadings: np.ndarray,
    phi: np.ndarray | None = None,
    *,
    n: int = 500,
    seed: int = 0,
) -> pd.DataFrame:
    """Draw ``n`` rows of ``X = F Lambda' + E`` with ``Cov(F) = phi`` and unit item variances."""
    rng = np.random.default_rng(seed)
    L = np.asarray(loadings, dtype=float)
    P = np.eye(L.shape[1]) if phi is None else np.asarray(phi, dtype=float)
    F = rng.standard_normal((n, L.shape[1])) @ np.linalg.cholesky(P).T
    unique = 1.0 - np.diag(L @ P @ L.T)
    E = rng.standard_normal((n, L.shape[0])) * np.sqrt(unique)
    return pd.DataFrame(F @ L.T + E, columns=[f"b{j}" for j in range(L.shape[0])])


def simple_structure(k: int = 3, per_factor: int = 4, high: float = 0.75) -> np.ndarray:
    """Independent-cluster loadings with a small spread of primary loadings."""
    L = np.zeros((k * per_factor, k))
    for f in range(k):
        L[f * per_factor : (f + 1) * per_factor, f] = np.linspace(high, high - 0.2, per_factor)
    return L


@pytest.fixture
def planted() -> Callable[..., pd.DataFrame]:
    return planted_data


@pytest.fixture
def three_factor() -> tuple[pd.DataFrame, np.ndarray, np.ndarray]:
    """600 x 12 data from a 3-factor oblique simple structure."""
    L = simple_structure()
    phi = np.array([[1.0, 0.4, 0.3], [0.4, 1.0, 0.2], [0.3, 0.2, 1.0]])
    return planted_data(L, phi, n=600, seed=1), L, phi


@pytest.fixture(scope="session")
def aa_frames(aa_csv: Path) -> tuple[pd.DataFrame, pd.DataFrame]:
    return aa_frames_from_csv(aa_csv)


@pytest.fixture(scope="session")
def paper000_result(aa_csv: Path) -> dict[str, Any]:
    """The pipeline's result as every surface gets it: the CSV ingested through the real parser into
    a scratch warehouse, its frames read as the product reads them, and :func:`run_paper000`, whose
    kept fit (the session's cache folder, shared by the workers) the CLI's and the report's tests read
    back."""
    from evalhouse.analytics.data.aa import AA_SOURCE, aa_frames
    from evalhouse.analytics.runs.common import source_input

    with source_input(Path(), source_key=AA_SOURCE, input_path=aa_csv, snapshot=None) as (con, _):
        wide, meta = aa_frames(con)
    result, _ = run_paper000(wide, meta, n_jobs=2)
    return result
