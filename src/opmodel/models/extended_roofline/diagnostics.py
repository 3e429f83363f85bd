"""Typed diagnostics of ``extended_roofline``: utilisation, overlaps and bottlenecks.

The utilisation, the overlaps and the two bottlenecks are derived from the waves on first
access (and when the profile is serialised): a sweep that reads only latencies never pays for
them.
"""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from functools import cached_property
from typing import ClassVar, NamedTuple

from opmodel.core.values import FastValue, value_type
from opmodel.models.extended_roofline.rates import GpuRates
from opmodel.models.extended_roofline.timeline import StageLimiter, WaveTimeline
from opmodel.models.gemm import GemmKernel, GemmTraffic, Grid, Occupancy

__all__ = [
    "Bottleneck",
    "ExtendedRooflineDiagnostics",
    "Overlaps",
    "Utilization",
    "rank_bottlenecks",
]


class Bottleneck(StrEnum):
    """Where a GEMM kernel's cycles go."""

    COMPUTE = "compute"
    SMEM = "smem"
    L2 = "l2"
    DRAM = "dram"
    LATENCY_EXPOSED = "latency_exposed"
    INSUFFICIENT_WAVES = "insufficient_waves"
    EDGE_TILE_LOSS = "edge_tile_loss"
    EPILOGUE = "epilogue"
    FIXED_OVERHEAD = "fixed_overhead"


@value_type
class Utilization(FastValue):
    """Active fraction of the kernel's cycles per resource (busiest SM for math and SMEM)."""

    math_fraction: float
    smem_fraction: float
    l2_fraction: float
    dram_fraction: float


@value_type
class Overlaps(FastValue):
    """Share of each memory resource's mainloop time that runs under math work (0..1)."""

    math_smem_fraction: float
    math_l2_fraction: float
    math_dram_fraction: float


class KernelSums(NamedTuple):
    """``full_waves * full + tail`` of each wave quantity, in cycles (absent waves count 0)."""

    math_stage: float
    smem_stage: float
    l2_stage: float
    dram_stage: float
    latency_stage: float
    stage: float
    epilogue: float


_NO_WAVE = WaveTimeline(
    ctas_per_sm=0,
    ctas_in_wave=0,
    math_stage_cycles=0.0,
    smem_stage_cycles=0.0,
    l2_stage_cycles=0.0,
    dram_stage_cycles=0.0,
    latency_stage_cycles=0.0,
    stage_cycles=0.0,
    stage_limiter=StageLimiter.MATH,
    prologue_cycles=0.0,
    mainloop_cycles=0.0,
    drain_cycles=0.0,
    epilogue_cycles=0.0,
)


def kernel_sums(
    full_waves: int, full: WaveTimeline | None, tail: WaveTimeline | None
) -> KernelSums:
    """Each wave quantity over the kernel: ``full_waves`` full waves and the tail."""
    w, f, t = full_waves, full or _NO_WAVE, tail or _NO_WAVE
    return KernelSums(
        w * f.math_stage_cycles + t.math_stage_cycles,
        w * f.smem_stage_cycles + t.smem_stage_cycles,
        w * f.l2_stage_cycles + t.l2_stage_cycles,
        w * f.dram_stage_cycles + t.dram_stage_cycles,
        w * f.latency_stage_cycles + t.latency_stage_cycles,
        w * f.stage_cycles + t.stage_cycles,
        w * f.epilogue_cycles + t.epilogue_cycles,
    )


@value_type
class ExtendedRooflineDiagnostics(FastValue):
    """Why ``extended_roofline`` gave its number (``utilization``, ``overlaps`` and the
    bottlenecks are computed on first access)."""

    json_properties: ClassVar[tuple[str, ...]] = (
        "sm_clock_hz",
        "utilization",
        "overlaps",
        "primary_bottleneck",
        "secondary_bottleneck",
    )
    kernel: GemmKernel
    occupancy: Occupancy
    grid: Grid
    traffic: GemmTraffic
    full_wave: WaveTimeline | None
    tail_wave: WaveTimeline | None
    fixed_overhead_cycles: int
    total_cycles: float
    issued_flops: int
    useful_flops_per_s: float
    rates: GpuRates = field(repr=False, compare=False)
    # warp-specialised kernels: prologue cycles hidden under the previous wave's epilogue
    overlapped_cycles: float = 0.0

    @property
    def sm_clock_hz(self) -> float:
        """The SM clock the cycles run at (below the config's under a power-limited clock)."""
        return self.rates.clock_hz

    @cached_property
    def sums(self) -> KernelSums:
        """Each wave quantity summed over the kernel's waves."""
        return kernel_sums(self.grid.full_waves, self.full_wave, self.tail_wave)

    @cached_property
    def utilization(self) -> Utilization:
        """Active fraction of the kernel's cycles per resource."""
        k, t, r, total = self.grid.k_iterations, self.traffic, self.rates, self.total_cycles
        sums = self.sums
        return Utilization.make(
            math_fraction=k * sums.math_stage / total,
            smem_fraction=k * sums.smem_stage / total,
            l2_fraction=min(
                1.0, (t.l2_read_bytes + t.l2_write_bytes) / (r.l2_bytes_per_cycle * total)
            ),
            dram_fraction=min(
                1.0, (t.dram_read_bytes + t.dram_write_bytes) / (r.dram_bytes_per_cycle * total)
            ),
        )

    @cached_property
    def overlaps(self) -> Overlaps:
        """Share of each memory resource's stage time hidden under math, in the full wave (the
        tail when there is none)."""
        wave = self.full_wave or self.tail_wave
        assert wave is not None

        def hidden(busy: float) -> float:
            return min(wave.math_stage_cycles, busy) / busy if busy else 1.0

        return Overlaps.make(
            math_smem_fraction=hidden(wave.smem_stage_cycles),
            math_l2_fraction=hidden(wave.l2_stage_cycles),
            math_dram_fraction=hidden(wave.dram_stage_cycles),
        )

    @cached_property
    def _ranked(self) -> tuple[Bottleneck, Bottleneck]:
        return rank_bottlenecks(self.bottleneck_cycles)

    @property
    def bottleneck_cycles(self) -> dict[Bottleneck, float]:
        """Kernel cycles attributed to each bottleneck."""
        k, grid, sums, total = self.grid.k_iterations, self.grid, self.sums, self.total_cycles
        math = k * sums.math_stage
        exposed = sums.stage > sums.math_stage
        return {
            Bottleneck.COMPUTE: math,
            Bottleneck.SMEM: k * sums.smem_stage,
            Bottleneck.L2: k * sums.l2_stage,
            Bottleneck.DRAM: k * sums.dram_stage,
            Bottleneck.LATENCY_EXPOSED: k * sums.latency_stage if exposed else 0.0,
            Bottleneck.INSUFFICIENT_WAVES: total * (1 - grid.wave_efficiency),
            Bottleneck.EDGE_TILE_LOSS: math * (1 - grid.edge_efficiency * grid.k_efficiency),
            Bottleneck.EPILOGUE: sums.epilogue,
            Bottleneck.FIXED_OVERHEAD: float(self.fixed_overhead_cycles),
        }

    @property
    def primary_bottleneck(self) -> Bottleneck:
        """The largest cycle share."""
        return self._ranked[0]

    @property
    def secondary_bottleneck(self) -> Bottleneck:
        """The second largest cycle share."""
        return self._ranked[1]


def rank_bottlenecks(scores: dict[Bottleneck, float]) -> tuple[Bottleneck, Bottleneck]:
    """The two largest cycle shares (ties keep the enum order)."""
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    return ranked[0], ranked[1]
