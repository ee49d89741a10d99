"""Estimators and analyses of the four papers, in subpackages of one concept each.

* ``data`` - what analyses read: matrices, AA frames, grids, pins, the best default configuration
* ``matrix`` - densifiers and imputers of sparse matrices (paper 002)
* ``factor`` - EFA, parallel analysis, omega, factorability, date adjustment, the prediction ladder
* ``equate`` - characteristic-curve equating, the Epoch hub on one scale, the ECI pipeline
* ``bob`` - Balance of Benchmarks: texts, encoders, density weights, the task field, LOBO
* ``reproduce`` - one module per paper, its printed values in a data file beside it
* ``report`` - the HTML report and its figures
* ``runs`` - the analyses as the product runs them (input, pin, record): the CLI's only entry

The estimators are importable from here (resolved lazily, so importing the package stays cheap).
"""

from __future__ import annotations

import importlib
from typing import Any

_ESTIMATORS = {
    "EFA": "evalhouse.analytics.factor.efa",
    "ParallelAnalysis": "evalhouse.analytics.factor.parallel",
    "Omega": "evalhouse.analytics.factor.omega",
    "PredictionLadder": "evalhouse.analytics.factor.ladder",
    "CharacteristicCurveEquating": "evalhouse.analytics.equate.curves",
    "BalanceOfBenchmarks": "evalhouse.analytics.bob.estimator",
}

__all__ = ["EFA", "BalanceOfBenchmarks", "CharacteristicCurveEquating", "Omega", "ParallelAnalysis", "PredictionLadder"]


def __getattr__(name: str) -> Any:
    module = _ESTIMATORS.get(name)
    if module is None:
        raise AttributeError(f"module 'evalhouse.analytics' has no attribute {name!r}")
    return getattr(importlib.import_module(module), name)


def __dir__() -> list[str]:
    return sorted([*globals(), *_ESTIMATORS])
