"""Typed diagnostics of ``effective_roofline`` for GPU GEMMs: phases, rates, limits, selection."""

from __future__ import annotations

from dataclasses import field
from enum import StrEnum
from functools import cached_property
from typing import ClassVar

from opmodel.core.values import FastValue, value_type
from opmodel.models.gemm import GemmKernel, GemmTraffic, Grid, Occupancy
from opmodel.models.gemm.evaluate import KernelEvaluation
from opmodel.models.gemm.phases import KernelPhases, WavePhases
from opmodel.models.gemm.selection import KernelSelection

__all__ = [
    "RESOURCE_TIE_TOLERANCE",
    "EffectiveRooflineDiagnostics",
    "Resource",
    "ResourceCycles",
    "limiting_resources",
    "resource_cycles",
]

RESOURCE_TIE_TOLERANCE = 0.02  # resources within 2 % of the largest are reported as tied


class Resource(StrEnum):
    """What a GEMM kernel's cycles are spent on."""

    MATH = "math"
    SMEM = "smem"
    L2 = "l2"
    DRAM = "dram"
    PROLOGUE = "prologue"
    EPILOGUE = "epilogue"
    FIXED_OVERHEAD = "fixed_overhead"


@value_type
class ResourceCycles(FastValue):
    """Kernel cycles each resource needs on its own (busiest SM for math and SMEM)."""

    math_cycles: float
    smem_cycles: float
    l2_cycles: float
    dram_cycles: float
    prologue_cycles: float
    epilogue_cycles: float
    fixed_overhead_cycles: float


def _waves(phases: KernelPhases) -> list[tuple[WavePhases, int]]:
    waves = [(phases.first_wave, 1)]
    if phases.steady_wave is not None:
        waves.append((phases.steady_wave, phases.steady_waves))
    if phases.tail_wave is not None:
        waves.append((phases.tail_wave, 1))
    return waves


def resource_cycles(phases: KernelPhases, k_iterations: int) -> ResourceCycles:
    """Sum over waves of each resource's stage cycles times the K iterations."""
    waves = _waves(phases)
    return ResourceCycles.make(
        math_cycles=sum(n * k_iterations * w.tensor_stage_cycles for w, n in waves),
        smem_cycles=sum(n * k_iterations * w.smem_stage_cycles for w, n in waves),
        l2_cycles=sum(n * k_iterations * w.l2_stage_cycles for w, n in waves),
        dram_cycles=sum(n * k_iterations * w.dram_stage_cycles for w, n in waves),
        prologue_cycles=sum(n * w.prologue_cycles for w, n in waves),
        epilogue_cycles=sum(n * w.epilogue_cycles for w, n in waves),
        fixed_overhead_cycles=float(phases.fixed_overhead_cycles),
    )


def limiting_resources(cycles: ResourceCycles) -> tuple[Resource, ...]:
    """Every resource within ``RESOURCE_TIE_TOLERANCE`` of the largest, largest first."""
    values = {
        Resource.MATH: cycles.math_cycles,
        Resource.SMEM: cycles.smem_cycles,
        Resource.L2: cycles.l2_cycles,
        Resource.DRAM: cycles.dram_cycles,
        Resource.PROLOGUE: cycles.prologue_cycles,
        Resource.EPILOGUE: cycles.epilogue_cycles,
        Resource.FIXED_OVERHEAD: cycles.fixed_overhead_cycles,
    }
    top = max(values.values())
    tied = [r for r, v in values.items() if v >= (1 - RESOURCE_TIE_TOLERANCE) * top]
    return tuple(sorted(tied, key=lambda r: -values[r]))


@value_type
class EffectiveRooflineDiagnostics(FastValue):
    """Why ``effective_roofline`` gave its number for a GPU GEMM.

    ``phases``, ``resource_cycles`` and ``limiting_resources`` are computed from the kernel's
    evaluation on first access (and when serialised): a sweep that reads only latencies never
    pays for building them.
    """

    json_properties: ClassVar[tuple[str, ...]] = (
        "phases",
        "resource_cycles",
        "limiting_resources",
    )
    kernel: GemmKernel
    selection: KernelSelection | None  # None when the op's attrs gave the kernel
    occupancy: Occupancy
    grid: Grid
    traffic: GemmTraffic
    total_cycles: float
    tile_efficiency: float  # useful over issued MMA work (edge tiles and K padding)
    issued_flops: int  # padded MMA work, which energy is charged for
    useful_flops_per_s: float
    sm_clock_hz: float  # the clock the kernel ran at (below the config's under a power limit)
    tensor_activity: float  # issued MMA FLOPs / tensor peak x time, at the config's clock
    evaluation: KernelEvaluation = field(repr=False, compare=False)

    @cached_property
    def phases(self) -> KernelPhases:
        """The first, steady and tail waves whose cycles sum to ``total_cycles``."""
        return self.evaluation.phases

    @cached_property
    def resource_cycles(self) -> ResourceCycles:
        """Kernel cycles each resource needs on its own."""
        return resource_cycles(self.phases, self.grid.k_iterations)

    @cached_property
    def limiting_resources(self) -> tuple[Resource, ...]:
        """Every resource within ``RESOURCE_TIE_TOLERANCE`` of the largest."""
        return limiting_resources(self.resource_cycles)
