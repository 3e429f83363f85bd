"""ATen's softmax kernels: the dispatch by row length, the shipped calibration and its training
rows, the fallback for sizes it does not list, the block kernel's issue cost in a prediction,
and malformed files (the loads in flight in the chain are tested in test_streaming.py)."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.start_drain import start_drain_calibration
from opmodel.models.streaming import streaming_kernel
from opmodel.models.streaming.aten_softmax import (
    CALIBRATION_FILE,
    aten_softmax_calibration,
    block_instructions_per_element,
    is_warp_softmax,
    load_aten_softmax_calibration,
    loads_in_flight,
    overridden,
    register_stall_factor,
    softmax_path,
)
from tests.config_errors import assert_one_line_error


def test_shipped_calibration_names_its_training_rows() -> None:
    calibration = load_aten_softmax_calibration(CALIBRATION_FILE)
    assert (calibration.hardware, calibration.source) == ("h200_sxm", "opmodel-measure")
    assert set(calibration.loads_in_flight) == {2, 4}
    assert calibration.block_instructions_per_element > 0
    train = calibration.is_training_row
    assert train("h200_sxm", "opmodel-measure", 512, 2048, 2)  # warp, one wave
    assert not train("h200_sxm", "opmodel-measure", 1024, 2048, 2)
    assert train("h200_sxm", "opmodel-measure", 8192, 32768, 2)  # block, many waves
    assert not train("h200_sxm", "opmodel-measure", 1024, 32768, 2)
    # reg: its stall factor is fitted on its rows of many waves
    assert train("h200_sxm", "opmodel-measure", 65536, 4096, 2)
    assert not train("h200_sxm", "opmodel-measure", 1024, 4096, 2)
    assert not train("rtx3090", "liger", 1, 1024, 2)
    assert not train("h200_sxm", "opmodel-measure", 1, 512, 8)  # fp64: no u listed


def test_sizes_not_listed_wait_for_each_load() -> None:
    assert loads_in_flight(8) == 1.0 and loads_in_flight(1) == 1.0
    assert loads_in_flight(2) == load_aten_softmax_calibration(CALIBRATION_FILE).loads_in_flight[2]


def test_atens_dispatch_by_row_length() -> None:
    """host_softmax: the warp softmax up to 2048 elements and 8192 bytes, the register kernel
    while each of min(length, 1024) threads holds at most 9, the block kernel above."""
    assert is_warp_softmax(2048, 2) and is_warp_softmax(2048, 4)
    assert not is_warp_softmax(4096, 2) and not is_warp_softmax(2048, 8)
    assert is_warp_softmax(1024, 8) and is_warp_softmax(1, 2)
    assert [softmax_path(n, 2) for n in (2048, 2049, 9216, 9217, 32768)] == [
        "warp",
        "reg",
        "reg",
        "block",
        "block",
    ]
    assert softmax_path(1025, 8) == "reg"  # 8200 bytes: past the warp kernel's 8 KiB
    # the diagnostics name the kernel the structure stands for
    names = [streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, n, 2).name for n in (2048, 8192, 32768)]
    assert names == ["softmax_warp_forward", "cunn_SoftMaxForwardReg", "cunn_SoftMaxForward"]
    norm = streaming_kernel(OpKind.LAYERNORM, "pytorch", 8, 4096, 2)
    assert norm.name == "vectorized_layer_norm_kernel"
    vllm = streaming_kernel(OpKind.RMSNORM, "vllm", 8, 4096, 2)
    assert vllm.name == "rms_norm_kernel"
    # ATen's layer norm waits for each Welford iteration's arithmetic before its next load, and
    # so does vLLM's RMSNorm, whose two CTAs on an SM run that loop in lockstep; vLLM's
    # activation and ATen's warp softmax overlap theirs (their chains hold loads only)
    assert norm.serial_arithmetic and not norm.lockstep
    assert vllm.serial_arithmetic and vllm.lockstep
    act = streaming_kernel(OpKind.ELEMENTWISE, "vllm", 8, 4096, 2)
    assert not act.serial_arithmetic and not act.lockstep
    assert not streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 2048, 2).serial_arithmetic


def _softmax(rows: int, length: int) -> LocalOp:
    return LocalOp(
        name="softmax",
        kind=OpKind.SOFTMAX,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, (rows, length), DType.BF16),
            TensorSpec(TensorRole.OUTPUT, (rows, length), DType.BF16),
        ),
        attrs={"implementation": "pytorch"},
    )


def test_block_issue_cost_by_hand() -> None:
    """65536 rows of 32768 bf16 on the H200: the busiest SM runs ceil(65536 / 132) = 497 rows,
    each 32768 elements at I instructions, on 4 x 32 lanes a clock; with I twice the shipped
    value the issue bound doubles (it sets the time)."""
    h200 = load_hardware("h200_sxm")
    issue = block_instructions_per_element()
    clock = h200.compute.max_boost_clock_hz
    assert clock is not None
    block = predict_streaming(_softmax(65536, 32768), h200)
    expected = 497 * 32768 * issue / 128 / clock
    assert block.diagnostics.limiter == "compute"  # type: ignore[attr-defined]
    fixed = (
        start_drain_calibration().start_drain_cycles / clock
    )  # opmodel.models.shared.start_drain
    assert block.latency_s == pytest.approx(fixed + expected, rel=1e-9)
    doubled = dataclasses.replace(
        aten_softmax_calibration(), block_instructions_per_element=2 * issue
    )
    with overridden(doubled):
        again = predict_streaming(_softmax(65536, 32768), h200)
    assert again.latency_s == pytest.approx(fixed + 2 * expected, rel=1e-9)


def test_one_row_adds_its_arithmetic_to_its_chain() -> None:
    """One row of 8192 bf16 (the register kernel, one CTA): its loads, reductions and
    arithmetic follow one another, so the time grows by the CTA's whole issue time,
    8192 x I / 128 lanes per clock, and the arithmetic is not hidden under the loads (to 0.1 %:
    a longer chain loads DRAM's queue a little less). I: sm_90's counted 647 issue cycles per
    row of a thread holding 8 elements, x 1,024 threads / 8,192 elements, x the stall factor."""
    h200 = load_hardware("h200_sxm")
    clock = h200.compute.max_boost_clock_hz
    assert clock is not None
    issue = register_stall_factor() * 647 * 1024 / 8192
    reg = predict_streaming(_softmax(1, 8192), h200)
    zero = dataclasses.replace(aten_softmax_calibration(), register_stall_factor=0.0)
    with overridden(zero):
        bare = predict_streaming(_softmax(1, 8192), h200)
    assert reg.diagnostics.limiter == bare.diagnostics.limiter == "latency"  # type: ignore[attr-defined]
    assert reg.latency_s - bare.latency_s == pytest.approx(8192 * issue / 128 / clock, rel=1e-3)


_HEAD = (
    "fitted_on: {hardware: h, source: s, warp_max_rows: 512, block_min_rows: 8192}\n"
    "block_instructions_per_element: 50\n"
)


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("fitted_on: {hardware: h, source: s}\nloads_in_flight: {2: 2}\n", "needs the fields"),
        (
            "fitted_on: {hardware: h, warp_max_rows: 1, block_min_rows: 1}\n"
            "loads_in_flight: {2: 2.0}\nblock_instructions_per_element: 1\n",
            "fitted_on: needs string fields hardware, source",
        ),
        (
            "fitted_on: {hardware: h, source: s, warp_max_rows: 0, block_min_rows: 1}\n"
            "loads_in_flight: {2: 2.0}\nblock_instructions_per_element: 1\n",
            "fitted_on.warp_max_rows: must be an integer >= 1 (got 0)",
        ),
        (_HEAD + "loads_in_flight: {}\n", "loads_in_flight: must map element sizes"),
        (_HEAD + "loads_in_flight: {3: 2.0}\n", "loads_in_flight.3: element size must be"),
        (
            _HEAD + "loads_in_flight: {2: 0.5}\n",
            "loads_in_flight.2: must be a finite number >= 1 (got 0.5)",
        ),
        (
            _HEAD + "loads_in_flight: {2: true}\n",
            "loads_in_flight.2: must be a finite number >= 1 (got True)",
        ),
        (
            _HEAD.replace("50", "-1") + "loads_in_flight: {2: 2.0}\n",
            "block_instructions_per_element: must be a finite number >= 0 (got -1)",
        ),
        (
            _HEAD + "loads_in_flight: {2: 2.0}\nregister_stall_factor: 0\n",
            "register_stall_factor: must be a finite number > 0 (got 0)",
        ),
    ],
)
def test_malformed_calibration_is_a_one_line_error(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_aten_softmax_calibration, tmp_path, text, message)
