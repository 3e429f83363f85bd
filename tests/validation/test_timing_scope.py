"""Timing scope of measured op times and the event-scope offset, derived by hand."""

from __future__ import annotations

import pytest

from opmodel.validation.timing_scope import (
    EVENT_TRAINING_PER_KIND,
    event_training_rows,
    fit_event_offsets,
    timing_scope,
)


def test_scope_rules() -> None:
    assert timing_scope({"kernel_time": "0.01", "source": "opmodel-measure"}) == "kernel"
    assert timing_scope({"source": "opmodel-measure", "kernel_time": ""}) == "event"
    assert timing_scope({"source": "vidur"}) == "kernel"
    assert timing_scope({"source": "liger", "timing_scope": "event"}) == "event"
    assert timing_scope({"source": "opmodel-measure", "timing_scope": "kernel"}) == "kernel"
    with pytest.raises(ValueError, match="timing_scope must be one of kernel, event"):
        timing_scope({"timing_scope": "wall"})


def test_training_rows_are_the_smallest_of_each_group() -> None:
    groups = [("h", "a"), ("h", "a"), ("h", "a"), None, ("h", "b"), ("g", "a")]
    measured = [3.0, 1.0, 2.0, 0.5, 9.0, 7.0]
    assert EVENT_TRAINING_PER_KIND == 2
    # group (h, a): 1.0 and 2.0 (rows 1, 2); (h, b) and (g, a) have one row each; row 3 is out
    assert event_training_rows(groups, measured) == frozenset({1, 2, 4, 5})
    assert event_training_rows([None, None], [1.0, 2.0]) == frozenset()


def test_offset_closed_form() -> None:
    """c = sum((m - p) / m^2) / sum(1 / m^2): m = (2, 4), p = (1, 3) gives
    (1/4 + 1/16) / (1/4 + 1/16) = 1; a model slower than every measurement gets 0."""
    hardware = ["x", "x", "y", "z"]
    offsets = fit_event_offsets(
        hardware, [1.0, 3.0, 5.0, 1.0], [2.0, 4.0, 4.0, 1.5], frozenset({0, 1, 2})
    )
    assert offsets["x"] == pytest.approx(1.0)
    assert offsets["y"] == 0.0  # predicted 5 > measured 4: clipped at zero
    assert "z" not in offsets  # no training row
