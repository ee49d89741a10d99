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
