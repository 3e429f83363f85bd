"""Concurrency-limited rates, occupancy classes and SMSP placement, derived by hand."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel.models.gemm.concurrency import (
    LevelStream,
    OccupancyClass,
    concurrency_limited_rate,
    loaded_rate,
    memory_phases,
    occupancy_classes,
    smsp_warps,
)


def test_first_window_is_one_latency_when_concurrency_limited() -> None:
    """5.5 stage-equivalents, a 2-stage window, 3 CTAs, 64 B per stage, peak 32 B/cycle,
    latency 20 cycles: 3 * 2 * 64 = 384 B in flight -> 384 / 20 = 19.2 B/cycle (< 32); one
    stage of the wave is 3 * 64 / 19.2 = 10 cycles, so the first window takes 20 cycles and the
    remaining 3.5 stages 35 cycles."""
    phases = memory_phases(
        LevelStream(ctas=3, bytes_per_stage=64, peak_per_cycle=32, latency_cycles=20),
        stage_equivalents=5.5,
        window_stages=2,
    )
    assert phases.rate_per_cycle == pytest.approx(19.2)
    assert phases.prologue_cycles == pytest.approx(20)
    assert phases.body_cycles == pytest.approx(35)


def test_the_same_window_under_loaded_latency() -> None:
    """The model's form (loaded=True): 384 B in flight / (20 cycles x 32 B/cycle) is q = 0.6,
    so the level runs at rho = 2 q / ((1 + q) + sqrt(1 + q^2)) = 1.2 / (1.6 + 1.166) = 0.434
    of its peak, 13.88 B/cycle: queueing stretches the 20-cycle latency to 27.7 cycles
    (20 (2 - rho) / (2 (1 - rho)))."""
    phases = memory_phases(
        LevelStream(ctas=3, bytes_per_stage=64, peak_per_cycle=32, latency_cycles=20),
        stage_equivalents=5.5,
        window_stages=2,
        loaded=True,
    )
    rho = 1.2 / (1.6 + math.sqrt(1.36))
    assert phases.rate_per_cycle == pytest.approx(32 * rho)
    assert phases.rate_per_cycle == pytest.approx(13.88, abs=0.01)
    stretched = 20 * (2 - rho) / (2 * (1 - rho))
    assert phases.prologue_cycles == pytest.approx(stretched)  # the first window: one trip
    assert phases.body_cycles == pytest.approx(3.5 * 3 * 64 / (32 * rho))


def test_loaded_rate_by_hand() -> None:
    assert loaded_rate(1.0, 20.0, 20.0) == pytest.approx(2 - math.sqrt(2))  # q = 1: 0.586
    assert loaded_rate(1.0, 80.0, 20.0) == pytest.approx(5 - math.sqrt(17))  # q = 4: 0.877
    assert loaded_rate(10.0, 5.0, 0.0) == 10.0  # no latency: the peak
    assert loaded_rate(10.0, 0.0, 20.0) == 0.0


@given(
    peak=st.floats(1e-3, 1e6),
    in_flight=st.one_of(st.just(0.0), st.floats(1e-9, 1e9)),  # physical sizes, not subnormals
    latency=st.floats(1e-3, 1e4),
    more=st.floats(0, 1e6),
)
def test_loaded_rate_stays_under_both_bounds_and_grows(
    peak: float, in_flight: float, latency: float, more: float
) -> None:
    """Never above the peak nor the unloaded Little's-law rate; more work in flight never
    lowers it."""
    rate = loaded_rate(peak, in_flight, latency)
    assert 0 <= rate <= concurrency_limited_rate(peak, in_flight, latency) * (1 + 1e-12)
    assert loaded_rate(peak, in_flight + more, latency) >= rate * (1 - 1e-12)


def test_peak_limited_window_takes_longer_than_the_latency() -> None:
    """30 CTAs: 3840 B in flight / 20 = 192 B/cycle > 32, so the peak rules: one stage is
    30 * 64 / 32 = 60 cycles and the 2-stage window 120 cycles (> 20 cycles of latency)."""
    phases = memory_phases(
        LevelStream(ctas=30, bytes_per_stage=64, peak_per_cycle=32, latency_cycles=20),
        stage_equivalents=5.5,
        window_stages=2,
    )
    assert phases.rate_per_cycle == 32
    assert phases.prologue_cycles == pytest.approx(120)
    assert phases.body_cycles == pytest.approx(3.5 * 60)


def test_window_is_capped_by_the_work() -> None:
    """One stage of work in a 4-stage window: the whole work is the prologue."""
    phases = memory_phases(
        LevelStream(ctas=1, bytes_per_stage=100, peak_per_cycle=1000, latency_cycles=50),
        stage_equivalents=1,
        window_stages=4,
    )
    assert phases.rate_per_cycle == pytest.approx(2.0)
    assert (phases.prologue_cycles, phases.body_cycles) == (pytest.approx(50), 0)


def test_rate_is_the_peak_without_latency() -> None:
    assert concurrency_limited_rate(10.0, 1.0, 0.0) == 10.0
    assert concurrency_limited_rate(10.0, 100.0, 20.0) == 5.0


def test_occupancy_classes_by_hand() -> None:
    """250 CTAs on 100 SMs, at most 4 each: 2 per SM plus 50 SMs with a third."""
    assert occupancy_classes(250, 100, 4) == (OccupancyClass(50, 3), OccupancyClass(50, 2))
    assert occupancy_classes(400, 100, 4) == (OccupancyClass(100, 4),)
    assert occupancy_classes(30, 100, 4) == (OccupancyClass(30, 1),)


@given(ctas=st.integers(1, 10_000), sms=st.integers(1, 200), resident=st.integers(1, 32))
def test_occupancy_classes_conserve_ctas(ctas: int, sms: int, resident: int) -> None:
    classes = occupancy_classes(ctas, sms, resident)
    assert sum(c.sms * c.ctas_per_sm for c in classes) == min(ctas, sms * resident)
    assert sum(c.sms for c in classes) <= sms
    assert all(1 <= c.ctas_per_sm <= resident for c in classes)
    assert [c.ctas_per_sm for c in classes] == sorted(
        (c.ctas_per_sm for c in classes), reverse=True
    )


def test_smsp_warps_by_hand() -> None:
    assert smsp_warps(1, 2, 4) == (1, 2)  # two warps leave two SMSPs idle
    assert smsp_warps(3, 4, 4) == (3, 4)  # 12 warps, 3 per SMSP
    assert smsp_warps(1, 8, 4) == (2, 4)  # a cooperative sm_90 CTA: 8 consumer warps
    assert smsp_warps(1, 6, 4) == (2, 4)  # 6 warps: two SMSPs hold 2
