"""Hand-labelled real model names (test data): what each resolves to, scored per source.

``tests/fixtures/model-names/labels.csv`` holds names taken from real payloads (the aider polyglot
leaderboard, LiveBench's tables, LMArena's metadata table, the Artificial Analysis snapshot, the
Epoch hub export, the legacy EEE datastore), each with what its source says beside it and the
configuration, base model and flags a person reading the name expects. :func:`score` resolves each
one as the loader does (:func:`evalhouse.curation.identity.resolve_model`) and compares.
"""

from __future__ import annotations

import csv
import json
from collections import defaultdict
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import Any

LABELS_CSV = Path(__file__).parent / "fixtures" / "model-names" / "labels.csv"
#: Flags that are the evaluation's setup (a cell's), not the configuration's.
SETUP_FLAGS = ("edit_format", "shots")


@dataclass(frozen=True)
class Label:
    name: str
    source: str
    identity_from: str  # "name" (leaderboards: the display name) or "id" (repository and HELM ids)
    source_id: str
    display_name: str
    developer: str
    release_date: str
    observed_on: str
    details: dict[str, Any]
    configuration: str
    base_model: str
    flags: dict[str, str]
    note: str

    def model_info(self) -> dict[str, Any]:
        """The EEE ``model_info`` a parser of the source writes for this name."""
        details = dict(self.details)
        if self.release_date:
            details["release_date"] = self.release_date
        if self.identity_from == "id":
            info: dict[str, Any] = {"id": self.name, "name": self.display_name or self.name}
        else:
            info = {"id": self.source_id or self.name, "name": self.name}
        if self.developer:
            info["developer"] = self.developer
        info["additional_details"] = details
        return info


def labels() -> list[Label]:
    with LABELS_CSV.open(newline="", encoding="utf-8") as fh:
        return [
            Label(
                **{k: v for k, v in row.items() if k not in ("details", "flags")},
                details=json.loads(row["details"] or "{}"),
                flags=dict(f.split("=", 1) for f in row["flags"].split(";") if f),
            )
            for row in csv.DictReader(fh)
        ]


@dataclass(frozen=True)
class Outcome:
    label: Label
    configuration: str
    base_model: str
    setup: dict[str, str]

    @property
    def right(self) -> bool:
        """The configuration and the base model are the expected ones."""
        return (self.configuration, self.base_model) == (self.label.configuration, self.label.base_model)

    @property
    def setup_right(self) -> bool:
        expected = {k: v for k, v in self.label.flags.items() if k in SETUP_FLAGS}
        return {k: v for k, v in self.setup.items() if k in SETUP_FLAGS} == expected


def resolve_all(rows: list[Label], registry: Any) -> list[Outcome]:
    from evalhouse.curation.identity import resolve_model

    out = []
    for row in rows:
        observed = date.fromisoformat(row.observed_on) if row.observed_on else None
        model = resolve_model(
            row.model_info(), row.source, registry, identity_from=row.identity_from, observed_on=observed
        )  # type: ignore[arg-type]
        out.append(Outcome(row, model.config_id, model.base_model_id, dict(model.setup)))
    return out


def source_group(source: str) -> str:
    """Sources as the report groups them (the legacy datastore's collections as one)."""
    return "eee-legacy" if source.startswith("eee-") else source


def score(outcomes: list[Outcome]) -> dict[str, tuple[int, int]]:
    """``{source: (right, labelled)}`` and ``"overall"``."""
    per: dict[str, list[int]] = defaultdict(lambda: [0, 0])
    for o in outcomes:
        for key in (source_group(o.label.source), "overall"):
            per[key][0] += o.right
            per[key][1] += 1
    return {k: (v[0], v[1]) for k, v in per.items()}
