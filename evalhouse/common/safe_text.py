"""Text from the data, made safe for where it is shown: a terminal, or a spreadsheet.

The warehouse holds what sources wrote, and a source can write anything: a model name with
``ESC [2J`` (clear the screen) or an OSC 8 hyperlink in it, a cell ``=HYPERLINK(…)`` or
``=cmd|' /C calc'!A0``. Shown as it is, the first acts on the terminal of whoever runs a query,
the second runs in the spreadsheet of whoever opens the CSV. Two functions defuse them, leaving
everything else as it is:

* :func:`printable` writes control characters as visible escapes (``\\x1b``), so a terminal
  shows them instead of obeying them; tab and newline stay.
* :func:`spreadsheet_safe` puts ``'`` before a text cell that a spreadsheet would read as a
  formula (one starting with ``=``, ``+``, ``-``, ``@``, tab or carriage return: OWASP's list),
  unless the whole cell is a plain number such as ``-0.5``.
"""

from __future__ import annotations

import re

#: C0 controls but tab and newline, DEL, C1 controls, and the bidirectional overrides and isolates
#: (which reorder what a terminal shows: a name can be made to read as another).
_CONTROL = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069]")
#: What a spreadsheet reads as the start of a formula.
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_PLAIN_NUMBER = re.compile(r"[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?")


def _escape(match: re.Match[str]) -> str:
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x100 else f"\\u{code:04x}"


def printable(text: str) -> str:
    """``text`` with every control character written as an escape (``"\\x1b[2J"`` shows as ``\\x1b[2J``)."""
    return _CONTROL.sub(_escape, text) if _CONTROL.search(text) else text


def spreadsheet_safe(text: str) -> str:
    """``text`` as a CSV/TSV cell no spreadsheet evaluates: ``'`` before a formula-like start."""
    if text.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER.fullmatch(text):
        return "'" + text
    return text
