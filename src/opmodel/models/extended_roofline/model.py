"""``extended_roofline``: a K-stage pipeline timeline per CTA wave for GEMM and batched GEMM.

``cycles = full_waves * wave(resident, all SMs) + wave(tail CTAs per SM, tail SMs) + fixed``,
each wave from :mod:`opmodel.models.extended_roofline.timeline`; traffic, occupancy and the
kernel from the shared GEMM machinery (:mod:`opmodel.models.gemm`): the op's kernel attrs, or,
when it gives none, the kernel automatic selection picks (:mod:`opmodel.models.gemm.choice`).
Non-GEMM ops, and GEMMs on hardware without SM structure (TPUs), use the shared roofline
estimate. Equations:
docs/models/extended_roofline.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from types import MappingProxyType
from typing import NamedTuple

from opmodel.core.enums import Engine, OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.extended_roofline.diagnostics import (
    Bottleneck,
    ExtendedRooflineDiagnostics,
    Overlaps,
    Utilization,
    rank_bottlenecks,
)
from opmodel.models.extended_roofline.rates import GpuRates, gpu_rates
from opmodel.models.extended_roofline.timeline import (
    StageLimiter,
    StageWork,
    WaveTimeline,
    stage_work,
    wave_timeline,
)
from opmodel.models.gemm import (
    GemmKernel,
    GemmProblem,
    GemmTraffic,
    Grid,
    Occupancy,
    build_kernel,
    gemm_traffic,
    grid_of,
    occupancy_of,
)
from opmodel.models.gemm.choice import KERNEL_ATTRS, choose_kernel
from opmodel.models.gemm.evaluate import traffic_by_level
from opmodel.models.registry import register_model
from opmodel.models.shared.arguments import check_predict_arguments
from opmodel.models.shared.memo import per_op_and_hardware
from opmodel.models.shared.roofline_estimate import roofline_estimate

__all__ = ["ExtendedRooflineModel"]

_GEMM_KINDS = frozenset({OpKind.GEMM, OpKind.BATCHED_GEMM})
_FALLBACK = {
    Engine.TENSOR: "extended_roofline/roofline-tensor",
    Engine.VECTOR: "extended_roofline/roofline-vector",
    Engine.MEMORY: "extended_roofline/roofline-memory",
}


@dataclass(frozen=True, slots=True, kw_only=True)
class _Setup:
    """Everything about one (GEMM op, GPU) pair that does not depend on the wave schedule."""

    problem: GemmProblem
    kernel: GemmKernel
    occupancy: Occupancy
    grid: Grid
    traffic: GemmTraffic
    rates: GpuRates
    work: StageWork
    issued_flops: int  # padded MMA work the tensor (or vector) engine executes
    math_j: float  # issued FLOPs x J/FLOP
    traffic_by_level: Mapping[str, LevelTraffic]
    memory_j: Mapping[str, float]


def _build_setup(op: LocalOp, hardware: HardwareSpec) -> _Setup:
    """Everything but the wave schedule; memoised per (op, hardware) by the caller."""
    sm = hardware.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(op)
    on_tensor = hardware.compute.tensor_peak(problem.compute_dtype) is not None
    if KERNEL_ATTRS.isdisjoint(op.attrs):  # the kernel automatic selection picks
        kernel = choose_kernel(op, problem, hardware).evaluation.kernel
    else:
        kernel = build_kernel(op, problem, sm, on_tensor=on_tensor)
    occupancy = occupancy_of(kernel, problem, sm)
    grid = grid_of(kernel, problem, sm, occupancy)
    traffic = gemm_traffic(kernel, problem, grid, int(hardware.level("l2").shared_capacity_bytes))
    rates = gpu_rates(hardware, sm, problem.compute_dtype, on_tensor=on_tensor)
    work = stage_work(kernel, problem, traffic, grid)
    issued = grid.ctas * grid.k_iterations * work.math_flops
    per_flop = hardware.compute.energy_per_flop(tensor=on_tensor, dtype=problem.compute_dtype)
    by_level = traffic_by_level(traffic)
    setup = _Setup(
        problem=problem,
        kernel=kernel,
        occupancy=occupancy,
        grid=grid,
        traffic=traffic,
        rates=rates,
        work=work,
        issued_flops=issued,
        math_j=issued * per_flop,
        traffic_by_level=by_level,
        memory_j=_memory_energy(hardware, by_level),
    )
    return setup


@register_model
class ExtendedRooflineModel:
    """K-stage pipeline timeline for GEMMs; roofline estimate for other kinds."""

    name = "extended_roofline"
    supported_kinds: frozenset[OpKind] = frozenset(OpKind)

    def supports(self, op: LocalOp) -> bool:
        """Every op kind is supported (GEMMs in detail, others by the roofline estimate)."""
        return op.kind in self.supported_kinds

    def predict(self, op: LocalOp, hardware: HardwareSpec) -> OpProfile:
        """Predict ``op`` on ``hardware`` (docs/models/extended_roofline.md)."""
        if type(op) is not LocalOp or type(hardware) is not HardwareSpec:
            check_predict_arguments(self.name, self.supported_kinds, op, hardware)
        if op.kind not in _GEMM_KINDS or hardware.compute.sm is None:
            return roofline_estimate(op, hardware, _FALLBACK)
        setup = per_op_and_hardware("extended_roofline", op, hardware, _build_setup)
        return _predict_gemm(op, hardware, setup)


def _waves(s: _Setup) -> tuple[WaveTimeline | None, WaveTimeline | None]:
    grid = s.grid
    full = (
        wave_timeline(
            s.work,
            s.rates,
            ctas_per_sm=s.occupancy.resident_ctas_per_sm,
            ctas_in_wave=grid.ctas_per_wave,
        )
        if grid.full_waves
        else None
    )
    tail = (
        wave_timeline(
            s.work, s.rates, ctas_per_sm=grid.tail_ctas_per_sm, ctas_in_wave=grid.tail_ctas
        )
        if grid.tail_ctas
        else None
    )
    return full, tail


class _KernelSums(NamedTuple):
    """``full_waves * full + tail`` of each wave quantity, in cycles (absent waves count 0).

    A named tuple, not a frozen dataclass: it is built on every predict and never leaves the
    module, and a tuple costs a fraction of a frozen dataclass to construct.
    """

    math_stage: float
    smem_stage: float
    l2_stage: float
    dram_stage: float
    latency_stage: float
    stage: float
    epilogue: float
    waves_total: float


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


def _kernel_sums(s: _Setup, full: WaveTimeline | None, tail: WaveTimeline | None) -> _KernelSums:
    w = s.grid.full_waves
    f = full or _NO_WAVE
    t = tail or _NO_WAVE
    return _KernelSums(
        w * f.math_stage_cycles + t.math_stage_cycles,
        w * f.smem_stage_cycles + t.smem_stage_cycles,
        w * f.l2_stage_cycles + t.l2_stage_cycles,
        w * f.dram_stage_cycles + t.dram_stage_cycles,
        w * f.latency_stage_cycles + t.latency_stage_cycles,
        w * f.stage_cycles + t.stage_cycles,
        w * f.epilogue_cycles + t.epilogue_cycles,
        w * f.total_cycles + t.total_cycles,
    )


def _scores(s: _Setup, sums: _KernelSums, total: float) -> dict[Bottleneck, float]:
    k = s.grid.k_iterations
    math = k * sums.math_stage
    exposed = sums.stage > sums.math_stage
    return {
        Bottleneck.COMPUTE: math,
        Bottleneck.SMEM: k * sums.smem_stage,
        Bottleneck.L2: k * sums.l2_stage,
        Bottleneck.DRAM: k * sums.dram_stage,
        Bottleneck.LATENCY_EXPOSED: k * sums.latency_stage if exposed else 0.0,
        Bottleneck.INSUFFICIENT_WAVES: total * (1 - s.grid.wave_efficiency),
        Bottleneck.EDGE_TILE_LOSS: math * (1 - s.grid.edge_efficiency * s.grid.k_efficiency),
        Bottleneck.EPILOGUE: sums.epilogue,
        Bottleneck.FIXED_OVERHEAD: float(s.rates.fixed_overhead_cycles),
    }


def _utilization(s: _Setup, sums: _KernelSums, total: float) -> Utilization:
    k, t, r = s.grid.k_iterations, s.traffic, s.rates
    return Utilization.make(
        math_fraction=k * sums.math_stage / total,
        smem_fraction=k * sums.smem_stage / total,
        l2_fraction=min(1.0, (t.l2_read_bytes + t.l2_write_bytes) / (r.l2_bytes_per_cycle * total)),
        dram_fraction=min(
            1.0, (t.dram_read_bytes + t.dram_write_bytes) / (r.dram_bytes_per_cycle * total)
        ),
    )


def _overlaps(wave: WaveTimeline) -> Overlaps:
    def hidden(busy: float) -> float:
        return min(wave.math_stage_cycles, busy) / busy if busy else 1.0

    return Overlaps.make(
        math_smem_fraction=hidden(wave.smem_stage_cycles),
        math_l2_fraction=hidden(wave.l2_stage_cycles),
        math_dram_fraction=hidden(wave.dram_stage_cycles),
    )


def _predict_gemm(op: LocalOp, hardware: HardwareSpec, s: _Setup) -> OpProfile:
    full, tail = _waves(s)
    sums = _kernel_sums(s, full, tail)
    total = sums.waves_total + s.rates.fixed_overhead_cycles
    latency = total / s.rates.clock_hz
    primary, secondary = rank_bottlenecks(_scores(s, sums, total))
    wave = full if full is not None else tail
    assert wave is not None
    return OpProfile.make(
        latency_s=latency,
        flops=s.problem.flops,
        engine=Engine.TENSOR if s.kernel.on_tensor else Engine.VECTOR,
        footprint=op.footprint,
        traffic=s.traffic_by_level,
        energy=EnergyBreakdown.make(
            tensor_j=s.math_j if s.kernel.on_tensor else 0.0,
            vector_j=0.0 if s.kernel.on_tensor else s.math_j,
            memory_j=s.memory_j,
            static_j=hardware.power.busy_w * latency,
        ),
        implementation=f"extended_roofline/{s.kernel.instruction.value}/{s.kernel.name}",
        diagnostics=ExtendedRooflineDiagnostics.make(
            kernel=s.kernel,
            occupancy=s.occupancy,
            grid=s.grid,
            traffic=s.traffic,
            full_wave=full,
            tail_wave=tail,
            fixed_overhead_cycles=s.rates.fixed_overhead_cycles,
            total_cycles=total,
            issued_flops=s.issued_flops,
            useful_flops_per_s=s.problem.flops / latency,
            utilization=_utilization(s, sums, total),
            overlaps=_overlaps(wave),
            primary_bottleneck=primary,
            secondary_bottleneck=secondary,
        ),
    )


def _memory_energy(
    hardware: HardwareSpec, traffic: Mapping[str, LevelTraffic]
) -> Mapping[str, float]:
    """Bytes x J/byte per modelled level."""
    return MappingProxyType(
        {
            name: moved.total_bytes * hardware.level(name).energy_j_per_byte
            for name, moved in traffic.items()
        }
    )
