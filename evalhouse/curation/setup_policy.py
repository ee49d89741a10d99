"""The setup policy: which setup fields define a cell and which are attributes of a candidate.

A result's setup is every setting its record states (``generation_config``, the harness that ran
it, what the model's name says about the run). Some settings change the measured quantity
(shots, chain of thought, pass@k, subset, judge, agent scaffold, edit format, effort): results
that differ in them are different cells. Others say who or what produced a candidate (the
harness, its version): results that differ only in those share a cell, and their spread is the
sources' disagreement. A third kind reports how a run went (rank, cost) and is not setup at all.

The policy is data (``registries/setup_policy.yaml``), each entry with its reason; a field the
file does not name defines the cell, so nothing is merged on a guess.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from functools import cache
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, ValidationError

from evalhouse.errors import InputError

Role = Literal["defines", "attribute", "outcome"]
ROLES: tuple[Role, ...] = ("defines", "attribute", "outcome")
FILE = "setup_policy.yaml"
#: A setup value longer than this is written in a cell key as a short hash.
LONG = 48


class _Strict(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class FieldRule(_Strict):
    field: str
    role: Role
    reason: str
    aliases: tuple[str, ...] = ()


class _Unlisted(_Strict):
    role: Role
    reason: str


class _PolicyFile(_Strict):
    version: int
    unlisted: _Unlisted
    fields: tuple[FieldRule, ...]


def _name_key(name: str) -> str:
    return " ".join(str(name).split()).casefold()


def short(value: str) -> str:
    """A value as a cell key writes it: as is, or ``#`` and 10 hex digits of its sha256 when long."""
    return value if len(value) <= LONG else "#" + hashlib.sha256(value.encode()).hexdigest()[:10]


def _value(value: Any) -> str:
    text = str(value)
    return text.casefold() if text.casefold() in ("true", "false") else text


@dataclass(frozen=True)
class SetupPolicy:
    """The policy file, indexed: every spelling of a field to its rule."""

    version: int
    unlisted: FieldRule
    fields: tuple[FieldRule, ...]
    _by_name: Mapping[str, FieldRule]

    @classmethod
    def from_doc(cls, doc: Any) -> SetupPolicy:
        try:
            parsed = _PolicyFile.model_validate(doc)
        except ValidationError as exc:
            raise InputError(f"invalid setup policy ({FILE}): {exc}") from exc
        by_name: dict[str, FieldRule] = {}
        problems = []
        for rule in parsed.fields:
            for name in (rule.field, *rule.aliases):
                key = _name_key(name)
                if key in by_name:
                    problems.append(f"{name!r} is named by both {by_name[key].field!r} and {rule.field!r}")
                by_name[key] = rule
        if problems:
            raise InputError(f"invalid setup policy ({FILE}): " + "; ".join(problems))
        unlisted = FieldRule(field="(unlisted)", role=parsed.unlisted.role, reason=parsed.unlisted.reason)
        return cls(parsed.version, unlisted, parsed.fields, by_name)

    def rule(self, name: str) -> FieldRule:
        """The rule for a field as a record names it (the unlisted rule when the file does not)."""
        return self._by_name.get(_name_key(name), self.unlisted)

    def role(self, name: str) -> Role:
        return self.rule(name).role

    def listed(self, name: str) -> bool:
        return _name_key(name) in self._by_name

    def canonical(self, name: str) -> str:
        """The field's name in a cell key: its rule's name, or its own when the file does not name it."""
        rule = self._by_name.get(_name_key(name))
        return rule.field if rule is not None else name

    def parts(self, setup: Mapping[str, Any], role: Role = "defines") -> dict[str, str]:
        """The setup's fields of ``role`` under their canonical names, values normalised (booleans
        lower-case). Two spellings of one field that disagree keep their own names: a conflict in
        the record is never resolved by picking one of them."""
        grouped: dict[str, dict[str, str]] = {}
        for name, value in setup.items():
            if value is None or value == "" or self.role(name) != role:
                continue
            grouped.setdefault(self.canonical(name), {})[name] = _value(value)
        out: dict[str, str] = {}
        for canonical, spelled in grouped.items():
            if len(set(spelled.values())) == 1:
                out[canonical] = next(iter(spelled.values()))
            else:
                out.update(spelled)
        return out

    def key(self, setup: Mapping[str, Any]) -> str:
        """The cell key of a setup: its defining fields, ``name=value`` sorted, long values hashed."""
        defining = self.parts(setup, "defines")
        return ";".join(f"{k}={short(defining[k])}" for k in sorted(defining))

    def outcome_fields(self, names: Iterable[str]) -> frozenset[str]:
        """Which of ``names`` report how a run went (kept out of the setup)."""
        return frozenset(n for n in names if self.role(n) == "outcome")

    def as_dict(self) -> dict[str, Any]:
        """The policy as ``curate setup-policy --json`` prints it."""
        return {
            "version": self.version,
            "file": f"evalhouse/curation/registries/{FILE}",
            "unlisted": {"role": self.unlisted.role, "reason": self.unlisted.reason},
            "fields": [
                {"field": r.field, "role": r.role, "aliases": list(r.aliases), "reason": r.reason} for r in self.fields
            ],
        }


@cache
def packaged_doc() -> Any:
    """The packaged policy file, parsed (for a registry built from documents that lack it)."""
    from evalhouse.common.yamls import load_package_yaml  # noqa: PLC0415 - YAML only when needed
    from evalhouse.curation.registry_version import read_file  # noqa: PLC0415

    return load_package_yaml(read_file(FILE))
