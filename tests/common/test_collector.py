"""The cycle collector pause that parses and loads run under."""

from __future__ import annotations

import gc

import pytest

from evalhouse.common.collector import collector_paused


def test_the_collector_is_off_inside_and_back_on_after_even_on_error() -> None:
    assert gc.isenabled()
    with collector_paused():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError, match="boom"), collector_paused():
        raise ValueError("boom")
    assert gc.isenabled()


def test_a_nested_pause_does_not_switch_the_collector_on_early_nor_on_when_it_was_off() -> None:
    with collector_paused():
        with collector_paused():
            pass
        assert not gc.isenabled()  # the outer pause still holds
    assert gc.isenabled()
    gc.disable()
    try:
        with collector_paused():
            pass
        assert not gc.isenabled()  # whoever switched it off decides when it comes back
    finally:
        gc.enable()


def test_what_outlives_a_pause_joins_the_oldest_generation_and_its_cycles_are_still_collected() -> None:
    class Node:
        def __init__(self) -> None:
            self.me = self  # a reference cycle: only the collector frees it

    gc.collect()
    with collector_paused():
        kept = [[i] for i in range(50_000)]  # survivors the pause made
        dropped = Node()
        del dropped  # garbage in a cycle, made during the pause
        assert gc.get_count()[0] >= 50_000
    assert gc.isenabled()
    assert gc.get_count()[0] < 1_000  # no young collection of 50,000 objects is due
    assert gc.get_freeze_count() == 0  # none left frozen: the oldest generation holds them
    assert gc.is_tracked(kept[0]) and not any(o is kept[0] for o in gc.get_objects(generation=0))
    assert any(o is kept[-1] for o in gc.get_objects(generation=2))
    assert gc.collect() >= 1  # the cycle made during the pause is still found and freed
