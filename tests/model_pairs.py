"""Hand-checked pairs of names that denote one base model in two sources (test data)."""

from __future__ import annotations

import csv
from pathlib import Path

PAIRS_CSV = Path(__file__).parent / "fixtures" / "model-pairs" / "aa_epoch_pairs.csv"


def aa_epoch_pairs() -> list[tuple[str, str]]:
    """(Artificial Analysis name, Epoch model version) pairs of the same base model."""
    with open(PAIRS_CSV, newline="", encoding="utf-8") as fh:
        return [(row["artificial_analysis_name"], row["epoch_model_version"]) for row in csv.DictReader(fh)]
