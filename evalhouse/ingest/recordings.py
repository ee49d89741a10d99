"""Recorded real payloads: where each source's ``verified_on`` files are, and their replay bytes.

A source is *verified* when its parser is tested on a real payload recorded byte for byte
(:class:`evalhouse.ingest.source.Recording`). The files live in the repository's
``tests/fixtures/<source>/`` (small, each folder with a ``SOURCE.md``) or in the pinned datasets
folder ``../shared``; both folders sit beside the package in a checkout, which is where the
defaults look. ``evalhouse mirror from-shared`` places every verified source's replayed files at
the live URLs they stand for, so ``refresh --mirror`` replays them through the real client.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from evalhouse.ingest.catalog import catalog
from evalhouse.ingest.mirror import MirrorKey
from evalhouse.ingest.source import SourceSpec

_CHECKOUT = Path(__file__).resolve().parents[2]
#: The checkout's recorded fixtures and the pinned datasets beside it.
DEFAULT_FIXTURES = _CHECKOUT / "tests" / "fixtures"
DEFAULT_SHARED = _CHECKOUT.parent / "shared"


@dataclass(frozen=True)
class Roots:
    """Where ``fixtures:`` and ``shared:`` recorded paths resolve."""

    fixtures: Path = DEFAULT_FIXTURES
    shared: Path = DEFAULT_SHARED

    def path(self, ref: str) -> Path:
        root, _, rest = ref.partition(":")
        base = {"fixtures": self.fixtures, "shared": self.shared}[root]
        return base / rest


@dataclass
class Replay:
    """What a mirror can replay: ``{live URL (or (URL, POST body)): bytes}``, and the sources it
    could not (with why)."""

    payloads: dict[MirrorKey, bytes] = field(default_factory=dict)
    sources: list[str] = field(default_factory=list)
    missing: dict[str, str] = field(default_factory=dict)  # source key -> why it cannot be replayed


def verified_specs() -> list[SourceSpec]:
    return [m.SOURCE for m in catalog().values() if m.SOURCE.verified_on is not None]


def replay_payloads(roots: Roots, specs: list[SourceSpec] | None = None) -> Replay:
    """The replayed files of every verified source whose recorded files are all present."""
    out = Replay()
    for spec in verified_specs() if specs is None else specs:
        recording = spec.verified_on
        if recording is None or not recording.replay:
            continue
        absent = [entry[1] for entry in recording.replay if not roots.path(entry[1]).is_file()]
        if absent:
            out.missing[spec.key] = f"recorded file(s) not found: {', '.join(absent)}"
            continue
        for entry in recording.replay:
            key: MirrorKey = entry[0] if len(entry) == 2 else (entry[0], entry[2].encode("utf-8"))
            out.payloads[key] = roots.path(entry[1]).read_bytes()
        out.sources.append(spec.key)
    return out
