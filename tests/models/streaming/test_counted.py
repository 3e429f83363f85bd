"""ATen's elementwise instructions counted from SASS: the shipped file, malformed ones, the
architectures they cover and how the model uses them (a fitted value replaces a count)."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.dtypes import DType
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.streaming.counted import COUNTS_FILE, counted_instructions, load_counts
from opmodel.models.streaming.issue import IssueCalibration, overridden
from tests.config_errors import assert_one_line_error
from tests.models.streaming.ops import elementwise_op

H200 = load_hardware("h200_sxm")
B200 = load_hardware("b200")


def test_shipped_counts_cover_ampere_ada_and_hopper() -> None:
    counts = load_counts(COUNTS_FILE)
    # the sm_90 SiLU: per element an EX2, an RCP and the division's Newton steps, 194
    # instructions for a thread's 8 elements (scripts/count_aten_sass.py)
    assert counts[("sm90", "bf16", "silu")] == 24.25
    assert counted_instructions("sm90", DType.BF16, "silu") == 24.25
    # sm_89 runs sm_86 code: PyTorch's wheels carry no sm_89 SASS
    assert counted_instructions("sm89", DType.FP16, "gelu") == counts[("sm86", "fp16", "gelu")]
    for arch in ("sm80", "sm86", "sm90"):
        # fp32 needs no conversions: fewer instructions than a 16-bit dtype
        assert counts[(arch, "fp32", "add")] < counts[(arch, "bf16", "add")]
        for dtype in ("bf16", "fp16", "fp32"):
            # the cheap functions cost fewer instructions than the transcendental ones
            add, relu = counts[(arch, dtype, "add")], counts[(arch, dtype, "relu")]
            tanh, silu = counts[(arch, dtype, "tanh")], counts[(arch, dtype, "silu")]
            assert add < relu < tanh < silu
            # where loads a bool beside its two operands and selects: above add, well below
            # a transcendental function; div's reciprocal and Newton steps: between the two
            where, div = counts[(arch, dtype, "where")], counts[(arch, dtype, "div")]
            assert add < where < div < tanh


@pytest.mark.parametrize(
    ("architecture", "dtype", "function"),
    [
        ("sm100", DType.BF16, "silu"),  # not counted: another code path
        ("cdna3", DType.BF16, "silu"),
        (None, DType.BF16, "silu"),
        ("sm90", DType.FP8_E4M3, "silu"),  # bf16, fp16 and fp32 are counted
        ("sm90", DType.BF16, "rope"),  # not an ATen function
    ],
)
def test_no_count_outside_the_file(architecture: str | None, dtype: DType, function: str) -> None:
    assert counted_instructions(architecture, dtype, function) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("instructions_per_element: {}\n", "needs the fields source"),
        ("source: x\ninstructions_per_element: [1]\n", "must map architectures"),
        (
            "source: x\ninstructions_per_element: {sm90: {int8: {add: 1}}}\n",
            "instructions_per_element.sm90: must map dtypes (bf16, fp16, fp32)",
        ),
        (
            "source: x\ninstructions_per_element: {sm90: {bf16: [1]}}\n",
            "instructions_per_element.sm90.bf16: must map functions",
        ),
        (
            "source: x\ninstructions_per_element: {sm90: {bf16: {add: -1}}}\n",
            "instructions_per_element.sm90.bf16.add: must be a finite number > 0 (got -1)",
        ),
    ],
)
def test_malformed_files_fail_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_counts, tmp_path, text, message)


def _latency(function: str, hardware: object, **attrs: str) -> float:
    op = elementwise_op(32768, 14336, function, implementation="pytorch", **attrs)
    return predict_streaming(op, hardware).latency_s  # type: ignore[arg-type]


def test_counted_arithmetic_makes_silu_slower_than_relu_where_it_is_counted() -> None:
    """Same bytes; on the H200 the SiLU's 23.75 fp16 instructions per element against the
    ReLU's 9.875 lengthen each CTA's chain (its arithmetic follows its load), so the large
    SiLU takes longer. On the B200, with no counts, the two are priced the same."""
    assert _latency("silu", H200) > _latency("relu", H200)
    assert _latency("silu", B200) == _latency("relu", B200)


def test_a_fitted_value_replaces_the_count() -> None:
    """A calibration that lists the SiLU, even at 0, replaces its count: at 0 it costs what the
    uncounted B200 path charges, nothing for arithmetic, so it is as fast as an op whose count
    is also replaced by 0."""
    zero = IssueCalibration({("pytorch", "silu"): 0.0, ("pytorch", "relu"): 0.0}, "x", "y")
    with overridden(zero):
        silu, relu = _latency("silu", H200), _latency("relu", H200)
    assert silu == relu < _latency("silu", H200)
