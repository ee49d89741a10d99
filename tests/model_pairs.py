"""Hand-checked pairs of names from two sources (test data): one base model (``aa_epoch_pairs``);
the same configuration or not (``config_pairs``: same snapshot, or another snapshot or effort)."""

from __future__ import annotations

import csv
import json
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

PAIRS_CSV = Path(__file__).parent / "fixtures" / "model-pairs" / "aa_epoch_pairs.csv"
CONFIG_PAIRS_CSV = Path(__file__).parent / "fixtures" / "model-pairs" / "config_pairs.csv"


def aa_epoch_pairs() -> list[tuple[str, str]]:
    """(Artificial Analysis name, Epoch model version) pairs of the same base model."""
    with open(PAIRS_CSV, newline="", encoding="utf-8") as fh:
        return [(row["artificial_analysis_name"], row["epoch_model_version"]) for row in csv.DictReader(fh)]


@dataclass(frozen=True)
class Side:
    """One source's row: its name and what the source says beside it (its id, display name,
    developer, release date, the day it observed the model)."""

    name: str
    source: str
    hints: dict[str, str]

    def resolve(self, registry: Any) -> Any:
        """The row's identity, resolved as the loader resolves it."""
        from evalhouse.curation.identity import resolve_model

        how = self.hints.get("identity_from", "name")
        if how == "id":
            info: dict[str, Any] = {"id": self.name, "name": self.hints.get("display") or self.name}
        else:
            info = {"id": self.hints.get("id") or self.name, "name": self.name}
        if self.hints.get("developer"):
            info["developer"] = self.hints["developer"]
        release = self.hints.get("release_date")
        info["additional_details"] = {"release_date": release} if release else {}
        observed = self.hints.get("observed_on")
        return resolve_model(
            info,
            self.source,
            registry,
            identity_from=how,  # type: ignore[arg-type]
            observed_on=date.fromisoformat(observed) if observed else None,
        )


@dataclass(frozen=True)
class ConfigPair:
    a: Side
    b: Side
    same: bool  # the same configuration (one snapshot, one effort): their scores belong in one cell
    note: str


def config_pairs() -> list[ConfigPair]:
    """Real cross-source pairs labelled same configuration or not."""
    with open(CONFIG_PAIRS_CSV, newline="", encoding="utf-8") as fh:
        return [
            ConfigPair(
                Side(row["a_name"], row["a_source"], json.loads(row["a_hints"])),
                Side(row["b_name"], row["b_source"], json.loads(row["b_hints"])),
                row["same_config"] == "yes",
                row["note"],
            )
            for row in csv.DictReader(fh)
        ]
