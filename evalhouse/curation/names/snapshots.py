"""A configuration's date, from what its name writes and what evidence says about it.

The name's own date (:mod:`evalhouse.curation.names.dates`) is made as precise as evidence allows,
never more; each step that used evidence is an :class:`IdentityLink` (recorded as a curation
decision when the identity is loaded), and where evidence does not decide, the identity keeps its
own date and lists the configurations it may be as candidates — it is never merged into one:

1. a family that writes four-digit stamps as month-year (the snapshot registry says which) reads
   ``1124`` as ``2024-11``;
2. a month-day without a year (``0528``, ``06-05``) takes its year from the line's documented
   snapshot on that month-day, else from the day the source's own identifier states, else from
   the release date the source states (the year that puts it nearest, within a quarter);
3. a month (``(Aug '24)``, ``2411``) becomes a day when the source's own identifier states one in
   that month (AA's ``openai/gpt-4o-2024-08-06``), or when the registry documents exactly one
   snapshot of the line in that month; several are candidates;
4. a name without a date takes the day its source's identifier states (LMArena's key
   ``claude-3-opus-20240229`` behind "Claude 3 Opus"), else — the undated name being an alias —
   the snapshot the alias denoted on the date the source observed it (or the only one it ever
   denoted); the line's other snapshots are candidates.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date
from typing import Literal

from evalhouse.curation.names.dates import NameDate
from evalhouse.curation.snapshot_rules import AliasWindow, SnapshotBook, SnapshotLine

LinkKind = Literal["date", "alias", "candidate", "mode"]
#: How far from the stated release date a month-day may lie to take the release's year (a quarter:
#: any month-day lies within half a year of some year, so a wider window would decide nothing).
RELEASE_WINDOW_DAYS = 92
#: How near a documented snapshot a stated release date must be to say it is that snapshot (a
#: release is announced up to a week or so after its snapshot is cut: Claude 4, 14 → 22 May 2025).
RELEASE_MATCH_DAYS = 10


@dataclass(frozen=True, slots=True)
class DateEvidence:
    """What a source says beside the name: the day its own identifier states, the model's release
    date, and the day it ran the model (its evaluation date)."""

    stated_day: date | None = None
    release: date | None = None
    observed: date | None = None
    stated_in: str = ""  # the identifier that states the day


@dataclass(frozen=True, slots=True)
class IdentityLink:
    """One step from what the name writes to the configuration, or a candidate it was not merged with.

    ``dates`` are the configuration dates the link leads to (one for a ``date`` or ``alias`` link,
    the candidates' for a ``candidate`` link); identity turns them into configuration ids."""

    kind: LinkKind
    rule: str
    written: str
    dates: tuple[str | None, ...]
    evidence: str | None = None


def _nearest_year(month: int, day: int, release: date) -> date | None:
    best: date | None = None
    for year in (release.year - 1, release.year, release.year + 1):
        try:
            candidate = date(year, month, day)
        except ValueError:
            continue
        if best is None or abs((candidate - release).days) < abs((best - release).days):
            best = candidate
    if best is None or abs((best - release).days) > RELEASE_WINDOW_DAYS:
        return None
    return best


def _month_day(found: NameDate, line: SnapshotLine | None, ev: DateEvidence) -> tuple[str, list[IdentityLink]]:
    assert found.day is not None
    written = found.written
    if line is not None:
        documented = line.on_month_day(found.month, found.day)
        if len(documented) == 1:
            rule = f"the only snapshot of {line.line} the registry documents on {found.iso}"
            return documented[0], [IdentityLink("date", rule, written, documented, line.evidence)]
    stated = ev.stated_day
    if stated is not None and (stated.month, stated.day) == (found.month, found.day):
        iso = stated.isoformat()
        rule = f"the year of the day the source's own identifier {ev.stated_in!r} states"
        return iso, [IdentityLink("date", rule, written, (iso,))]
    if ev.release is not None:
        nearest = _nearest_year(found.month, found.day, ev.release)
        if nearest is not None:
            iso = nearest.isoformat()
            rule = f"the year of the release date the source states ({ev.release.isoformat()})"
            return iso, [IdentityLink("date", rule, written, (iso,))]
    return found.iso, []


def _month(found: NameDate, line: SnapshotLine | None, ev: DateEvidence) -> tuple[str, list[IdentityLink]]:
    assert found.year is not None
    stated = ev.stated_day
    if stated is not None and (stated.year, stated.month) == (found.year, found.month):
        iso = stated.isoformat()
        rule = f"the day the source's own identifier {ev.stated_in!r} states"
        return iso, [IdentityLink("date", rule, found.written, (iso,))]
    if line is None:
        return found.iso, []
    documented = line.in_month(found.year, found.month)
    if len(documented) == 1 and len(documented[0]) == 10:
        rule = f"the only snapshot of {line.line} the registry documents in {found.iso}"
        return documented[0], [IdentityLink("date", rule, found.written, documented, line.evidence)]
    days = tuple(s for s in documented if len(s) == 10)
    if len(days) > 1:
        rule = f"{len(days)} snapshots of {line.line} are documented in {found.iso}: kept apart, linked as candidates"
        return found.iso, [IdentityLink("candidate", rule, found.written, days, line.evidence)]
    return found.iso, []


def resolve_date(
    found: NameDate | None, line: SnapshotLine | None, ev: DateEvidence, *, month_year: str | None = None
) -> tuple[str | None, tuple[IdentityLink, ...]]:
    """The configuration's date (ISO with its precision, or None) and the links that made it.

    ``month_year`` is the registry's evidence that the family writes month-year stamps."""
    links: list[IdentityLink] = []
    if found is not None and found.month_year is not None and month_year is not None:
        read = found.as_month_year()
        links.append(
            IdentityLink(
                "date", "the family writes four-digit stamps as month-year", found.written, (read.iso,), month_year
            )
        )
        found = read
    if found is None:
        if ev.stated_day is not None:
            iso = ev.stated_day.isoformat()
            rule = f"the snapshot the source's own identifier {ev.stated_in!r} names"
            return iso, (IdentityLink("date", rule, "", (iso,)),)
        return None, ()
    if found.year is None:
        iso, more = _month_day(found, line, ev)
    elif found.day is None:
        iso, more = _month(found, line, ev)
    else:
        iso, more = found.iso, []
    return iso, (*links, *more)


def resolve_alias(
    line: SnapshotLine | None, written: str, ev: DateEvidence
) -> tuple[str | None, tuple[IdentityLink, ...]]:
    """The snapshot an undated name denotes: the one documented snapshot the source's stated release
    date falls on (within :data:`RELEASE_MATCH_DAYS`), else the one the alias denoted when the
    source observed it (or the only one it ever denoted) — unless the stated release date is well
    before that snapshot, which then cannot be the model the source means. Else candidates."""
    if line is None:
        return None, ()
    days = tuple(s for s in line.snapshots if len(s) == 10)
    if ev.release is not None:
        near = [s for s in days if abs((date.fromisoformat(s) - ev.release).days) <= RELEASE_MATCH_DAYS]
        if len(near) == 1:
            rule = f"the release date the source states ({ev.release.isoformat()}) is that of the snapshot {near[0]}"
            return near[0], (IdentityLink("date", rule, written, (near[0],), line.evidence),)
    window = _window(line, ev.observed)
    if window is not None:
        if ev.release is not None and (date.fromisoformat(window.snapshot) - ev.release).days > RELEASE_MATCH_DAYS:
            rule = (
                f"the release date the source states ({ev.release.isoformat()}) is before {window.snapshot}, "
                f"which the undated name of {line.line} denoted: kept apart, linked as candidates"
            )
            return None, (IdentityLink("candidate", rule, written, days, window.evidence),)
        if ev.observed is not None:
            rule = f"the undated name of {line.line} denoted {window.snapshot} on {ev.observed.isoformat()}"
        else:
            rule = f"the undated name of {line.line} has only ever denoted {window.snapshot}"
        return window.snapshot, (IdentityLink("alias", rule, written, (window.snapshot,), window.evidence),)
    if not days:
        return None, ()
    when = f"on {ev.observed.isoformat()}" if ev.observed is not None else "without an observation date"
    rule = f"undated name of {line.line} {when}: its documented snapshots are candidates, not merged"
    return None, (IdentityLink("candidate", rule, written, days, line.evidence),)


def _window(line: SnapshotLine, observed: date | None) -> AliasWindow | None:
    """The alias window covering the observation day; without one, the only window if it never closed."""
    if observed is not None:
        return next((w for w in line.aliases if w.covers(observed)), None)
    if len(line.aliases) == 1 and line.aliases[0].end is None:
        return line.aliases[0]
    return None


def line_key(base_model: str, preview: str | None, alias: str | None) -> str:
    """The registry key of a configuration's line: its base model and release channel."""
    key = base_model
    if preview:
        key += f"|preview={preview}"
    if alias == "chatgpt":
        key += "|alias=chatgpt"
    return key


def find_line(book: SnapshotBook, base_model: str, preview: str | None, alias: str | None) -> SnapshotLine | None:
    return book.lines.get(line_key(base_model, preview, alias))
