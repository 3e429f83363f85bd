"""What one CTA of a GEMM kernel does per pipeline stage and in its epilogue.

:func:`local_work` is the CTA's math and shared-memory work per ``cta_tile_k`` stage (a
function of the kernel and the dtypes alone, cached by callers); :func:`cta_work` adds the
L2 and DRAM bytes the traffic model (:mod:`opmodel.models.gemm.traffic`) gives the whole
kernel, spread over its CTAs and stages, and the epilogue's bytes. The wave timing of
:mod:`opmodel.models.gemm.phases` reads both.
"""

from __future__ import annotations

from opmodel.core.values import FastValue, value_type
from opmodel.models.gemm.kernel import GemmKernel
from opmodel.models.gemm.occupancy import Grid
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.tile_bytes import smem_tile_bytes
from opmodel.models.gemm.traffic import SPLIT_K_PARTIAL_BITS, GemmTraffic

__all__ = ["CtaWork", "LocalWork", "cta_work", "local_work"]


@value_type
class LocalWork(FastValue):
    """What one CTA asks of its SM per pipeline stage (a function of kernel and dtypes)."""

    math_flops_per_warp: float  # padded MMA (or FMA) work of one math warp per stage
    mma_flops_in_flight_per_warp: float  # independent MMAs of one k-step
    math_warps: int
    smem_bytes: float  # operand fill + fragment reads per stage
    smem_in_flight_per_warp: float


def local_work(kernel: GemmKernel, problem: GemmProblem) -> LocalWork:
    """Per-stage math and shared-memory work of one CTA of ``kernel``."""
    groups_m, groups_n = kernel.operand_read_groups
    a_tile, b_tile = smem_tile_bytes(kernel, problem)
    smem = (a_tile + b_tile) + (groups_n * a_tile + groups_m * b_tile)
    math_warps = kernel.math_warps
    return LocalWork.make(
        math_flops_per_warp=2
        * kernel.cta_tile_m
        * kernel.cta_tile_n
        * kernel.cta_tile_k
        / math_warps,
        mma_flops_in_flight_per_warp=2 * kernel.warp_tile_m * kernel.warp_tile_n * kernel.mma_k,
        math_warps=math_warps,
        smem_bytes=smem,
        smem_in_flight_per_warp=smem / math_warps,
    )


@value_type
class CtaWork(FastValue):
    """What one CTA does per pipeline stage, and in its epilogue (kernel averages)."""

    local: LocalWork
    l2_bytes: float  # operand bytes requested from L2 per stage
    dram_bytes: float  # of which travel from DRAM
    dram_fraction: float  # share of L2 requests that miss to DRAM
    epilogue_l2_bytes: float
    epilogue_dram_bytes: float
    reads_c: bool
    split_k: int
    k_iterations: int
    window_stages: int
    dram_write_back_bytes: float = 0.0  # per CTA and stage: another kernel's dirty lines
    # warp-specialised kernels (producer warps): the next tile's prologue runs under this
    # tile's epilogue (module docstring)
    overlap_epilogue: bool = False


def cta_work(
    kernel: GemmKernel,
    problem: GemmProblem,
    traffic: GemmTraffic,
    grid: Grid,
    *,
    local: LocalWork | None = None,
) -> CtaWork:
    """The per-CTA work of ``kernel`` on ``problem`` (padded tiles, as the MMAs issue them;
    ``local`` when the caller has it cached)."""
    c_tile_bytes = int(kernel.cta_tile_m * kernel.cta_tile_n * problem.c_bits // 8)
    cta_stages = grid.ctas * grid.k_iterations
    operand_dram = (
        traffic.dram_read_bytes - traffic.c_read_bytes - traffic.workspace_bytes
    ) / cta_stages
    l2 = (traffic.a_l2_bytes + traffic.b_l2_bytes) / cta_stages
    split_k = kernel.split_k
    epilogue_l2 = c_tile_bytes if problem.beta_zero else 2 * c_tile_bytes
    if split_k > 1:  # each slice but the last writes fp32 partials and one reads them back
        epilogue_l2 += 2 * (kernel.cta_tile_m * kernel.cta_tile_n * SPLIT_K_PARTIAL_BITS // 8)
    fraction = operand_dram / l2 if l2 else 0.0
    return CtaWork.make(
        local=local or local_work(kernel, problem),
        l2_bytes=l2,
        dram_bytes=operand_dram,
        dram_fraction=fraction if fraction < 1.0 else 1.0,
        epilogue_l2_bytes=epilogue_l2,
        epilogue_dram_bytes=(
            traffic.dram_write_bytes + traffic.c_read_bytes + traffic.workspace_bytes
        )
        / grid.ctas,
        reads_c=not problem.beta_zero,
        split_k=split_k,
        k_iterations=grid.k_iterations,
        window_stages=min(kernel.pipeline_stages - 1, grid.k_iterations),
        dram_write_back_bytes=traffic.dirty_write_back_bytes / cta_stages,
        overlap_epilogue=kernel.producer_warps > 0,
    )
