"""ATen's register softmax counted from SASS: the shipped file, malformed ones, the
architectures it covers, and its registers and issue cost in the model."""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from pathlib import Path

import pytest

from opmodel import OpKind
from opmodel.core.dtypes import DType
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming import StreamingEvaluation
from opmodel.models.streaming.aten_softmax import (
    aten_softmax_calibration,
    overridden,
    register_stall_factor,
)
from opmodel.models.streaming.counted import (
    SOFTMAX_FILE,
    RegisterSoftmaxCount,
    counted_register_softmax,
    counted_warp_softmax_registers,
    load_register_softmax_counts,
    load_warp_softmax_registers,
)
from tests.config_errors import assert_one_line_error
from tests.models.streaming.ops import row_op

H200 = load_hardware("h200_sxm")
MI300X = load_hardware("mi300x")
B200 = load_hardware("b200")
L40S = load_hardware("l40s")


def test_shipped_counts() -> None:
    counts = load_register_softmax_counts(SOFTMAX_FILE)
    # sm_90 bf16, 4 elements per thread (a 4,096-wide row over 1,024 threads): 346 issue
    # cycles per row, 30 registers (two 1,024-thread CTAs fit an SM's 65,536)
    assert counts[("sm90", "bf16")][3] == RegisterSoftmaxCount(346.0, 30)
    assert counted_register_softmax("sm90", DType.BF16, 4) == RegisterSoftmaxCount(346.0, 30)
    assert counted_register_softmax("sm89", DType.FP16, 8) == counts[("sm86", "fp16")][7]
    for (arch, dtype), values in counts.items():
        cycles = [v.cycles_per_row for v in values]
        # every element a thread holds adds its load, exponentials, division and store
        assert cycles == sorted(cycles) and cycles[0] < cycles[-1], (arch, dtype)


@pytest.mark.parametrize(
    ("architecture", "dtype", "per_thread"),
    [("cdna3", DType.BF16, 4), (None, DType.BF16, 4), ("sm90", DType.BF16, 10)],
)
def test_no_count_outside_the_file(architecture: str | None, dtype: DType, per_thread: int) -> None:
    assert counted_register_softmax(architecture, dtype, per_thread) is None


_NINE = "[1, 1, 1, 1, 1, 1, 1, 1, 1]"
_TWELVE = "[1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1, 1]"
_REGISTER, _WARP = load_register_softmax_counts, load_warp_softmax_registers


@pytest.mark.parametrize(
    ("loader", "text", "message"),
    [
        (
            _REGISTER,
            "register_softmax: {}\n",
            "needs the fields source (a string), register_softmax",
        ),
        (
            _REGISTER,
            f"source: x\nregister_softmax: {{sm90: {{int8: {{cycles_per_row: {_NINE}}}}}}}\n",
            "register_softmax.sm90: must map dtypes",
        ),
        (
            _REGISTER,
            f"source: x\nregister_softmax: {{sm90: {{bf16: {{cycles_per_row: {_NINE}}}}}}}\n",
            "register_softmax.sm90.bf16: needs exactly the fields cycles_per_row, registers",
        ),
        (
            _REGISTER,
            "source: x\nregister_softmax: {sm90: {bf16: "
            f"{{cycles_per_row: [1, 2], registers: {_NINE}}}}}}}\n",
            "register_softmax.sm90.bf16.cycles_per_row: must list 9 integers > 0 (got [1, 2])",
        ),
        (_WARP, "source: x\n", "warp_softmax: must map architectures to dtypes"),
        (
            _WARP,
            f"warp_softmax: {{sm90: {{int8: {{registers: {_TWELVE}}}}}}}\n",
            "warp_softmax.sm90: must map dtypes (bf16, fp16, fp32) to registers",
        ),
        (
            _WARP,
            "warp_softmax: {sm90: {bf16: {registers: [80, 48]}}}\n",
            "warp_softmax.sm90.bf16.registers: must list 12 integers > 0 (got [80, 48])",
        ),
        (
            _WARP,
            f"warp_softmax: {{sm90: {{bf16: {{registers: {_TWELVE}, cycles: 1}}}}}}\n",
            "warp_softmax.sm90.bf16.registers: must list 12 integers > 0 (got None)",
        ),
    ],
)
def test_malformed_files_fail_in_one_line(
    tmp_path: Path, loader: Callable[[Path], object], text: str, message: str
) -> None:
    assert_one_line_error(loader, tmp_path, text, message)


def _evaluation(length: int) -> StreamingEvaluation:
    profile = predict_streaming(row_op(OpKind.SOFTMAX, 65536, length, "pytorch"), H200)
    assert isinstance(profile.diagnostics, StreamingEvaluation)
    return profile.diagnostics


def test_counted_registers_set_the_ctas_per_sm() -> None:
    """4,096 fp16 elements per row: 4 per thread, 30 registers, two 1,024-thread CTAs per SM
    (the estimate of 40 allowed one); 8,192: 8 per thread, 37 registers, one."""
    four, eight = _evaluation(4096), _evaluation(8192)
    assert four.kernel.registers_per_thread == 30 and four.resident_ctas_per_sm == 2
    assert eight.kernel.registers_per_thread == 37 and eight.resident_ctas_per_sm == 1


def _latency(hardware: HardwareSpec, factor: float) -> float:
    trial = dataclasses.replace(aten_softmax_calibration(), register_stall_factor=factor)
    with overridden(trial):
        op = row_op(OpKind.SOFTMAX, 65536, 8192, "pytorch")
        return predict_streaming(op, hardware).latency_s


def test_the_stall_factor_scales_the_counted_cost_only_where_counted() -> None:
    """The shipped factor is fitted (above 1: stalls the count leaves out); a larger one makes
    the H200's register softmax slower, and the MI300X, without a count, does not see it."""
    assert 1.0 < register_stall_factor() < 2.0
    assert _latency(H200, 3.0) > _latency(H200, 1.0)
    assert _latency(MI300X, 3.0) == _latency(MI300X, 1.0)


def test_shipped_warp_softmax_registers() -> None:
    """The warp softmax's registers by row length (2^0 to 2^11 elements): 2,048 bf16 elements
    (64 per lane) take 80 on sm_90 (what ncu reports on the H200) and 168 on sm_100; sm_89
    runs sm_86's code; lengths past 2^11 and other architectures have none."""
    warp = load_warp_softmax_registers(SOFTMAX_FILE)
    assert warp[("sm90", "bf16")][11] == counted_warp_softmax_registers("sm90", DType.BF16, 11)
    assert counted_warp_softmax_registers("sm90", DType.BF16, 11) == 80
    assert counted_warp_softmax_registers("sm100", DType.BF16, 11) == 168
    assert counted_warp_softmax_registers("sm89", DType.FP16, 9) == warp[("sm86", "fp16")][9]
    assert counted_warp_softmax_registers("sm90", DType.BF16, 12) is None
    assert counted_warp_softmax_registers("cdna3", DType.BF16, 11) is None
    for (arch, dtype), values in warp.items():
        # the longest rows hold the most values per lane
        assert values[11] == max(values) and len(values) == 12, (arch, dtype)


def _warp_kernel(hardware: HardwareSpec, rows: int, length: int) -> StreamingEvaluation:
    profile = predict_streaming(row_op(OpKind.SOFTMAX, rows, length, "pytorch"), hardware)
    assert isinstance(profile.diagnostics, StreamingEvaluation)
    return profile.diagnostics


def test_counted_warp_softmax_registers_set_its_ctas_per_sm() -> None:
    """2,048 fp16 elements a row: on the B200 the counted 168 registers a thread (5,376 a
    warp, 21,504 a 4-warp CTA) admit 3 CTAs to an SM's 65,536 where the estimate of 80 (16 +
    64 values: 10,240 a CTA) admitted 6; on the H200 the count is the estimate; the MI300X
    has no count and keeps it."""
    b200 = _warp_kernel(B200, 65536, 2048)
    assert b200.kernel.name == "softmax_warp_forward"
    assert b200.kernel.registers_per_thread == 168 and b200.resident_ctas_per_sm == 3
    assert _warp_kernel(H200, 65536, 2048).kernel.registers_per_thread == 80
    assert _warp_kernel(MI300X, 65536, 2048).kernel.registers_per_thread == 80
    # 512 fp16 elements on the L40S (sm_89 runs sm_86's code): 40 counted, 32 estimated
    assert _warp_kernel(L40S, 65536, 512).kernel.registers_per_thread == 40
