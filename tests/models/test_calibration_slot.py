"""CalibrationSlot: the shipped value is loaded once, on first use; overrides nest and unwind."""

from __future__ import annotations

import pytest

from opmodel.models.shared.calibration_slot import CalibrationSlot


def test_loads_once_and_overrides_nest() -> None:
    loads: list[str] = []

    def load() -> str:
        loads.append("shipped")
        return "shipped"

    slot = CalibrationSlot(load)
    assert loads == []  # nothing read until first use
    assert slot.current() == slot.current() == "shipped" and loads == ["shipped"]
    with slot.overridden("outer"):
        assert slot.current() == "outer"
        with slot.overridden("inner"):
            assert slot.current() == "inner"
        assert slot.current() == "outer"
    assert slot.current() == "shipped" and loads == ["shipped"]


def test_an_error_inside_the_block_still_unwinds() -> None:
    slot = CalibrationSlot(lambda: 1)
    with pytest.raises(RuntimeError), slot.overridden(2):
        raise RuntimeError("fit failed")
    assert slot.current() == 1
