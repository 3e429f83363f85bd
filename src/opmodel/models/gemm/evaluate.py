"""Evaluate one GEMM kernel on one problem with the phase-aware model: cycles and energy.

Used by automatic kernel selection (to rank its shortlist) and by ``effective_roofline``.
Energy charges the padded MMA work the kernel issues, the bytes it moves at each modelled
level, and static power over the latency (docs/models/effective_roofline.md).
"""

from __future__ import annotations

from collections.abc import Mapping
from functools import cached_property
from typing import NamedTuple

from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.profile import LevelTraffic
from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.gemm.cta_work import CtaWork, LocalWork, cta_work, local_work
from opmodel.models.gemm.device import DeviceRates, device_rates
from opmodel.models.gemm.fast_cycles import kernel_cycles
from opmodel.models.gemm.kernel import GemmKernel
from opmodel.models.gemm.occupancy import Grid, Occupancy, grid_of, occupancy_of
from opmodel.models.gemm.phases import (
    KernelPhases,
    LocalStage,
    kernel_phases,
    local_stage,
)
from opmodel.models.gemm.problem import GemmProblem
from opmodel.models.gemm.tile_bytes import KernelTiles, kernel_tiles
from opmodel.models.gemm.traffic import GemmTraffic, gemm_traffic

__all__ = [
    "KernelEvaluation",
    "KernelSetup",
    "evaluate_at_clock",
    "evaluate_kernel",
    "kernel_setup",
    "memory_energy",
    "traffic_by_level",
]


@value_type
class KernelEvaluation(FastValue):
    """One kernel's predicted latency and energy on one problem; ``phases`` explains the
    latency and is built on first access (selection ranks many kernels but explains one)."""

    kernel: GemmKernel
    occupancy: Occupancy
    grid: Grid
    traffic: GemmTraffic
    rates: DeviceRates
    work: CtaWork
    total_cycles: float
    issued_flops: int  # padded MMA work the engine executes
    latency_s: float
    math_j: float
    memory_j: Mapping[str, float]
    static_j: float

    @cached_property
    def phases(self) -> KernelPhases:
        """The typed waves whose cycles sum to ``total_cycles``."""
        return kernel_phases(self.work, self.rates, self.grid, self.occupancy.resident_ctas_per_sm)

    @property
    def energy_j(self) -> float:
        """Math + memory + static energy."""
        return self.math_j + sum(self.memory_j.values()) + self.static_j


def traffic_by_level(t: GemmTraffic) -> Mapping[str, LevelTraffic]:
    """The kernel's bytes as ``OpProfile`` traffic: hbm, l2 and smem."""
    make = LevelTraffic.make
    workspace = t.workspace_bytes
    return FrozenDict(
        {
            "hbm": make(
                read_bytes=t.dram_read_bytes,
                write_bytes=t.dram_write_bytes + t.dirty_write_back_bytes,
            ),
            "l2": make(
                read_bytes=t.a_l2_bytes + t.b_l2_bytes + t.c_read_bytes + workspace,
                write_bytes=t.c_write_bytes + workspace,
            ),
            "smem": make(read_bytes=t.smem_read_bytes, write_bytes=t.smem_write_bytes),
        }
    )


def memory_energy(t: GemmTraffic, rates: DeviceRates) -> Mapping[str, float]:
    """Bytes x J/byte at each level of :func:`traffic_by_level` (reads plus writes)."""
    return FrozenDict(
        {
            "hbm": (t.dram_read_bytes + t.dram_write_bytes + t.dirty_write_back_bytes)
            * rates.dram_j_per_byte,
            "l2": (t.l2_read_bytes + t.l2_write_bytes) * rates.l2_j_per_byte,
            "smem": (t.smem_read_bytes + t.smem_write_bytes) * rates.smem_j_per_byte,
        }
    )


class KernelSetup(NamedTuple):
    """What depends on (hardware, kernel, dtypes) only: computed once and cached by callers."""

    kernel: GemmKernel
    occupancy: Occupancy
    local: LocalWork
    local_stages: tuple[LocalStage, ...]  # [c - 1]: one stage on an SM holding c CTAs
    tiles: KernelTiles
    rates: DeviceRates

    @property
    def full_local(self) -> LocalStage:
        """One pipeline stage on an SM holding ``resident`` CTAs."""
        return self.local_stages[-1]


def kernel_setup(kernel: GemmKernel, problem: GemmProblem, hardware: HardwareSpec) -> KernelSetup:
    """The setup of ``kernel`` for ``problem``'s dtypes on ``hardware``."""
    sm = hardware.compute.sm
    assert sm is not None
    occupancy = occupancy_of(kernel, problem, sm)
    local = local_work(kernel, problem)
    rates = device_rates(hardware, problem.compute_dtype, kernel.instruction)
    stages = tuple(
        local_stage(local, rates, ctas) for ctas in range(1, occupancy.resident_ctas_per_sm + 1)
    )
    return KernelSetup(kernel, occupancy, local, stages, kernel_tiles(kernel, problem), rates)


def evaluate_kernel(
    kernel: GemmKernel,
    problem: GemmProblem,
    hardware: HardwareSpec,
    setup: KernelSetup | None = None,
) -> KernelEvaluation:
    """Cycles, latency and energy of ``kernel`` on ``problem`` (``setup`` when cached)."""
    sm = hardware.compute.sm
    assert sm is not None
    if setup is None:
        setup = kernel_setup(kernel, problem, hardware)
    grid = grid_of(kernel, problem, sm, setup.occupancy)
    traffic = gemm_traffic(kernel, problem, grid, setup.rates.l2_capacity_bytes, tiles=setup.tiles)
    work = cta_work(kernel, problem, traffic, grid, local=setup.local)
    return _evaluation(kernel, setup, grid, traffic, work)


def evaluate_at_clock(e: KernelEvaluation, setup: KernelSetup) -> KernelEvaluation:
    """``e``, an evaluation on one clock of a device, again on another clock of it whose
    :func:`kernel_setup` of ``e``'s kernel is ``setup`` (a power-limited clock): the grid,
    the traffic and the per-CTA work depend on the kernel, the problem and the device's
    limits, not on the clock, and are kept; the cycles and energies are evaluated anew."""
    return _evaluation(e.kernel, setup, e.grid, e.traffic, e.work)


def _evaluation(
    kernel: GemmKernel, setup: KernelSetup, grid: Grid, traffic: GemmTraffic, work: CtaWork
) -> KernelEvaluation:
    """The evaluation of ``kernel`` (``setup``'s) with its grid, traffic and per-CTA work."""
    rates, occ = setup.rates, setup.occupancy
    cycles = kernel_cycles(
        work, rates, grid, occ.resident_ctas_per_sm, local_stages=setup.local_stages
    )
    latency = cycles / rates.clock_hz
    local = work.local
    issued = round(grid.ctas * grid.k_iterations * local.math_flops_per_warp * local.math_warps)
    return KernelEvaluation.make(
        kernel=kernel,
        occupancy=occ,
        grid=grid,
        traffic=traffic,
        rates=rates,
        work=work,
        total_cycles=cycles,
        issued_flops=issued,
        latency_s=latency,
        math_j=issued * rates.math_j_per_flop,
        memory_j=memory_energy(traffic, rates),
        static_j=rates.busy_w * latency,
    )
