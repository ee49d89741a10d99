"""The one best default configuration: highest score (passed explicitly), whole rows, order-free."""

from __future__ import annotations

from evalhouse.analytics.data.defaults import best_default_configuration


def _index(row: dict) -> object:
    return row.get("intelligenceIndex")


# --------------------------------------------------------------------------------------------
# best_default_configuration
# --------------------------------------------------------------------------------------------


def test_best_default_picks_highest_index_whole_row() -> None:
    rows = [
        {"name": "GPT-5.5 (low)", "intelligenceIndex": 43.5, "hle": 1},
        {"name": "GPT-5.5 (xhigh)", "intelligenceIndex": 54.8, "hle": None},
        {"name": "GPT-5.5 (Non-reasoning)", "intelligenceIndex": 35.4, "hle": 3},
        {"name": "Grok 4.3 (high)", "intelligenceIndex": float("nan")},
        {"name": "Grok 4.3 (low)", "intelligenceIndex": 35.4},
    ]
    picked = best_default_configuration(rows, score=_index)
    assert [r["name"] for r in picked] == ["GPT-5.5 (xhigh)", "Grok 4.3 (low)"]
    assert picked[0] is rows[1]  # a whole row, never columns mixed across configurations


def test_best_default_ties_prefer_release_then_name() -> None:
    rows = [
        {"name": "Nova 2.0 Pro Preview (low)", "intelligenceIndex": 20.0},
        {"name": "Nova 2.0 Pro (high)", "intelligenceIndex": 20.0},
        {"name": "Zeta 1 (low)", "intelligenceIndex": 5.0},
        {"name": "Zeta 1 (high)", "intelligenceIndex": 5.0},
        {"name": "Nothing (high)", "intelligenceIndex": None},
    ]
    picked = {r["name"] for r in best_default_configuration(rows, score=_index)}
    assert picked == {"Nova 2.0 Pro (high)", "Zeta 1 (high)", "Nothing (high)"}
    assert {r["name"] for r in best_default_configuration(rows[::-1], score=_index)} == picked  # order-free


def test_best_default_custom_key_and_score() -> None:
    rows = [{"model": "a", "s": 1}, {"model": "a", "s": 3}, {"model": "b", "s": 2}]
    picked = best_default_configuration(rows, key=lambda r: r["model"], score=lambda r: r["s"])
    assert [r["s"] for r in picked] == [3, 2]
