"""scripts/compare_nvmatmulheuristics.py without the library: its kernel description parsed into
op attrs, and opmodel run on that kernel."""

from __future__ import annotations

import dataclasses
from types import ModuleType
from typing import Any

import pytest

from opmodel.core.dtypes import DType
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.gemm_latency import row_op
from tests.scripts.loader import load_script

KERNEL = (
    "layout(NT_ROW) stages(4) cta(32 128 32) warp(16 64 32) instr(16 8 16) splitK(4) swizz(1) "
    "ctaOrder(0) cluster(1 1)"
)


def _script() -> ModuleType:
    return load_script("compare_nvmatmulheuristics")


class _Predictor:
    """The script's predictor with the library's answer replaced by a fixed top-1 config."""

    def __init__(self, script: ModuleType, kernel: str) -> None:
        self._real = script.NvmmhPredictor(library=None)
        self._real._top1 = lambda _row: {"kernel": kernel, "runtime": 1e-4}

    def kernel_attrs(self, row: GemmRow) -> dict[str, int]:
        attrs: dict[str, int] = self._real.kernel_attrs(row)
        return attrs


def _row() -> GemmRow:
    return GemmRow(
        time_s=4e-4,
        batch=1,
        m=24,
        n=28672,
        k=8192,
        transpose_a=False,
        transpose_b=True,
        dtype=DType.FP16,
        compute_dtype=None,
        hardware="a100_80gb_sxm",
        clock_hz=None,
        source="vidur",
        label="x",
        kernel={},
        file="x.csv",
    )


def test_kernel_description_becomes_op_attrs() -> None:
    script = _script()
    attrs = _Predictor(script, KERNEL).kernel_attrs(_row())
    assert attrs == {
        "cta_tile_m": 32,
        "cta_tile_n": 128,
        "cta_tile_k": 32,
        "warp_tile_m": 16,
        "warp_tile_n": 64,
        "warp_tile_k": 32,
        "pipeline_stages": 4,
        "split_k": 4,
        "raster_swizzle": 1,
    }
    with pytest.raises(ValueError, match=r"without splitK\(\.\.\.\)"):
        _Predictor(script, "stages(4) cta(32 128 32) warp(16 64 32) swizz(1)").kernel_attrs(_row())


def test_opmodel_runs_the_library_kernel_without_the_fixed_overhead() -> None:
    script = _script()
    predictor: Any = _Predictor(script, KERNEL)
    seconds = script.OnNvmmhKernel(predictor).seconds(_row())
    spec = load_hardware("a100_80gb_sxm")
    spec = dataclasses.replace(
        spec, overhead=dataclasses.replace(spec.overhead, fixed_device_overhead_cycles=0)
    )
    row = dataclasses.replace(_row(), kernel=predictor.kernel_attrs(_row()))
    profile = get_model("effective_roofline").predict(row_op(row), spec)
    assert seconds == profile.latency_s
    assert profile.diagnostics.kernel.split_k == 4  # the library's split-K, not the selection's
