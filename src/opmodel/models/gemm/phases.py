"""The phase-aware per-wave GEMM model of ``effective_roofline`` (closed form, no CTA loops).

A wave of ``c`` CTAs is placed on the SMs in occupancy classes; its busiest class sets the
wave's time. Per pipeline stage (one ``cta_tile_k`` slice of every CTA):

    local stage  = max(t_tensor, t_smem)                          on the busiest SM
    t_tensor     = warps_smsp * flops_per_warp / rate_tensor       busiest SMSP
    rate_tensor  = min(peak_smsp, warps_smsp * mma_in_flight / L_mma)
    t_smem       = ctas_sm * smem_bytes / min(peak_sm, warps_sm * smem_in_flight / L_smem)
    memory stage = max over L2, DRAM of c * bytes / rate_level     (device-wide)
    rate_level   = peak * 2 q / ((1 + q) + sqrt(1 + q^2))            window = stages - 1
    q            = c * window * bytes / (L_level * peak)             (loaded_rate)

and the wave is ``prologue + body + epilogue``: the prologue lands the first window of every
CTA; the body overlaps ``k`` local stages with the remaining ``k - window`` memory stages
(``max(k * local, (k - window) * memory + local)``, the last local stage waiting for its
data); the epilogue stores C (and reads it when beta != 0, and passes split-K partials
serially) at ``max(L_l2, bytes / peak)``. The first wave starts cold (every load waits for
DRAM latency); later waves see the kernel's DRAM share of L2 requests. Kernel cycles are
``first + (full_waves - 1) * steady + tail + fixed overhead``. A warp-specialised kernel
(``producer_warps``: CUTLASS 3 / cuBLAS persistent sm_90 and sm_100 kernels, whose producer
warps load the next tile while the consumers store this one, with asynchronous TMA stores)
overlaps each wave's prologue with the epilogue of the wave before: every wave after the
first takes ``min(prologue, previous epilogue)`` cycles less. docs/models/effective_roofline.md.
"""

from __future__ import annotations

from typing import NamedTuple

from opmodel.core.values import FastValue, value_type
from opmodel.models.gemm.concurrency import (
    LevelStream,
    MemoryPhases,
    OccupancyClass,
    concurrency_limited_rate,
    memory_phases,
    occupancy_classes,
    smsp_warps,
)
from opmodel.models.gemm.cta_work import CtaWork, LocalWork
from opmodel.models.gemm.device import DeviceRates
from opmodel.models.gemm.occupancy import Grid
from opmodel.models.gemm.warp_specialised import hidden_cycles, overlap_dram_bytes

__all__ = [
    "EffectiveRates",
    "KernelPhases",
    "LocalStage",
    "WaveNumbers",
    "WavePhases",
    "busiest_ctas_per_sm",
    "epilogue_cycles",
    "kernel_phases",
    "local_stage",
    "wave_numbers",
    "wave_phases",
]


@value_type
class EffectiveRates(FastValue):
    """Raw peaks and the concurrency-limited rates one wave achieves (per cycle)."""

    tensor_raw_flops_per_cycle_per_smsp: float
    tensor_flops_per_cycle_per_smsp: float
    smem_raw_bytes_per_cycle_per_sm: float
    smem_bytes_per_cycle_per_sm: float
    l2_raw_bytes_per_cycle: float
    l2_bytes_per_cycle: float
    dram_raw_bytes_per_cycle: float
    dram_bytes_per_cycle: float


@value_type
class WavePhases(FastValue):
    """One wave: placement, rates, per-stage service and phase cycles on its busiest SM."""

    ctas: int
    cold: bool
    classes: tuple[OccupancyClass, ...]
    busiest_smsp_warps: int
    active_smsps: int
    rates: EffectiveRates
    window_stages: int
    memory_window_bytes: float  # bytes the whole wave keeps in flight from L2
    tensor_stage_cycles: float
    smem_stage_cycles: float
    l2_stage_cycles: float
    dram_stage_cycles: float
    prologue_cycles: float
    body_cycles: float
    epilogue_cycles: float

    @property
    def total_cycles(self) -> float:
        """Prologue + body + epilogue."""
        return self.prologue_cycles + self.body_cycles + self.epilogue_cycles


class LocalStage(NamedTuple):
    """One stage of every CTA on one SM: cycles and achieved rates."""

    tensor_cycles: float
    smem_cycles: float
    tensor_flops_per_cycle_per_smsp: float
    smem_bytes_per_cycle_per_sm: float
    busiest_smsp_warps: int
    active_smsps: int


def local_stage(w: LocalWork, r: DeviceRates, ctas_per_sm: int) -> LocalStage:
    """Tensor and SMEM time of one stage on an SM holding ``ctas_per_sm`` CTAs."""
    placement = smsp_warps(ctas_per_sm, w.math_warps, r.smsps_per_sm)
    busiest = placement.busiest
    tensor_rate = concurrency_limited_rate(
        r.math_flops_per_cycle_per_smsp,
        busiest * w.mma_flops_in_flight_per_warp,
        r.math_latency_cycles,
    )
    smem_rate = concurrency_limited_rate(
        r.smem_bytes_per_cycle_per_sm,
        ctas_per_sm * w.math_warps * w.smem_in_flight_per_warp,
        r.smem_latency_cycles,
    )
    return LocalStage(
        busiest * w.math_flops_per_warp / tensor_rate,
        ctas_per_sm * w.smem_bytes / smem_rate,
        tensor_rate,
        smem_rate,
        busiest,
        placement.active_smsps,
    )


def epilogue_cycles(w: CtaWork, r: DeviceRates, ctas: int) -> float:
    """Posted stores: ``max(L_l2, bytes / peak)`` per level, plus a C read and the split-K
    semaphore chain (one L2 round trip per extra slice)."""
    store = max(
        r.l2_latency_cycles,
        ctas * w.epilogue_l2_bytes / r.l2_bytes_per_cycle,
        ctas * w.epilogue_dram_bytes / r.dram_bytes_per_cycle,
    )
    read_c = r.dram_latency_cycles if w.reads_c else 0.0
    return store + read_c + (w.split_k - 1) * r.l2_latency_cycles


class WaveNumbers(NamedTuple):
    """Every number of one wave, without the typed wrappers (the hot path's result)."""

    local: LocalStage
    l2: MemoryPhases
    dram: MemoryPhases
    prologue_cycles: float
    body_cycles: float
    epilogue_cycles: float

    @property
    def total_cycles(self) -> float:
        """Prologue + body + epilogue."""
        return self.prologue_cycles + self.body_cycles + self.epilogue_cycles


def busiest_ctas_per_sm(ctas: int, sm_count: int, resident: int) -> int:
    """``ceil(min(ctas, S r) / S)``: the CTAs on the busiest SM of a wave, the first class of
    :func:`~opmodel.models.gemm.concurrency.occupancy_classes`."""
    return -(-min(ctas, sm_count * resident) // sm_count)


def wave_numbers(
    w: CtaWork, r: DeviceRates, *, ctas: int, local: LocalStage, cold: bool
) -> WaveNumbers:
    """The numbers of one wave of ``ctas`` CTAs whose busiest SM runs ``local`` (equations in
    the module docstring)."""
    f_lat = 1.0 if cold else w.dram_fraction
    l2_latency = (1 - f_lat) * r.l2_latency_cycles + f_lat * r.dram_latency_cycles
    k, window = w.k_iterations, w.window_stages
    l2 = memory_phases(
        LevelStream(ctas, w.l2_bytes, r.l2_bytes_per_cycle, l2_latency),
        stage_equivalents=k,
        window_stages=window,
        loaded=True,
    )
    dram = memory_phases(
        LevelStream(
            ctas,
            w.dram_bytes,
            r.dram_bytes_per_cycle,
            r.dram_latency_cycles,
            w.dram_write_back_bytes,
        ),
        stage_equivalents=k,
        window_stages=window,
        loaded=True,
    )
    stage = max(local.tensor_cycles, local.smem_cycles)
    return WaveNumbers(
        local,
        l2,
        dram,
        max(l2.prologue_cycles, dram.prologue_cycles),
        max(k * stage, max(l2.body_cycles, dram.body_cycles) + stage),
        epilogue_cycles(w, r, ctas),
    )


def wave_phases(w: CtaWork, r: DeviceRates, *, ctas: int, resident: int, cold: bool) -> WavePhases:
    """The typed phases of one wave (the numbers of :func:`wave_numbers`, explained)."""
    heavy = busiest_ctas_per_sm(ctas, r.sm_count, resident)
    n = wave_numbers(w, r, ctas=ctas, local=local_stage(w.local, r, heavy), cold=cold)
    local, l2, dram = n.local, n.l2, n.dram
    return WavePhases.make(
        ctas=ctas,
        cold=cold,
        classes=occupancy_classes(ctas, r.sm_count, resident),
        busiest_smsp_warps=local.busiest_smsp_warps,
        active_smsps=local.active_smsps,
        rates=EffectiveRates.make(
            tensor_raw_flops_per_cycle_per_smsp=r.math_flops_per_cycle_per_smsp,
            tensor_flops_per_cycle_per_smsp=local.tensor_flops_per_cycle_per_smsp,
            smem_raw_bytes_per_cycle_per_sm=r.smem_bytes_per_cycle_per_sm,
            smem_bytes_per_cycle_per_sm=local.smem_bytes_per_cycle_per_sm,
            l2_raw_bytes_per_cycle=r.l2_bytes_per_cycle,
            l2_bytes_per_cycle=l2.rate_per_cycle,
            dram_raw_bytes_per_cycle=r.dram_bytes_per_cycle,
            dram_bytes_per_cycle=dram.rate_per_cycle,
        ),
        window_stages=w.window_stages,
        memory_window_bytes=ctas * w.window_stages * w.l2_bytes,
        tensor_stage_cycles=local.tensor_cycles,
        smem_stage_cycles=local.smem_cycles,
        l2_stage_cycles=ctas * w.l2_bytes / l2.rate_per_cycle if w.l2_bytes else 0.0,
        dram_stage_cycles=(dram.prologue_cycles + dram.body_cycles) / w.k_iterations
        if w.dram_bytes
        else 0.0,
        prologue_cycles=n.prologue_cycles,
        body_cycles=n.body_cycles,
        epilogue_cycles=n.epilogue_cycles,
    )


@value_type
class KernelPhases(FastValue):
    """The waves of a kernel: the cold first wave, the steady full waves, the tail."""

    first_wave: WavePhases
    steady_wave: WavePhases | None  # present when there are two or more full waves
    tail_wave: WavePhases | None  # present when a partial wave follows full ones
    steady_waves: int
    fixed_overhead_cycles: int
    # warp-specialised kernels: prologue cycles hidden under the previous wave's epilogue
    overlapped_cycles: float = 0.0

    @property
    def waves_cycles(self) -> float:
        """``first + steady_waves * steady + tail - overlapped``."""
        steady = self.steady_wave.total_cycles * self.steady_waves if self.steady_wave else 0.0
        tail = self.tail_wave.total_cycles if self.tail_wave else 0.0
        return self.first_wave.total_cycles + steady + tail - self.overlapped_cycles

    @property
    def total_cycles(self) -> float:
        """All waves plus the fixed device overhead."""
        return self.waves_cycles + self.fixed_overhead_cycles


def kernel_phases(w: CtaWork, r: DeviceRates, grid: Grid, resident: int) -> KernelPhases:
    """Evaluate at most three waves (first, one steady, tail): no loop over waves or CTAs."""
    full, tail = grid.full_waves, grid.tail_ctas
    first_ctas = grid.ctas_per_wave if full else tail
    first = wave_phases(w, r, ctas=first_ctas, resident=resident, cold=True)
    steady = (
        wave_phases(w, r, ctas=grid.ctas_per_wave, resident=resident, cold=False)
        if full > 1
        else None
    )
    tail_wave = (
        wave_phases(w, r, ctas=tail, resident=resident, cold=False) if full and tail else None
    )
    overlapped = 0.0
    if w.overlap_epilogue:  # every wave after the first starts under a full wave's epilogue
        full_ctas, epilogue, peak = (
            grid.ctas_per_wave,
            first.epilogue_cycles,
            r.dram_bytes_per_cycle,
        )
        if steady is not None:
            joint = overlap_dram_bytes(w, full_ctas, full_ctas)
            overlapped += (full - 1) * hidden_cycles(steady.prologue_cycles, epilogue, joint, peak)
        if tail_wave is not None:
            joint = overlap_dram_bytes(w, tail, full_ctas)
            overlapped += hidden_cycles(tail_wave.prologue_cycles, epilogue, joint, peak)
    return KernelPhases.make(
        first_wave=first,
        steady_wave=steady,
        tail_wave=tail_wave,
        steady_waves=max(0, full - 1),
        fixed_overhead_cycles=r.fixed_overhead_cycles,
        overlapped_cycles=overlapped,
    )
