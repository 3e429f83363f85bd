"""The launch queue of an eager pass: by hand, and the envelope against the recursion."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel.validation.launch_queue import PassEnvelope, pass_time_s
from tests.hypothesis_budget import examples


def test_host_runs_ahead_during_a_long_kernel() -> None:
    """100 µs then three 1 µs kernels, 10 µs of host time each: the short kernels were queued
    at 20, 30 and 40 µs, during the long one, and run back to back after it: 113 µs (the
    one-kernel run-ahead law sum of max(t, g) gave 130 µs)."""
    assert pass_time_s((100e-6, 1e-6, 1e-6, 1e-6), 10e-6) == pytest.approx(113e-6)
    # short kernels first: the GPU waits for the host before each one
    assert pass_time_s((1e-6, 1e-6, 1e-6, 100e-6), 10e-6) == pytest.approx(140e-6)


def test_empty_and_host_free_passes() -> None:
    assert pass_time_s((), 10e-6) == 0.0
    assert PassEnvelope(())(10e-6) == 0.0
    assert pass_time_s((3e-6, 4e-6), 0.0) == pytest.approx(7e-6)


@settings(max_examples=examples(200), deadline=None)
@given(
    st.lists(st.floats(0.0, 1e-3, allow_nan=False), max_size=40),
    st.floats(0.0, 1e-3, allow_nan=False),
)
def test_envelope_equals_the_recursion(latencies: list[float], gap: float) -> None:
    expected = pass_time_s(latencies, gap)
    assert PassEnvelope(latencies)(gap) == pytest.approx(expected, rel=1e-9, abs=1e-15)
    # never below the kernels' own time or the host's issue time
    assert expected >= sum(latencies) * (1 - 1e-12)
    assert expected >= len(latencies) * gap * (1 - 1e-12)
