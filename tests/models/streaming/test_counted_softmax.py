"""ATen's register softmax counted from SASS: the shipped file, malformed ones, the
architectures it covers, and its registers and issue cost in the model."""

from __future__ import annotations

import dataclasses
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
    load_register_softmax_counts,
)
from tests.config_errors import assert_one_line_error
from tests.models.streaming.ops import row_op

H200 = load_hardware("h200_sxm")
MI300X = load_hardware("mi300x")


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


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("register_softmax: {}\n", "needs the fields source (a string), register_softmax"),
        (
            f"source: x\nregister_softmax: {{sm90: {{int8: {{cycles_per_row: {_NINE}}}}}}}\n",
            "register_softmax.sm90: must map dtypes",
        ),
        (
            f"source: x\nregister_softmax: {{sm90: {{bf16: {{cycles_per_row: {_NINE}}}}}}}\n",
            "register_softmax.sm90.bf16: needs exactly the fields cycles_per_row, registers",
        ),
        (
            "source: x\nregister_softmax: {sm90: {bf16: "
            f"{{cycles_per_row: [1, 2], registers: {_NINE}}}}}}}\n",
            "register_softmax.sm90.bf16.cycles_per_row: must list 9 integers > 0 (got [1, 2])",
        ),
    ],
)
def test_malformed_files_fail_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_register_softmax_counts, tmp_path, text, message)


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
