"""The FP4 kernels' extra fixed overhead: where it applies, what it adds, its file's errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import DType, ops
from opmodel.core.errors import ConfigError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.fp4_overhead import (
    NO_FP4_EXTRA,
    fp4_extra_cycles,
    fp4_overridden,
    load_fp4_overhead,
)

B200, MI355X = load_hardware("b200"), load_hardware("mi355x")


def test_only_fp4_gemms_on_the_fitted_architecture_get_it() -> None:
    effective = "effective_roofline"
    assert fp4_extra_cycles(B200, effective, DType.NVFP4) == 5846
    assert fp4_extra_cycles(B200, effective, DType.MXFP4) == 5846
    assert fp4_extra_cycles(B200, "extended_roofline", DType.NVFP4) == 3808
    assert fp4_extra_cycles(B200, effective, DType.FP8_E4M3) == 0
    assert fp4_extra_cycles(B200, effective, DType.MXFP8) == 0
    assert fp4_extra_cycles(MI355X, effective, DType.MXFP4) == 0  # not fitted for cdna4


def test_it_adds_its_cycles_at_the_kernel_clock() -> None:
    """The same op without the calibration is faster by exactly 5,846 cycles at the kernel's
    clock; an FP8 GEMM is unchanged; the shipped value is back after the block."""
    model = get_model("effective_roofline")
    fp4 = ops.gemm(64, 6144, 4096, "nvfp4", out_dtype="bf16", transpose_b=True)
    fp8 = ops.gemm(64, 6144, 4096, "fp8_e4m3", out_dtype="bf16", transpose_b=True)
    shipped, shipped_fp8 = model.predict(fp4, B200), model.predict(fp8, B200)
    with fp4_overridden(NO_FP4_EXTRA):
        without, without_fp8 = model.predict(fp4, B200), model.predict(fp8, B200)
    clock = shipped.diagnostics.sm_clock_hz
    assert shipped.latency_s - without.latency_s == pytest.approx(5846 / clock, rel=1e-9)
    assert without_fp8.latency_s == shipped_fp8.latency_s
    assert model.predict(fp4, B200).latency_s == shipped.latency_s


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("extra_cycles: {}\n", "needs the fields fitted_on, extra_cycles"),
        (
            "fitted_on: {source: s, split: s}\nextra_cycles: {roofline: {sm100: 1}}\n",
            "extra_cycles.roofline: unknown GEMM model",
        ),
        (
            "fitted_on: {source: s, split: s}\nextra_cycles: {effective_roofline: {sm100: -1}}\n",
            "extra_cycles.effective_roofline.sm100: must be cycles >= 0",
        ),
        (
            "fitted_on: {source: s, split: s, rows: [1]}\nextra_cycles: {}\n",
            "fitted_on.rows: must be a list of strings",
        ),
    ],
)
def test_a_bad_file_is_one_line_naming_it(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "fp4.yaml"
    path.write_text(text)
    with pytest.raises(ConfigError) as info:
        load_fp4_overhead(path)
    assert len(info.value.problems) == 1
    assert str(path) in info.value.problems[0] and message in info.value.problems[0]
