"""Typed diagnostics of ``extended_roofline``: utilisation, overlaps and bottlenecks."""

from __future__ import annotations

from enum import StrEnum

from opmodel.core.values import FastValue, value_type
from opmodel.models.extended_roofline.timeline import WaveTimeline
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


@value_type
class ExtendedRooflineDiagnostics(FastValue):
    """Why ``extended_roofline`` gave its number."""

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
    utilization: Utilization
    overlaps: Overlaps
    primary_bottleneck: Bottleneck
    secondary_bottleneck: Bottleneck


def rank_bottlenecks(scores: dict[Bottleneck, float]) -> tuple[Bottleneck, Bottleneck]:
    """The two largest cycle shares (ties keep the enum order)."""
    ranked = sorted(scores, key=scores.__getitem__, reverse=True)
    return ranked[0], ranked[1]
