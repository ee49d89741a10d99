"""Dates as sources write them, with the precision they carry."""

from __future__ import annotations

import re
from datetime import date
from typing import Literal

Precision = Literal["day", "month", "year"]

_PATTERNS: tuple[tuple[re.Pattern[str], Precision], ...] = (
    (re.compile(r"(\d{4})-(\d{2})-(\d{2})"), "day"),
    (re.compile(r"(\d{4})(\d{2})(\d{2})"), "day"),
    (re.compile(r"(\d{4})-(\d{2})"), "month"),
    (re.compile(r"(\d{4})"), "year"),
)


def parse_date(text: str | None) -> tuple[date, Precision] | None:
    """``(date, precision)`` for ``"2025-05-14"``, ``"20250514"``, ``"2025-05"`` or ``"2025"``; else None.

    A timestamp (``"2025-05-14T10:00:00Z"``) is read as its day. Month and year precision give the
    first day of the period. Impossible dates (``"2025-02-30"``) are None, never rolled over.
    """
    if text is None:
        return None
    text = str(text).strip()
    if len(text) > 10 and text[4:5] == "-" and text[10:11] in ("T", " "):
        text = text[:10]
    for pattern, precision in _PATTERNS:
        match = pattern.fullmatch(text)
        if match is None:
            continue
        parts = [int(g) for g in match.groups()] + [1, 1]
        try:
            return date(parts[0], parts[1], parts[2]), precision
        except ValueError:
            return None
    return None
