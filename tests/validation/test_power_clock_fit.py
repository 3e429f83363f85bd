"""Fitting the power-limited clock: it recovers the clock that generated the times."""

from __future__ import annotations

import dataclasses

import pytest

from opmodel import ops as build
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.power_clock_fit import (
    fit_block_clock_hz,
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

from ..conftest import gemm


def test_fit_recovers_the_generating_clock() -> None:
    spec = load_hardware("a100_80gb_sxm")
    ops = [gemm(4096, 8192, 8192), gemm(8192, 8192, 4096), gemm(2048, 16384, 8192)]
    truth = with_power_limited_clock(spec, 1.2e9)
    model = get_model("effective_roofline")
    measured = [model.predict(op, truth).latency_s for op in ops]
    assert fit_power_limited_clock_hz(spec, ops, measured) == 1.2e9


def test_a_block_fit_recovers_the_clock_of_its_summed_kernels() -> None:
    """Each measurement times a sequence of kernels (an MLP block: two GEMMs, an activation,
    a GEMM): the fit compares their summed prediction, and the activation's time, on no
    tensor engine, does not move with the clock."""
    spec = load_hardware("a100_80gb_sxm")
    model = get_model("effective_roofline")
    blocks = [
        (gemm(t, 11008, 4096), gemm(t, 11008, 4096),
         build.elementwise("silu_and_mul", (t, 11008)), gemm(t, 4096, 11008))
        for t in (4096, 8192)
    ]  # fmt: skip
    truth = with_power_limited_clock(spec, 1.11e9)
    measured = [sum(model.predict(op, truth).latency_s for op in b) for b in blocks]
    assert fit_block_clock_hz(spec, blocks, measured) == 1.11e9
    single = [(gemm(4096, 8192, 8192),)]
    times = [model.predict(single[0][0], truth).latency_s]
    assert fit_block_clock_hz(spec, single, times) == fit_power_limited_clock_hz(
        spec, [single[0][0]], times
    )
    with pytest.raises(ValueError, match="2 blocks but 1 measurements"):
        fit_block_clock_hz(spec, blocks, measured[:1])


def test_times_at_full_clock_fit_no_throttling() -> None:
    shipped = load_hardware("a100_80gb_sxm")  # its sourced 1305 MHz is replaced by each trial
    spec = dataclasses.replace(
        shipped, compute=dataclasses.replace(shipped.compute, power_limited_clock_hz=None)
    )
    ops = [gemm(4096, 8192, 8192)]
    measured = [get_model("effective_roofline").predict(ops[0], spec).latency_s]
    assert fit_power_limited_clock_hz(spec, ops, measured) == spec.compute.clock_hz
    assert fit_power_limited_clock_hz(spec, [], []) == spec.compute.clock_hz


def test_bad_arguments_are_one_line_errors() -> None:
    spec = load_hardware("a100_80gb_sxm")
    with pytest.raises(ValueError, match="1 ops but 2 measurements"):
        fit_power_limited_clock_hz(spec, [gemm(64, 64, 64)], [1.0, 2.0])
    with pytest.raises(ValueError, match="must be positive"):
        fit_power_limited_clock_hz(spec, [gemm(64, 64, 64)], [0.0])
    with pytest.raises(ValueError, match=r"power_limited_clock_hz must be in \(0, 1.41e\+09\]"):
        with_power_limited_clock(spec, 2e9)
