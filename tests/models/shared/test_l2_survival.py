"""The producer-output survival and write-back laws (opmodel.models.shared.l2_survival), by hand
and by property."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel.models.shared.l2_survival import producer_output_survival, write_back_bytes

MIB = 2**20


def test_equal_traffic_is_exp_minus_a() -> None:
    """a = b = 1: every byte has seen exactly one capacity of misses, s = e^-1."""
    assert producer_output_survival(20 * MIB, 20 * MIB, 20 * MIB) == pytest.approx(math.exp(-1))


def test_hand_value() -> None:
    """a = 2, b = 0.5: s = (e^-0.5 - e^-2) / 1.5 = (0.606531 - 0.135335) / 1.5 = 0.314131."""
    s = producer_output_survival(40 * MIB, 10 * MIB, 20 * MIB)
    assert s == pytest.approx(0.314131, abs=1e-6)


def test_small_kernels_leave_everything_and_huge_ones_little() -> None:
    assert producer_output_survival(1, 1, 20 * MIB) == pytest.approx(1.0, abs=1e-6)
    # a = 100, b ~ 0: s ~ 1 / a
    assert producer_output_survival(2000 * MIB, 0, 20 * MIB) == pytest.approx(0.01, rel=1e-6)
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
    own evicts it: s = (1 - e^-b) / b; a = 4.7, b = 0.5: (1 - 0.606531) / 0.5 = 0.786939."""
    s = producer_output_survival(94 * MIB, 10 * MIB, 20 * MIB, producer_waves=1)
    assert s == pytest.approx(0.786939, abs=1e-6)


def test_two_bursts_by_hand() -> None:
    """W = 2, a = 2, b = 0: the first half has a / 2 = 1 capacity of producer traffic after it,
    the second none: s = (e^-1 + 1) / 2 = 0.683940."""
    assert producer_output_survival(40 * MIB, 0, 20 * MIB, producer_waves=2) == pytest.approx(
        0.683940, abs=1e-6
    )


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
    assert s <= producer_output_survival(p, m, c, producer_waves=1) * (1 + 1e-9) + 1e-300
    assert s >= producer_output_survival(p, m, c) * (1 - 1e-9) - 1e-300


def test_write_back_by_hand() -> None:
    """x = 40 MiB allocated / 20 MiB = 2: of 8 MiB written evenly, 1 - (1 - e^-2) / 2 =
    1 - 0.432332 = 0.567668 are evicted; of 4 MiB dirty at the start, 1 - e^-2 = 0.864665."""
    got = write_back_bytes(8 * MIB, 4 * MIB, 40 * MIB, 20 * MIB)
    assert got == pytest.approx(8 * MIB * 0.567668 + 4 * MIB * 0.864665, rel=1e-6)


def test_write_back_of_a_small_kernel_is_small_and_of_a_huge_one_everything() -> None:
    # 1 MiB through a 20 MiB L2: x = 0.05, 1 - (1 - e^-x)/x ~ x/2 = 2.5 % of the writes
    assert write_back_bytes(MIB, 0, MIB, 20 * MIB) == pytest.approx(0.0248 * MIB, rel=1e-2)
    # 2 GiB through it: all but ~1/x of the writes
    assert write_back_bytes(2048 * MIB, 0, 2048 * MIB, 20 * MIB) == pytest.approx(
        2048 * MIB - 20 * MIB, rel=1e-6
    )
    assert write_back_bytes(5, 3, 0, 20 * MIB) == 0.0  # nothing allocated, nothing evicted
    assert write_back_bytes(5, 3, 8, 0) == 8  # no L2: everything goes to DRAM


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
