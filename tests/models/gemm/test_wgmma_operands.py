"""sm_90 wgmma kernels: each 64-row instruction reads its own operand fragments from shared
memory, and what that does to the tile selection picks."""

from __future__ import annotations

import pytest

from opmodel import DType
from opmodel.hardware import load_hardware
from opmodel.hardware.kernel_catalogue import catalogue_for
from opmodel.models import get_model
from opmodel.models.gemm import GemmProblem
from opmodel.models.gemm.candidates import specialise
from opmodel.models.gemm.cta_work import local_work

from ...conftest import gemm


@pytest.mark.parametrize(
    ("cta", "groups", "smem_kib"),
    [
        # two warpgroups of 128 rows, each issuing two m64n128k16 per k-step: B read 4 times;
        # fill 32 + 16 KiB, A read once (32), B 4 x 16 -> 144 KiB per 64-deep bf16 stage
        ((256, 128, 64), (4, 1), 144),
        # two warpgroups of 64 rows, one m64n256k16 each: B read twice; 16 + 32 + 16 + 2 x 32
        ((128, 256, 64), (2, 1), 128),
        # one warpgroup, one m64n256k16: 8 + 32 + 8 + 32
        ((64, 256, 64), (1, 1), 80),
    ],
)
def test_wgmma_operand_reads_count_each_64_row_instruction(
    cta: tuple[int, int, int], groups: tuple[int, int], smem_kib: int
) -> None:
    """A wgmma computes 64 rows by at most 256 columns and reads its operands from shared
    memory (PTX ISA, m64nNk16): the B tile is read once per 64-row slice of the CTA tile, so
    the 256 x 128 tile moves more shared-memory bytes per stage than 128 x 256."""
    problem = GemmProblem.from_op(gemm(8192, 8192, 8192, DType.BF16))
    sm = load_hardware("h100_sxm").compute.sm
    assert sm is not None
    templates = catalogue_for("sm90")
    assert templates is not None
    template = next(
        t
        for t in templates
        if t.instruction.value == "wgmma"
        and t.cta == cta
        and t.cluster == (1, 1)
        and t.split_k == 1
        and t.runs(DType.BF16)
    )
    kernel = specialise(template, sm, problem)
    assert kernel.operand_read_groups == groups
    assert local_work(kernel, problem).smem_bytes == smem_kib * 1024


def test_cublas_orientation_for_a_wide_gemm_on_h200() -> None:
    """cuBLAS ran its 128 x 256 kernel (128 rows of M) on every large H200 GEMM of
    data/measured whose tile was one of the two; the model now picks the same orientation for
    M = 1024, N = 28672, K = 8192, where it used to take 256 x 128 by 0.08 %."""
    profile = get_model("effective_roofline").predict(
        gemm(1024, 28672, 8192, DType.BF16), load_hardware("h200_sxm")
    )
    kernel = profile.diagnostics.kernel
    assert (kernel.cta_tile_m, kernel.cta_tile_n) == (128, 256)
