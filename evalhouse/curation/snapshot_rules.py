"""The snapshot registry: ``registries/model_snapshots.yaml``, validated once.

For a model *line* (a base model id, with ``|preview=…`` or ``|alias=chatgpt`` where the line is a
release channel of its own), the file lists the dated snapshots its developer documents and what
its undated name (the alias ``gpt-4o``, ``claude-3-5-haiku-latest``, the repository
``DeepSeek-V3``) denoted over time, each with the evidence that says so. Identity reads it to turn
the short dates names use into ISO dates and aliases into snapshots
(:mod:`evalhouse.curation.names.snapshots`); every such link is recorded with its evidence.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from itertools import pairwise
from typing import Any

from evalhouse.errors import InputError

_ISO = re.compile(r"^(\d{4})-(\d{2})(?:-(\d{2}))?$")
_LINE = re.compile(r"^[a-z0-9][a-z0-9._-]*/[a-z0-9][a-z0-9._+-]*(?:\|(?:preview|alias)=[a-z0-9._-]+)*$")
_URL = re.compile(r"^https?://\S+$")


class SnapshotRulesError(InputError):
    """``model_snapshots.yaml`` is malformed; the message names the entry."""


@dataclass(frozen=True)
class AliasWindow:
    """The undated name denoted ``snapshot`` from ``start`` to ``end`` (None: still, as far as the
    registry knows; a curator closes the window when the alias moves)."""

    snapshot: str
    start: date
    end: date | None
    evidence: str

    def covers(self, day: date) -> bool:
        return self.start <= day and (self.end is None or day <= self.end)


@dataclass(frozen=True)
class SnapshotLine:
    line: str
    example: str  # a real name that resolves to this line (the tests check it does)
    snapshots: tuple[str, ...]  # ISO days (or months, for developers who date by month only)
    evidence: str
    aliases: tuple[AliasWindow, ...] = ()
    #: the reasoning mode a name that states none runs in ("claude-3-7-sonnet-20250219" thinks
    #: only when asked to: non_reasoning; Gemini 2.5 Flash thinks unless told not to: reasoning)
    default_mode: str | None = None
    mode_evidence: str | None = None

    def in_month(self, year: int, month: int) -> tuple[str, ...]:
        prefix = f"{year:04d}-{month:02d}"
        return tuple(s for s in self.snapshots if s.startswith(prefix))

    def on_month_day(self, month: int, day: int) -> tuple[str, ...]:
        suffix = f"-{month:02d}-{day:02d}"
        return tuple(s for s in self.snapshots if len(s) == 10 and s.endswith(suffix))


@dataclass(frozen=True, eq=False)  # compared and hashed by identity, as the name rules are
class SnapshotBook:
    version: str
    lines: dict[str, SnapshotLine] = field(default_factory=dict)
    #: (pattern on the base model id, evidence): families whose four-digit stamps are month-year
    month_year: tuple[tuple[re.Pattern[str], str], ...] = ()

    def writes_month_year(self, base_model: str) -> str | None:
        """The evidence that ``base_model``'s family writes ``MMYY`` stamps ("olmo-2-1124"), if any."""
        for pattern, evidence in self.month_year:
            if pattern.search(base_model):
                return evidence
        return None


EMPTY = SnapshotBook(version="none")


def _iso(value: Any, where: str, *, day_only: bool = False) -> str:
    text = value.isoformat() if isinstance(value, date) else str(value)
    m = _ISO.match(text)
    if m is None or (day_only and m.group(3) is None):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where}: {value!r} is not an ISO date")
    try:
        date(int(m.group(1)), int(m.group(2)), int(m.group(3) or 1))
    except ValueError as exc:
        raise SnapshotRulesError(f"model_snapshots.yaml: {where}: {value!r}: {exc}") from exc
    return text


def _evidence(value: Any, where: str) -> str:
    if not isinstance(value, str) or not _URL.match(value.strip()):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where}: evidence must be a URL, got {value!r}")
    return value.strip()


def _windows(raw: Any, where: str, snapshots: tuple[str, ...]) -> tuple[AliasWindow, ...]:
    if raw is None:
        return ()
    if not isinstance(raw, list):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where}: 'alias' must be a list")
    out = []
    for i, entry in enumerate(raw):
        at = f"{where} alias[{i}]"
        if not isinstance(entry, Mapping):
            raise SnapshotRulesError(f"model_snapshots.yaml: {at} must be a mapping")
        snapshot = _iso(entry.get("snapshot"), at)
        if snapshot not in snapshots:
            raise SnapshotRulesError(f"model_snapshots.yaml: {at}: {snapshot} is not one of the line's snapshots")
        start = date.fromisoformat(_iso(entry.get("from"), at, day_only=True))
        end = None if entry.get("until") is None else date.fromisoformat(_iso(entry["until"], at, day_only=True))
        if end is not None and end < start:
            raise SnapshotRulesError(f"model_snapshots.yaml: {at}: 'until' is before 'from'")
        out.append(AliasWindow(snapshot, start, end, _evidence(entry.get("evidence"), at)))
    out.sort(key=lambda w: w.start)
    for before, after in pairwise(out):
        if before.end is None or before.end >= after.start:
            raise SnapshotRulesError(f"model_snapshots.yaml: {where}: alias windows overlap")
    return tuple(out)


def _line(entry: Any, i: int) -> SnapshotLine:
    where = f"lines[{i}]"
    if not isinstance(entry, Mapping) or not isinstance(entry.get("line"), str):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where} needs a 'line'")
    line = entry["line"]
    where = f"line {line!r}"
    if not _LINE.match(line):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where} is not '<developer>/<model>[|preview=…]'")
    raw = entry.get("snapshots")
    if not isinstance(raw, list) or not raw:
        raise SnapshotRulesError(f"model_snapshots.yaml: {where} needs a list of snapshots")
    snapshots = tuple(sorted({_iso(s, where) for s in raw}))
    example = entry.get("example")
    if not isinstance(example, str) or not example.strip():
        raise SnapshotRulesError(f"model_snapshots.yaml: {where} needs an 'example' name")
    default_mode = entry.get("default_mode")
    if default_mode not in (None, "reasoning", "non_reasoning"):
        raise SnapshotRulesError(f"model_snapshots.yaml: {where}: default_mode must be reasoning or non_reasoning")
    mode_evidence = None if default_mode is None else _evidence(entry.get("mode_evidence"), f"{where} mode_evidence")
    return SnapshotLine(
        line=line,
        example=example,
        snapshots=snapshots,
        evidence=_evidence(entry.get("evidence"), where),
        aliases=_windows(entry.get("alias"), where, snapshots),
        default_mode=default_mode,
        mode_evidence=mode_evidence,
    )


def book_from(raw: Mapping[str, Any] | None) -> SnapshotBook:
    """Validate a ``model_snapshots.yaml`` document (None or empty: no snapshots known)."""
    if not raw:
        return EMPTY
    if "version" not in raw:
        raise SnapshotRulesError("model_snapshots.yaml: a 'version' field is required")
    lines: dict[str, SnapshotLine] = {}
    for i, entry in enumerate(raw.get("lines") or ()):
        parsed = _line(entry, i)
        if parsed.line in lines:
            raise SnapshotRulesError(f"model_snapshots.yaml: line {parsed.line!r} is listed twice")
        lines[parsed.line] = parsed
    month_year = []
    for i, entry in enumerate(raw.get("month_year_stamps") or ()):
        where = f"month_year_stamps[{i}]"
        if not isinstance(entry, Mapping) or not isinstance(entry.get("base_model"), str):
            raise SnapshotRulesError(f"model_snapshots.yaml: {where} needs a 'base_model' pattern")
        try:
            pattern = re.compile(entry["base_model"])
        except re.error as exc:
            raise SnapshotRulesError(f"model_snapshots.yaml: {where}: not a regular expression: {exc}") from exc
        month_year.append((pattern, _evidence(entry.get("evidence"), where)))
    return SnapshotBook(version=str(raw["version"]), lines=lines, month_year=tuple(month_year))
