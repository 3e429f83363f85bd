"""The producer-output survival and write-back laws (opmodel.models.shared.l2_survival), by hand
and by property."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel.models.shared.l2_survival import (
    dirty_write_back_bytes,
    producer_output_survival,
    write_back_bytes,
)

MIB = 2**20


def test_traffic_under_the_capacity_leaves_everything() -> None:
    """a = b = 1: the oldest byte has seen exactly one capacity of traffic, none more: s = 1."""
    assert producer_output_survival(20 * MIB, 20 * MIB, 20 * MIB) == 1.0
    assert producer_output_survival(1, 1, 20 * MIB) == 1.0


def test_hand_value() -> None:
    """a = 2, b = 0.5: the byte at f has seen (1 - f) 2 + f 0.5 = 2 - 1.5 f capacities, under
    one for f > 2/3: s = 1/3 = (1 - b) / (a - b)."""
    s = producer_output_survival(40 * MIB, 10 * MIB, 20 * MIB)
    assert s == pytest.approx(1 / 3)


def test_traffic_over_the_capacity_on_both_sides_leaves_nothing() -> None:
    assert producer_output_survival(21 * MIB, 20 * MIB, 20 * MIB) == 0.0
    # a = 100, b ~ 0: only the last 1 % the producer wrote is still there
    assert producer_output_survival(2000 * MIB, 0, 20 * MIB) == pytest.approx(0.01)
    assert producer_output_survival(5, 5, 0) == 0.0


def test_negative_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="must be >= 0"):
        producer_output_survival(-1, 0, 20 * MIB)


sizes = st.floats(0, 1e10, allow_nan=False, allow_infinity=False)


@given(p=sizes, m=sizes, c=st.floats(1, 1e9), more=st.floats(0, 1e9))
def test_survival_is_a_share_symmetric_and_falls_with_traffic(
    p: float, m: float, c: float, more: float
) -> None:
    s = producer_output_survival(p, m, c)
    assert 0.0 <= s <= 1.0
    assert s == pytest.approx(producer_output_survival(m, p, c), rel=1e-9, abs=1e-300)
    assert producer_output_survival(p + more, m, c) <= s * (1 + 1e-9) + 1e-300
    assert producer_output_survival(p, m + more, c) <= s * (1 + 1e-9) + 1e-300
    assert producer_output_survival(p, m, c + more) >= s * (1 - 1e-9)


def test_one_wave_producer_leaves_only_the_consumers_traffic() -> None:
    """W = 1: the output was written after all of the producer's traffic, so only the consumer's
    own evicts it: the byte at f survives while f b < 1; a = 4.7, b = 2: s = 1 / 2."""
    s = producer_output_survival(94 * MIB, 40 * MIB, 20 * MIB, producer_waves=1)
    assert s == pytest.approx(0.5)
    assert producer_output_survival(94 * MIB, 10 * MIB, 20 * MIB, producer_waves=1) == 1.0


def test_two_bursts_by_hand() -> None:
    """W = 2, a = 3, b = 0: the first half has a / 2 = 1.5 capacities of producer traffic after
    it (gone), the second none (all there): s = 1/2."""
    assert producer_output_survival(60 * MIB, 0, 20 * MIB, producer_waves=2) == 0.5


def test_three_bursts_with_consumer_traffic_by_hand() -> None:
    """W = 3, a = 1.5, b = 2 (p = a / 3 = 0.5): the burst with j bursts after it is read at
    f in [(2 - j) / 3, (3 - j) / 3] and survives while 0.5 j + 2 f < 1, i.e. f < (1 - 0.5 j) / 2:
    j = 2 (f in [0, 1/3]): f < 0 -> 0; j = 1 (f in [1/3, 2/3]): f < 1/4 -> 0;
    j = 0 (f in [2/3, 1]): f < 1/2 -> 0. Nothing survives; with b = 1 instead: j = 2: f < 0;
    j = 1: f < 1/2 -> 1/2 - 1/3 = 1/6; j = 0: f < 1 -> 1/3: s = 1/2."""
    assert producer_output_survival(30 * MIB, 40 * MIB, 20 * MIB, producer_waves=3) == 0.0
    s = producer_output_survival(30 * MIB, 20 * MIB, 20 * MIB, producer_waves=3)
    assert s == pytest.approx(0.5)


def test_many_bursts_tend_to_the_evenly_written_law() -> None:
    even = producer_output_survival(40 * MIB, 10 * MIB, 20 * MIB)
    many = producer_output_survival(40 * MIB, 10 * MIB, 20 * MIB, producer_waves=100_000)
    assert many == pytest.approx(even, rel=1e-4)


@pytest.mark.parametrize("waves", [0, -1, True, 1.5])
def test_bad_wave_count_is_a_clear_error(waves: object) -> None:
    with pytest.raises(ValueError, match="producer_waves must be an int >= 1"):
        producer_output_survival(1, 1, 1, producer_waves=waves)  # type: ignore[arg-type]


@given(p=sizes, m=sizes, c=st.floats(1, 1e9), waves=st.integers(1, 10_000))
def test_bursts_lie_between_one_wave_and_even_writing(
    p: float, m: float, c: float, waves: int
) -> None:
    """Each burst has no more producer traffic after it than evenly written data at the same
    place, and at most what one wave leaves: s(1) >= s(W) >= s(even)."""
    s = producer_output_survival(p, m, c, producer_waves=waves)
    assert 0.0 <= s <= 1.0
    # shares: the closed-form sum over bursts cancels terms near 1, so compare to 1e-12
    assert s <= producer_output_survival(p, m, c, producer_waves=1) + 1e-12
    assert s >= producer_output_survival(p, m, c) - 1e-12


def test_write_back_by_hand() -> None:
    """x = 40 MiB allocated / 20 MiB = 2: a line used at f of the run is evicted when the
    (1 - f) 40 MiB allocated after it exceed 20 MiB, i.e. for f < 1/2; that holds for the 8 MiB
    written and the 4 MiB of the producer's output read, both spread evenly: 6 MiB."""
    assert write_back_bytes(8 * MIB, 4 * MIB, 40 * MIB, 20 * MIB) == pytest.approx(6 * MIB)


def test_write_back_of_a_small_kernel_is_nothing_and_of_a_huge_one_everything() -> None:
    # 1 MiB through a 20 MiB L2: nothing used is followed by 20 MiB of allocations
    assert write_back_bytes(MIB, 0, MIB, 20 * MIB) == 0.0
    assert write_back_bytes(MIB, 0, 20 * MIB, 20 * MIB) == 0.0
    # 2 GiB through it: all but the last 20 MiB the kernel touched
    assert write_back_bytes(2048 * MIB, 0, 2048 * MIB, 20 * MIB) == pytest.approx(
        2048 * MIB - 20 * MIB, rel=1e-12
    )
    assert write_back_bytes(5, 3, 0, 20 * MIB) == 0.0  # nothing allocated, nothing evicted
    assert write_back_bytes(5, 3, 8, 0) == 8  # no L2: everything goes to DRAM


def test_a_flush_keeps_random_replacement_by_hand() -> None:
    """A 256 MiB flush buffer in a 20 MiB L2 leaves 20 MiB dirty; a kernel allocating 20 MiB
    writes back 1 - e^-1 = 0.632121 of them (random replacement, module docstring)."""
    got = dirty_write_back_bytes(256 * MIB, 20 * MIB, 20 * MIB)
    assert got == pytest.approx(20 * MIB * 0.632121, rel=1e-6)
    assert dirty_write_back_bytes(0, 20 * MIB, 20 * MIB) == 0.0
    assert dirty_write_back_bytes(5, 20 * MIB, 0) == 0.0  # no L2 holds them
    with pytest.raises(ValueError, match=r"dirty_write_back_bytes: .* must be finite and >= 0"):
        dirty_write_back_bytes(-1, 0, 20 * MIB)


def test_write_back_negative_input_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match=r"write_back_bytes: .* must be finite and >= 0"):
        write_back_bytes(1, -1, 0, 20 * MIB)
    with pytest.raises(ValueError, match=r"must be finite and >= 0 \(got 1, 0, nan, "):
        write_back_bytes(1, 0, math.nan, 20 * MIB)


@given(w=sizes, d=sizes, a=sizes, c=st.floats(1, 1e9), more=st.floats(0, 1e9))
def test_write_back_is_bounded_and_grows_with_traffic(
    w: float, d: float, a: float, c: float, more: float
) -> None:
    got = write_back_bytes(w, d, a, c)
    assert 0.0 <= got <= (w + d) * (1 + 1e-9)
    assert write_back_bytes(w, d, a + more, c) >= got * (1 - 1e-9) - 1e-6
    assert write_back_bytes(w, d, a, c + more) <= got * (1 + 1e-9) + 1e-6
