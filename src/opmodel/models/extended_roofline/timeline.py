"""The K-stage pipeline timeline of one CTA wave, in closed form.

For the busiest SM of a wave (``r`` resident CTAs) in a wave of ``c`` concurrent CTAs sharing L2
and DRAM, one pipeline stage (one ``cta_tile_k`` slice for every resident CTA) takes

    t_math    = r * 2 * cta_m * cta_n * cta_k / R_math
    t_smem    = r * (fill + fragment reads) / R_smem
    t_l2      = c * (A + B bytes per CTA-stage) / R_l2
    t_dram    = c * (DRAM operand bytes per CTA-stage) / R_dram
    t_latency = ((1 - f_lat) * L_l2 + f_lat * L_dram) / (stages - 1)
    T_stage   = max(t_math, t_smem, t_l2, t_dram, t_latency)

(a multistage pipeline keeps ``stages - 1`` loads in flight, so it hides a load latency of up
to ``(stages - 1) * T_stage``). Bytes per CTA-stage are the kernel's L2 and DRAM operand bytes
over ``ctas * k_iterations``; ``f_lat`` is the share of stages that wait for DRAM latency,
``1 - (1 - f_A)(1 - f_B)`` over each operand's DRAM share of its L2 reads
(:attr:`~opmodel.models.gemm.traffic.GemmTraffic.stage_miss_fraction`), or 1 in a single-wave
kernel, whose CTAs all start cold. The
wave is ``prologue + k_iterations * T_stage + drain + epilogue``: the prologue waits one DRAM
latency (a CTA's first tiles are a cold start; charging the average latency instead would let
a bigger problem with better L2 reuse start faster) and fills ``stages - 1`` stages, the drain
is one MMA latency, the epilogue writes (and reads, when beta != 0) the C tiles and split-K
partials through L2 and on to DRAM, at the slower of the two. Waves of a warp-specialised kernel
(producer warps) overlap: each wave after the first starts under the previous wave's epilogue
(the model hides ``min(prologue, epilogue)`` per wave); other kernels' waves do not.
"""

from __future__ import annotations

from enum import StrEnum

from opmodel.core.values import FastValue, value_type
from opmodel.models.extended_roofline.rates import GpuRates
from opmodel.models.gemm import GemmKernel, GemmProblem, GemmTraffic, Grid
from opmodel.models.gemm.tile_bytes import KernelTiles, kernel_tiles

__all__ = ["StageLimiter", "WaveTimeline", "wave_timeline"]


class StageLimiter(StrEnum):
    """The term that sets the steady-state stage time."""

    MATH = "math"
    SMEM = "smem"
    L2 = "l2"
    DRAM = "dram"
    LATENCY = "latency"


@value_type
class WaveTimeline(FastValue):
    """Cycles of one wave on its busiest SM."""

    ctas_per_sm: int
    ctas_in_wave: int
    math_stage_cycles: float
    smem_stage_cycles: float
    l2_stage_cycles: float
    dram_stage_cycles: float
    latency_stage_cycles: float
    stage_cycles: float
    stage_limiter: StageLimiter
    prologue_cycles: float
    mainloop_cycles: float
    drain_cycles: float
    epilogue_cycles: float

    @property
    def total_cycles(self) -> float:
        """Prologue + mainloop + drain + epilogue."""
        return (
            self.prologue_cycles + self.mainloop_cycles + self.drain_cycles + self.epilogue_cycles
        )


@value_type
class StageWork(FastValue):
    """Per-CTA work of one pipeline stage and of the epilogue."""

    math_flops: int
    smem_bytes: int
    l2_bytes: float  # operand bytes one CTA requests from L2 per stage (kernel average)
    dram_bytes: float  # of which travel from DRAM (kernel average)
    latency_dram_fraction: float  # share of loads that wait for DRAM latency
    epilogue_l2_bytes: int
    epilogue_dram_bytes: float  # C writes, C reads and split-K partials per CTA (average)
    k_iterations: int
    stages: int


def stage_work(
    kernel: GemmKernel,
    problem: GemmProblem,
    traffic: GemmTraffic,
    grid: Grid,
    *,
    tiles: KernelTiles | None = None,
) -> StageWork:
    """The per-CTA work the timeline schedules (padded tiles, as the MMAs issue them).

    In a kernel of a single wave every CTA starts cold at once: CTAs sharing an operand tile
    all wait for its first DRAM fetch, so every load sees DRAM latency although the bytes
    travel from DRAM once. In longer kernels a stage waits on DRAM with the probability that
    either operand's tile misses (:attr:`GemmTraffic.stage_miss_fraction`). ``tiles``: the
    kernel's :func:`~opmodel.models.gemm.tile_bytes.kernel_tiles` when the caller has them cached.
    """
    if tiles is None:
        tiles = kernel_tiles(kernel, problem)
    wg_m, wg_n = tiles.read_groups_m, tiles.read_groups_n
    a_tile, b_tile, c_tile = tiles.a_bytes, tiles.b_bytes, tiles.c_bytes
    c_passes = 1 if problem.beta_zero else 2
    partials = 2 * kernel.cta_tile_m * kernel.cta_tile_n * 4 if kernel.split_k > 1 else 0
    cta_stages = grid.ctas * grid.k_iterations
    operand_dram = traffic.dram_read_bytes - traffic.c_read_bytes - traffic.workspace_bytes
    return StageWork.make(
        math_flops=2 * kernel.cta_tile_m * kernel.cta_tile_n * kernel.cta_tile_k,
        smem_bytes=(a_tile + b_tile) + (wg_n * a_tile + wg_m * b_tile),
        l2_bytes=(traffic.a_l2_bytes + traffic.b_l2_bytes) / cta_stages,
        # another kernel's dirty lines written back take DRAM bandwidth like the loads
        dram_bytes=(operand_dram + traffic.dirty_write_back_bytes) / cta_stages,
        latency_dram_fraction=1.0
        if grid.ctas <= grid.ctas_per_wave
        else traffic.stage_miss_fraction,
        epilogue_l2_bytes=c_passes * c_tile + partials,
        epilogue_dram_bytes=(
            traffic.dram_write_bytes + traffic.c_read_bytes + traffic.workspace_bytes
        )
        / grid.ctas,
        k_iterations=grid.k_iterations,
        stages=kernel.pipeline_stages,
    )


def wave_timeline(
    work: StageWork, rates: GpuRates, *, ctas_per_sm: int, ctas_in_wave: int
) -> WaveTimeline:
    """The wave's cycles (equations in the module docstring)."""
    r, c = ctas_per_sm, ctas_in_wave
    l2_rate, dram_rate = rates.l2_bytes_per_cycle, rates.dram_bytes_per_cycle
    f_lat = work.latency_dram_fraction
    load_latency = (1 - f_lat) * rates.l2_latency_cycles + f_lat * rates.dram_latency_cycles
    math = r * work.math_flops / rates.math_flops_per_cycle_per_sm
    smem = r * work.smem_bytes / rates.smem_bytes_per_cycle_per_sm
    l2 = c * work.l2_bytes / l2_rate
    dram = c * work.dram_bytes / dram_rate
    latency = load_latency / (work.stages - 1)
    stage, limiter = math, StageLimiter.MATH  # ties resolve in this order
    for value, name in (
        (smem, StageLimiter.SMEM),
        (l2, StageLimiter.L2),
        (dram, StageLimiter.DRAM),
        (latency, StageLimiter.LATENCY),
    ):
        if value > stage:
            stage, limiter = value, name
    fill = (work.stages - 1) * max(l2, dram)
    return WaveTimeline.make(
        ctas_per_sm=r,
        ctas_in_wave=c,
        math_stage_cycles=math,
        smem_stage_cycles=smem,
        l2_stage_cycles=l2,
        dram_stage_cycles=dram,
        latency_stage_cycles=latency,
        stage_cycles=stage,
        stage_limiter=limiter,
        prologue_cycles=rates.dram_latency_cycles + fill,
        mainloop_cycles=work.k_iterations * stage,
        drain_cycles=float(rates.tensor_latency_cycles),
        epilogue_cycles=max(
            c * work.epilogue_l2_bytes / l2_rate, c * work.epilogue_dram_bytes / dram_rate
        )
        + rates.l2_latency_cycles,
    )
