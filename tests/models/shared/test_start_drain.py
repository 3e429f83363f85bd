"""The start-and-drain calibration of streaming kernels: the shipped file, malformed ones, which
GPUs take it and that a streaming kernel's time moves by exactly it."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.hardware import load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.start_drain import (
    CALIBRATION_FILE,
    StartDrainCalibration,
    load_start_drain_calibration,
    overridden,
    start_drain_calibration,
    start_drain_s,
)
from tests.config_errors import assert_one_line_error
from tests.models.streaming.ops import elementwise_op

KERNELS = frozenset({("pytorch", "add"), ("vllm", "silu_and_mul")})


def test_shipped_calibration_names_its_training_rows() -> None:
    calibration = load_start_drain_calibration(CALIBRATION_FILE)
    assert calibration.hardware == "a100_80gb_sxm" and calibration.source == "vidur"
    assert calibration.kernels == KERNELS
    # more than the configs' 2,000-cycle estimate: Vidur's small kernels, with their truncated
    # microseconds put back, need it; less than the GEMMs' fitted overheads
    assert 2000 < calibration.start_drain_cycles < 5000
    assert calibration.is_training_row("a100_80gb_sxm", "vidur", "vllm", "silu_and_mul")
    assert not calibration.is_training_row("h100_sxm", "vidur", "pytorch", "add")
    assert not calibration.is_training_row("a100_80gb_sxm", "vidur", "vllm", "rmsnorm")
    assert not calibration.is_training_row("a100_80gb_sxm", "liger", "pytorch", "add")


def test_cuda_gpus_take_the_cycles_at_their_clock_others_their_config() -> None:
    cycles = start_drain_calibration().start_drain_cycles
    for name in ("a100_80gb_sxm", "h100_sxm", "a40", "b200"):
        spec = load_hardware(name)
        assert start_drain_s(spec) == pytest.approx(cycles / spec.compute.clock_hz)
        # a what-if clock scales it, as any span of SM cycles
        slow = spec.at_clock(spec.compute.clock_hz / 2)
        assert start_drain_s(slow) == pytest.approx(2 * start_drain_s(spec))
    for name in ("mi300x", "tpu_v5e", "gpu_generic"):
        spec = load_hardware(name)
        expected = spec.overhead.fixed_device_overhead_cycles / spec.compute.clock_hz
        assert start_drain_s(spec) == pytest.approx(expected)


@pytest.mark.parametrize("tokens", [1, 512, 8192])
def test_a_streaming_kernel_moves_by_exactly_the_span(tokens: int) -> None:
    spec = load_hardware("h100_sxm")
    times = []
    for cycles in (0.0, 3000.0):
        with overridden(StartDrainCalibration(cycles, "a100_80gb_sxm", "vidur", KERNELS)):
            profile = predict_streaming(
                elementwise_op(tokens, 4096, "add", inputs=2, implementation="pytorch"), spec
            )
        times.append(profile.latency_s)
    # at the clock the kernel runs at: the H100's boost clock, 1.98 GHz
    assert times[1] - times[0] == pytest.approx(3000.0 / boosted(spec).compute.clock_hz)


FITTED = "fitted_on: {hardware: a, source: b, kernels: [pytorch/add]}\n"


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fitted_on: {hardware: a, source: b}\n", "needs the fields"),
        (
            "fitted_on: {hardware: a}\nstart_drain_cycles: 3000\n",
            "fitted_on: needs string fields hardware, source",
        ),
        (
            "fitted_on: {hardware: a, source: b}\nstart_drain_cycles: 3000\n",
            "fitted_on.kernels: must be a list of implementation/function entries",
        ),
        (
            "fitted_on: {hardware: a, source: b, kernels: [cuda/add]}\nstart_drain_cycles: 3\n",
            "'cuda/add' must be implementation/function, implementation one of",
        ),
        (
            "fitted_on: {hardware: a, source: b, kernels: [pytorch]}\nstart_drain_cycles: 3\n",
            "'pytorch' must be implementation/function",
        ),
        (FITTED + "start_drain_cycles: -1\n", "must be a number of SM cycles from 0 to 200000"),
        (FITTED + "start_drain_cycles: true\n", "(got True)"),
        (FITTED + "start_drain_cycles: .nan\n", "start_drain_cycles: must be a number"),
        (FITTED + "start_drain_cycles: 1.0e+6\n", "(got 1000000.0)"),
    ],
)
def test_malformed_calibration_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_start_drain_calibration, tmp_path, text, message)
