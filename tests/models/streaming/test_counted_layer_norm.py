"""ATen's layer norm counted from SASS: the shipped file, malformed ones, the architectures it
covers, the issue cost it gives with the fitted stall factor, and how the model uses it."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import OpKind
from opmodel.core.dtypes import DType
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.counted import (
    LAYER_NORM_FILE,
    RowKernelCount,
    counted_layer_norm,
    load_layer_norm_counts,
)
from opmodel.models.streaming.issue import (
    IssueCalibration,
    counted_issue_cost,
    issue_calibration,
    overridden,
)
from tests.config_errors import assert_one_line_error
from tests.models.streaming.ops import H100, row_op

MI300X = load_hardware("mi300x")


def test_shipped_counts() -> None:
    counts = load_layer_norm_counts(LAYER_NORM_FILE)
    # sm_90 bf16: 72 instructions per Welford iteration and 47 per normalise iteration, each
    # over a thread's 4 elements; issue-bound (its FP32 work fills half the fma pipe)
    assert counts[("layer_norm", "sm90", "bf16")] == RowKernelCount(29.75, 364, 29.75)
    # sm_80 fp16: the A100's FP32 pipe completes half a warp instruction per clock, so its
    # conversions and Welford arithmetic bind above the issue slot
    sm80 = counts[("layer_norm", "sm80", "fp16")]
    assert sm80.cycles_per_element > counts[("layer_norm", "sm86", "fp16")].cycles_per_element
    # sm_89 runs sm_86 code: PyTorch's wheels carry no sm_89 SASS
    assert counted_layer_norm("sm89", DType.FP16) == counts[("layer_norm", "sm86", "fp16")]
    # the RMS variant: a sum of squares, no Welford update: 12.25 per element on sm_90
    assert counted_layer_norm("sm90", DType.BF16, rms=True) == RowKernelCount(12.25, 148, 12.25)
    for (kernel, arch, dtype), count in counts.items():
        # a thread issues a hundred or more instructions per row outside its loops (the
        # statistics' reduction across 32 lanes and 4 warps)
        assert 100 < count.row_instructions < 600, (kernel, arch, dtype)
        assert 5 < count.cycles_per_element < 40, (kernel, arch, dtype)
        if kernel == "rms_norm":
            layer_norm = counts[("layer_norm", arch, dtype)]
            assert count.cycles_per_element < layer_norm.cycles_per_element


@pytest.mark.parametrize(
    ("architecture", "dtype"),
    [("cdna3", DType.BF16), (None, DType.BF16), ("sm90", DType.FP8_E4M3)],
)
def test_no_count_outside_the_file(architecture: str | None, dtype: DType) -> None:
    assert counted_layer_norm(architecture, dtype) is None


_ENTRY = "{instructions_per_element: 1, cycles_per_element: 1, row_instructions: 1}"
_NAN = _ENTRY.replace("cycles_per_element: 1", "cycles_per_element: .nan")


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("layer_norm: {}\nrms_norm: {}\n", "needs the fields source (a string), layer_norm"),
        ("source: x\nlayer_norm: {}\n", "layer_norm and rms_norm (mappings)"),
        (
            f"source: x\nrms_norm: {{}}\nlayer_norm: {{sm90: {{int8: {_ENTRY}}}}}\n",
            "layer_norm.sm90: must map",
        ),
        (
            "source: x\nrms_norm: {}\nlayer_norm: {sm90: {bf16: {cycles_per_element: 1}}}\n",
            "layer_norm.sm90.bf16: needs exactly the fields instructions_per_element,",
        ),
        (
            f"source: x\nlayer_norm: {{}}\nrms_norm: {{sm90: {{bf16: {_NAN}}}}}\n",
            "rms_norm.sm90.bf16.cycles_per_element: must be a finite number > 0 (got nan)",
        ),
    ],
)
def test_malformed_files_fail_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_layer_norm_counts, tmp_path, text, message)


def test_the_issue_cost_spreads_the_row_instructions_over_the_row() -> None:
    """A stall factor of 2 on 30 cycles per element and 320 instructions per row: a 4,096-wide
    row's 128 threads add 320 x 128 / 4,096 = 10 per element, so I = 2 x (30 + 10) = 80; a row
    twice as long halves the spread: 2 x (30 + 5) = 70."""
    calibration = IssueCalibration({}, "x", "y", stall_factors={("pytorch", "layernorm"): 2.0})
    count = RowKernelCount(30.0, 320.0)
    with overridden(calibration):
        assert counted_issue_cost(count, 128, 4096, "pytorch", "layernorm") == 80.0
        assert counted_issue_cost(count, 128, 8192, "pytorch", "layernorm") == 70.0
    # without a fitted factor the count alone
    with overridden(IssueCalibration({}, "x", "y")):
        assert counted_issue_cost(count, 128, 4096, "pytorch", "layernorm") == 40.0


def test_the_shipped_stall_factor_is_fitted_on_the_a100() -> None:
    calibration = issue_calibration()
    factor = calibration.stall_factors[("pytorch", "layernorm")]
    assert 1.0 < factor < 2.0
    assert ("pytorch", "layernorm") not in calibration.instructions
    assert calibration.is_training_row("a100_80gb_sxm", "vidur", "pytorch", "layernorm")


def _latency(hardware: object, factor: float) -> float:
    op = row_op(OpKind.LAYERNORM, 65536, 8192, "pytorch")
    calibration = IssueCalibration({}, "x", "y", stall_factors={("pytorch", "layernorm"): factor})
    with overridden(calibration):
        return predict_streaming(op, hardware).latency_s  # type: ignore[arg-type]


def test_the_model_prices_the_counted_cost_where_there_is_one() -> None:
    """On the H100 a larger stall factor makes the large layer norm slower; on the MI300X,
    whose code is not counted, the factor changes nothing (no issue bound)."""
    assert _latency(H100, 3.0) > _latency(H100, 1.0)
    assert _latency(MI300X, 3.0) == _latency(MI300X, 1.0)
