"""How big the suite's randomised and repeated tests are: one profile per run, named in its header.

``EVALHOUSE_TEST_PROFILE=ci`` (the default: what ``make test`` and CI run) runs a tenth of the
Hypothesis examples and kill -9 trials the suite was designed with, never fewer than a floor per
test; ``thorough`` (``make test-thorough``) runs them all. Paper 002's whole-grid tests sweep
smaller ranks and fewer trees under ``ci`` (tests/cli/test_factor_commands.py). Every test still
runs under both: the profile changes how many inputs a property is tried on, never which
properties are checked.
"""

from __future__ import annotations

import os

PROFILES = {"ci": 0.1, "thorough": 1.0}
PROFILE = os.environ.get("EVALHOUSE_TEST_PROFILE", "ci")
if PROFILE not in PROFILES:
    raise RuntimeError(f"EVALHOUSE_TEST_PROFILE={PROFILE!r} is not one of {sorted(PROFILES)}")
SCALE = PROFILES[PROFILE]


def examples(designed: int, floor: int = 20) -> int:
    """Hypothesis examples for a property designed with ``designed`` of them."""
    return max(min(floor, designed), round(designed * SCALE))


def trials(designed: int, floor: int = 4) -> int:
    """Repetitions (kill -9 trials, seeded runs) for a test designed with ``designed`` of them."""
    return max(min(floor, designed), round(designed * SCALE))


def describe() -> str:
    return f"test profile: {PROFILE} (Hypothesis examples and kill -9 trials x{SCALE:g}; EVALHOUSE_TEST_PROFILE)"
