"""Dates in model names: every way a name writes one, read into one vocabulary.

A configuration's date is ISO 8601 with its precision:

- ``2024-08-06`` — a day;
- ``2024-08`` — a month (``"GPT-4o (Aug '24)"``, ``mistral-large-2411``, ``command-r-08-2024``);
- ``--05-28`` — a month and day whose year the name does not say (``deepseek-r1-0528``,
  ``gemini-2.5-pro-preview-06-05``): the XML Schema ``gMonthDay`` form, kept only until evidence
  gives the year (:mod:`evalhouse.curation.names.snapshots`).

A four-digit stamp is read as month-day (``0528``, ``1206``) when it can be one, else as
year-month (``2411``, ``2507``); a few families write month-year (OLMo's ``1124``), which the
snapshot registry says per family. Two mentions in one name combine when they agree
(``"DeepSeek R1 0528 (May '25)"`` is ``2025-05-28``).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from functools import lru_cache

from evalhouse.curation.names import text as T

MONTHS = {
    m: i
    for i, names in enumerate(
        (
            ("jan", "january"),
            ("feb", "february"),
            ("mar", "march"),
            ("apr", "april"),
            ("may",),
            ("jun", "june"),
            ("jul", "july"),
            ("aug", "august"),
            ("sep", "sept", "september"),
            ("oct", "october"),
            ("nov", "november"),
            ("dec", "december"),
        ),
        start=1,
    )
    for m in names
}
_MONTH_ALT = "|".join(sorted(MONTHS, key=len, reverse=True))
#: Two-digit years a stamp may mean (2018-2039: the years of the models these names denote).
_YY_MIN, _YY_MAX = 18, 39


@dataclass(frozen=True, slots=True)
class NameDate:
    """A date a name writes, as far as the name says it (``year`` None: ``--MM-DD``)."""

    year: int | None
    month: int
    day: int | None
    written: str = field(compare=False)
    #: the month-year reading of an ambiguous four-digit stamp ("1124": Nov 24 or Nov 2024)
    month_year: tuple[int, int] | None = None

    @property
    def iso(self) -> str:
        if self.year is None:
            return f"--{self.month:02d}-{self.day:02d}"
        if self.day is None:
            return f"{self.year:04d}-{self.month:02d}"
        return f"{self.year:04d}-{self.month:02d}-{self.day:02d}"

    @property
    def precision(self) -> str:
        return "month_day" if self.year is None else "month" if self.day is None else "day"

    def as_month_year(self) -> NameDate:
        """The month-year reading of an ambiguous stamp ("1124" → 2024-11)."""
        if self.month_year is None:
            return self
        year, month = self.month_year
        return NameDate(year, month, None, self.written)


def _valid(year: int, month: int, day: int | None) -> bool:
    if not 1 <= month <= 12:
        return False
    if day is None:
        return True
    try:
        date(year, month, day)
    except ValueError:
        return False
    return True


def _ymd(y: str, m: str, d: str, written: str) -> NameDate | None:
    year, month, day = int(y), int(m), int(d)
    return NameDate(year, month, day, written) if _valid(year, month, day) else None


def _month_name(m: re.Match[str]) -> NameDate | None:
    year = int(m.group(3) or f"20{m.group(2)}")
    return NameDate(year, MONTHS[m.group(1)], None, m.group(0))


def _four(m: re.Match[str]) -> NameDate | None:
    """ "0528" → --05-28; "2411" → 2024-11; "1124" → --11-24, or 2024-11 for a month-year family."""
    text = m.group(1)
    first, last = int(text[:2]), int(text[2:])
    month_day = _valid(2000, first, last)  # 2000: a leap year, so "0229" is a month-day
    month_year = 1 <= first <= 12 and _YY_MIN <= last <= _YY_MAX
    if month_day:
        return NameDate(None, first, last, text, (2000 + last, first) if month_year else None)
    if _YY_MIN <= first <= _YY_MAX and 1 <= last <= 12:
        return NameDate(2000 + first, last, None, text)
    if month_year:
        return NameDate(2000 + last, first, None, text)
    return None


#: (pattern, reader) in order of precedence; a later match that overlaps an earlier one is not read.
_FORMS: tuple[tuple[re.Pattern[str], Callable[[re.Match[str]], NameDate | None]], ...] = (
    # 2025-08-07, 2025_08_07, 2025.08.07, 20250514
    (
        re.compile(r"(?<![0-9])((?:19|20)\d{2})([-_./]?)(0[1-9]|1[0-2])\2(0[1-9]|[12]\d|3[01])(?![0-9])"),
        lambda m: _ymd(m.group(1), m.group(3), m.group(4), m.group(0)),
    ),
    # 03-27-2025
    (
        re.compile(r"(?<![0-9])(0[1-9]|1[0-2])[-_/](0[1-9]|[12]\d|3[01])[-_/]((?:19|20)\d{2})(?![0-9])"),
        lambda m: _ymd(m.group(3), m.group(1), m.group(2), m.group(0)),
    ),
    # 2-25-2025 (a month and day without zero padding, then the year)
    (
        re.compile(r"(?<![0-9.])([1-9])[-_/]([1-9]|[12]\d|3[01])[-_/]((?:19|20)\d{2})(?![0-9])"),
        lambda m: _ymd(m.group(3), m.group(1), m.group(2), m.group(0)),
    ),
    # Aug '24, May' 25, November 2024, March 2025,
    (re.compile(rf"\b({_MONTH_ALT})\b\.?\s*(?:'\s*(\d{{2}})\b|[,-]?\s?((?:19|20)\d{{2}})\b)"), _month_name),
    # 08-2024 (Cohere), 2025-09
    (
        re.compile(r"(?<![0-9])(0[1-9]|1[0-2])[-_/]((?:19|20)\d{2})(?![0-9])"),
        lambda m: NameDate(int(m.group(2)), int(m.group(1)), None, m.group(0)),
    ),
    (
        re.compile(r"(?<![0-9])((?:19|20)\d{2})[-_/](0[1-9]|1[0-2])(?![0-9a-z])"),
        lambda m: NameDate(int(m.group(1)), int(m.group(2)), None, m.group(0)),
    ),
    # 202411 (a year and month: "step-2-16k-202411")
    (
        re.compile(r"(?<![0-9a-z.])(20[1-3]\d)(0[1-9]|1[0-2])(?![0-9a-z.])"),
        lambda m: NameDate(int(m.group(1)), int(m.group(2)), None, m.group(0)),
    ),
    # 250615: a six-digit YYMMDD stamp (ByteDance's "doubao seed 1.6 250615", "solar-pro-241126")
    (
        re.compile(r"(?<![0-9a-z.])(2[0-9])(0[1-9]|1[0-2])(0[1-9]|[12]\d|3[01])(?![0-9a-z.])"),
        lambda m: _ymd(f"20{m.group(1)}", m.group(2), m.group(3), m.group(0)),
    ),
    # 06-05 (gemini-2.5-pro-preview-06-05)
    (
        re.compile(r"(?<![0-9.])(0[1-9]|1[0-2])-(0[1-9]|[12]\d|3[01])(?![0-9a-z.])"),
        lambda m: (
            NameDate(None, int(m.group(1)), int(m.group(2)), m.group(0))
            if _valid(2000, int(m.group(1)), int(m.group(2)))
            else None
        ),
    ),
    # 0528, 2411, 1206
    (re.compile(r"(?<![0-9a-z.])(\d{4})(?![0-9a-z.])"), _four),
)


#: What every form needs somewhere: four digits in a row, two numbers joined by a separator, or a
#: month's name (a cheap first look before the forms are tried one by one).
_MAYBE = re.compile(rf"\d{{4}}|\d[-_./]\d|\b(?:{_MONTH_ALT})\b")


@lru_cache(maxsize=T.TEXT_CACHE)
def _found(text: str) -> tuple[tuple[int, int, NameDate], ...]:
    found: list[tuple[int, int, NameDate]] = []
    if _MAYBE.search(text) is None:
        return ()  # no form can match: most names end here
    for pattern, read in _FORMS:
        for m in pattern.finditer(text):
            if any(m.start() < end and start < m.end() for start, end, _ in found):
                continue
            value = read(m)
            if value is not None:
                found.append((m.start(), m.end(), value))
    return tuple(sorted(found, key=lambda f: f[0]))


def name_dates(text: str) -> tuple[NameDate, ...]:
    """Every date a folded, lower-case name writes, left to right."""
    return tuple(d for _, _, d in _found(text))


def without_dates(text: str) -> str:
    """``text`` with every date :func:`name_dates` reads in it blanked (case kept): what identity
    keys are built from, so a key never holds a date and never loses a number that is none
    ("Fusion-7030" keeps its 7030)."""
    spans = _found(text.lower())
    if not spans:
        return text
    out, last = [], 0
    for start, end, _ in spans:
        out.append(text[last:start])
        out.append(" ")
        last = end
    out.append(text[last:])
    return "".join(out)


def combine(dates: tuple[NameDate, ...]) -> NameDate | None:
    """The one date the mentions say: the most precise dated mention, a month-day filling a month
    that agrees ("DeepSeek R1 0528 (May '25)" → 2025-05-28); else the first mention."""
    if not dates:
        return None
    dated = [d for d in dates if d.year is not None]
    if not dated:
        return dates[0]
    best = max(dated, key=lambda d: d.day is not None)
    if best.day is None:
        for other in dates:
            if other.year is None and other.month == best.month and other.day is not None:
                return NameDate(best.year, best.month, other.day, f"{best.written} {other.written}")
    return best


def parse_iso(text: str | None) -> NameDate | None:
    """An ISO date of any precision this vocabulary uses (``2024-08-06``, ``2024-08``, ``--05-28``)."""
    if not text:
        return None
    m = re.fullmatch(r"(\d{4})-(\d{2})(?:-(\d{2}))?|--(\d{2})-(\d{2})", text.strip())
    if m is None:
        return None
    if m.group(4):
        month, day = int(m.group(4)), int(m.group(5))
        return NameDate(None, month, day, text) if _valid(2000, month, day) else None
    year, month = int(m.group(1)), int(m.group(2))
    day = int(m.group(3)) if m.group(3) else None
    return NameDate(year, month, day, text) if _valid(year, month, day) else None


@lru_cache(maxsize=T.TEXT_CACHE)
def stated_day(text: str | None) -> date | None:
    """A full day written unambiguously in a source's own identifier (``openai/gpt-4o-2024-08-06``,
    ``claude-3-opus-20240229``); shorter stamps in identifiers are not read (sources' slugs write
    ``05-26`` for May 2026 as often as for 26 May)."""
    if not text:
        return None
    for value in name_dates(T.fold(str(text)).lower()):
        if value.year is not None and value.day is not None and len(re.sub(r"\D", "", value.written)) == 8:
            return date(value.year, value.month, value.day)
    return None
