"""DRAM passes of CUTLASS 3's persistent kernels: rounds of the resident CTAs, nothing in L2
from one round to the next (models.gemm.traffic._round_passes), by hand."""

from __future__ import annotations

import pytest

from opmodel import DType
from opmodel.hardware import load_hardware
from opmodel.hardware.kernel_catalogue import catalogue_for
from opmodel.models.gemm import GemmProblem, gemm_traffic, grid_of, occupancy_of
from opmodel.models.gemm.candidates import specialise

from ...conftest import gemm


def _traffic(m: int, n: int, k: int, arch: str = "sm90", hardware: str = "h200_sxm"):  # type: ignore[no-untyped-def]
    spec = load_hardware(hardware)
    sm = spec.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(gemm(m, n, k, DType.BF16))
    templates = catalogue_for(arch)
    assert templates is not None
    template = next(
        t
        for t in templates
        if t.cta == (128, 256, 64) and t.cluster == (1, 1) and t.split_k == 1 and t.runs(DType.BF16)
    )
    kernel = specialise(template, sm, problem)
    grid = grid_of(kernel, problem, sm, occupancy_of(kernel, problem, sm))
    l2 = int(spec.level("l2").shared_capacity_bytes)
    return kernel, grid, gemm_traffic(kernel, problem, grid, l2)


def test_rounds_read_their_panels_afresh() -> None:
    """2048 x 8192 x 4096 in 128 x 256 tiles on 132 SMs: 16 x 32 = 512 tiles in 512 / 132 =
    3.879 rounds; CUTLASS 3's swizzle is 8 (the smaller count, 16, is at least 6). A round
    touches min(16, 132 / 8 + 1) = 16 M-tiles, so A is read 3.879 times, and the 8 columns of
    132 / (16 x 8) + 1 = 2.031 stripes, 16.25 of the 32 N-tiles, so B 3.879 x 16.25 / 32 =
    1.970 times."""
    kernel, grid, traffic = _traffic(2048, 8192, 4096)
    assert kernel.producer_warps > 0 and grid.ctas_per_wave == 132
    assert (grid.tiles_m, grid.tiles_n) == (16, 32)
    rounds = 512 / 132
    assert traffic.a_dram_passes == pytest.approx(rounds)
    assert traffic.b_dram_passes == pytest.approx(rounds * 8 * (132 / 128 + 1) / 32)
    assert traffic.a_dram_bytes == round(2048 * 4096 * 2 * rounds)


def test_one_round_reads_each_operand_once() -> None:
    """1024 x 4096 x 4096: 8 x 16 = 128 tiles, fewer than the 132 resident CTAs."""
    _, _, traffic = _traffic(1024, 4096, 4096)
    assert (traffic.a_dram_passes, traffic.b_dram_passes) == (1.0, 1.0)


def test_non_persistent_kernels_keep_the_capacity_ramp() -> None:
    """An sm_80 (CUTLASS 2) kernel on the same problem has no producer warps: its passes
    follow the stripes and the capacity ramp, not the rounds."""
    spec = load_hardware("a100_80gb_sxm")
    sm = spec.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(gemm(2048, 8192, 4096, DType.BF16))
    templates = catalogue_for("sm80")
    assert templates is not None
    template = next(t for t in templates if t.cta[:2] == (128, 256) and t.split_k == 1)
    kernel = specialise(template, sm, problem)
    assert kernel.producer_warps == 0
    grid = grid_of(kernel, problem, sm, occupancy_of(kernel, problem, sm))
    traffic = gemm_traffic(kernel, problem, grid, int(spec.level("l2").shared_capacity_bytes))
    # 4 stripes of 8 N-tiles; A (16.8 MB) with a stripe's B and C (25 MB) overruns the 20 MB
    # shared L2, so A is read once per stripe; a stripe's 128 tiles take 128 / 108 waves, and
    # B survives the second in part (the ramp)
    assert traffic.a_dram_passes == 4.0
    assert 1.0 < traffic.b_dram_passes < 128 / 108
