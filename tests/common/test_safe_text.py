"""Text from the data, defused for a terminal and for a spreadsheet."""

from __future__ import annotations

import pytest

from evalhouse.common.safe_text import printable, spreadsheet_safe


@pytest.mark.parametrize(
    ("text", "shown"),
    [
        ("\x1b[2J", "\\x1b[2J"),
        ("a\x07b", "a\\x07b"),
        ("\x1b]8;;http://x\x07link\x1b]8;;\x07", "\\x1b]8;;http://x\\x07link\\x1b]8;;\\x07"),
        ("\x9b2J", "\\x9b2J"),
        ("tab\tand\nnewline", "tab\tand\nnewline"),
        ("abc\u202edcba", "abc\\u202edcba"),
        ("Tülu 3 — 70B", "Tülu 3 — 70B"),
        ("\r", "\\x0d"),
    ],
)
def test_printable_shows_control_characters_as_escapes(text: str, shown: str) -> None:
    assert printable(text) == shown


@pytest.mark.parametrize("cell", ["=1+1", "=cmd|' /C calc'!A0", "@SUM(A1)", "+1+1", "-2+3", "\t=1", "\r=1", "-", "+"])
def test_formula_like_cells_get_a_quote(cell: str) -> None:
    assert spreadsheet_safe(cell) == "'" + cell


@pytest.mark.parametrize("cell", ["-0.5", "+3", "-1e-3", "12", ".5", "a=b", "", "gpt-4o", "'=already"])
def test_numbers_and_plain_text_are_left_alone(cell: str) -> None:
    assert spreadsheet_safe(cell) == cell
