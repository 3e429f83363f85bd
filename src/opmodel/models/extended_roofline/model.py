"""``extended_roofline``: a K-stage pipeline timeline per CTA wave for GEMM and batched GEMM.

``cycles = full_waves * wave(resident, all SMs) + wave(tail CTAs per SM, tail SMs) + fixed``,
each wave from :mod:`opmodel.models.extended_roofline.timeline`; traffic, occupancy and the
kernel from the shared GEMM machinery (:mod:`opmodel.models.gemm`): the op's kernel attrs, or,
when it gives none, the kernel automatic selection picks (:mod:`opmodel.models.gemm.choice`).
Cycles run at the power-limited clock when the hardware has one
(:func:`~opmodel.hardware.clocking.power_limited_clock_hz`). Non-GEMM ops, and GEMMs on
hardware without SM structure (TPUs), use the shared roofline estimate.
Equations: docs/models/extended_roofline.md.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import NamedTuple

from opmodel.core.enums import GEMM_KINDS, Engine, OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.hardware.clocking import throttled
from opmodel.hardware.spec import HardwareSpec, Instruction
from opmodel.models.extended_roofline.diagnostics import ExtendedRooflineDiagnostics
from opmodel.models.extended_roofline.rates import GpuRates, gpu_rates
from opmodel.models.extended_roofline.timeline import (
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
    gemm_traffic,
    grid_of,
)
from opmodel.models.gemm.choice import KERNEL_ATTRS, attrs_kernel_setup, choose_kernel, setup_of
from opmodel.models.gemm.evaluate import memory_energy, traffic_by_level
from opmodel.models.gemm.overhead import in_force
from opmodel.models.registry import register_model
from opmodel.models.shared.arguments import check_predict_arguments
from opmodel.models.shared.memo import per_op_and_hardware
from opmodel.models.shared.roofline_estimate import roofline_estimate

__all__ = ["ExtendedRooflineModel"]

_FALLBACK = {
    Engine.TENSOR: "extended_roofline/roofline-tensor",
    Engine.VECTOR: "extended_roofline/roofline-vector",
    Engine.MEMORY: "extended_roofline/roofline-memory",
    Engine.INTERCONNECT: "extended_roofline/roofline-interconnect",
}


class _Setup(NamedTuple):
    """Everything about one (GEMM op, GPU) pair that does not depend on the wave schedule
    (a named tuple: built on every fresh predict, never leaves the module)."""

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


def _rates(
    hardware: HardwareSpec, problem: GemmProblem, *, on_tensor: bool, mma_sync: bool
) -> GpuRates:
    """:func:`gpu_rates` for the problem's compute dtype and the kernel's MMA instruction, kept
    in the spec's derived cache."""
    # the rates hold the fixed overhead in force: predict starts a new cache under another
    # calibration (models.gemm.overhead.in_force)
    key = ("extended_roofline.rates", problem.compute_dtype, on_tensor, mma_sync)
    rates: GpuRates | None = hardware.derived_cache.get(key)
    if rates is None:
        sm = hardware.compute.sm
        assert sm is not None
        rates = gpu_rates(
            hardware, sm, problem.compute_dtype, on_tensor=on_tensor, mma_sync=mma_sync
        )
        hardware.derived_cache[key] = rates
    return rates


def _build_setup(op: LocalOp, hardware: HardwareSpec) -> _Setup:
    """Everything but the wave schedule (:func:`_at_clock` moves it to a power-limited clock
    of the same device, which does not change the kernel)."""
    sm = hardware.compute.sm
    assert sm is not None
    problem = GemmProblem.from_op(op)
    on_tensor = hardware.compute.tensor_peak(problem.compute_dtype) is not None
    if KERNEL_ATTRS.isdisjoint(op.attrs):  # the kernel automatic selection picks
        built = setup_of(choose_kernel(op, problem, hardware).evaluation.kernel, problem, hardware)
    else:  # built from the attrs once per spec, attrs and dtypes
        built = attrs_kernel_setup(op, problem, hardware)
    kernel, occupancy = built.kernel, built.occupancy
    grid = grid_of(kernel, problem, sm, occupancy)
    traffic = gemm_traffic(kernel, problem, grid, built.rates.l2_capacity_bytes, tiles=built.tiles)
    rates = _rates(
        hardware, problem, on_tensor=on_tensor, mma_sync=kernel.instruction is Instruction.MMA_SYNC
    )
    work = stage_work(kernel, problem, traffic, grid, tiles=built.tiles)
    issued = grid.ctas * grid.k_iterations * work.math_flops
    per_flop = hardware.compute.energy_per_flop(tensor=on_tensor, dtype=problem.compute_dtype)
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
        traffic_by_level=traffic_by_level(traffic),
        memory_j=memory_energy(traffic, built.rates),
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
        """Predict ``op`` on ``hardware`` (docs/models/extended_roofline.md).

        GEMM profiles are pure functions of (op, hardware) and are memoised on the op.
        """
        if type(op) is not LocalOp or type(hardware) is not HardwareSpec:
            check_predict_arguments(self.name, self.supported_kinds, op, hardware)
        if op.kind not in GEMM_KINDS or hardware.compute.sm is None:
            return roofline_estimate(op, hardware, _FALLBACK)
        in_force(hardware)  # the fixed overhead calibration (models.gemm.overhead)
        return per_op_and_hardware(self.name, op, hardware, _predict_gpu_gemm)


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


def _overlapped_cycles(s: _Setup, full: WaveTimeline | None, tail: WaveTimeline | None) -> float:
    """A warp-specialised kernel (producer warps) starts every wave after the first under the
    epilogue of the full wave before it: ``min(prologue, epilogue)`` cycles each."""
    if not s.kernel.producer_warps or full is None:
        return 0.0
    hidden = (s.grid.full_waves - 1) * min(full.prologue_cycles, full.epilogue_cycles)
    if tail is not None:
        hidden += min(tail.prologue_cycles, full.epilogue_cycles)
    return hidden


def _predict_gpu_gemm(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    s = _build_setup(op, hardware)
    timing = _timing(s)
    if s.kernel.on_tensor:
        # under a power limit the kernel runs at the clock its tensor activity allows (the law
        # effective_roofline applies; docs/models/effective_roofline.md)
        dtype = s.problem.compute_dtype
        slow = throttled(hardware, dtype, s.issued_flops, timing[3] / s.rates.clock_hz)
        if slow is not None:
            hardware, s = slow, _at_clock(s, slow)
            timing = _timing(s)
    return _profile(op, hardware, s, timing)


# the wave schedule of one setup: the full and the tail wave, the overlapped cycles and the
# kernel's cycles (a plain tuple: built on every fresh predict, cheaper than a named one)
_Timing = tuple[WaveTimeline | None, WaveTimeline | None, float, float]


def _timing(s: _Setup) -> _Timing:
    """``full_waves x full + tail - overlapped + fixed`` cycles (module docstring)."""
    full, tail = _waves(s)
    waves_total = (s.grid.full_waves * full.total_cycles if full is not None else 0.0) + (
        tail.total_cycles if tail is not None else 0.0
    )
    overlapped = _overlapped_cycles(s, full, tail)
    total = waves_total - overlapped + s.rates.fixed_overhead_cycles
    return full, tail, overlapped, total


def _at_clock(s: _Setup, hardware: HardwareSpec) -> _Setup:
    """``s`` on ``hardware``, another clock of the same device: the clock moves the rates and
    the energies per FLOP and per byte (the core domain's voltage), not the kernel, its
    occupancy, grid, traffic or stage work, which are kept."""
    dtype = s.problem.compute_dtype
    on_tensor = hardware.compute.tensor_peak(dtype) is not None  # as _build_setup
    mma_sync = s.kernel.instruction is Instruction.MMA_SYNC
    rates = _rates(hardware, s.problem, on_tensor=on_tensor, mma_sync=mma_sync)
    per_flop = hardware.compute.energy_per_flop(tensor=on_tensor, dtype=dtype)
    return s._replace(
        rates=rates,
        math_j=s.issued_flops * per_flop,
        memory_j=memory_energy(s.traffic, setup_of(s.kernel, s.problem, hardware).rates),
    )


def _profile(op: LocalOp, hardware: HardwareSpec, s: _Setup, timing: _Timing) -> OpProfile:
    """The profile of ``s`` on ``hardware`` with its wave schedule ``timing``."""
    full, tail, overlapped, total = timing
    latency = total / s.rates.clock_hz
    kernel = s.kernel
    on_tensor = kernel.on_tensor
    flops = s.problem.flops
    return OpProfile.make(
        latency_s=latency,
        flops=flops,
        engine=Engine.TENSOR if on_tensor else Engine.VECTOR,
        footprint=op.footprint,
        traffic=s.traffic_by_level,
        energy=EnergyBreakdown.make(
            tensor_j=s.math_j if on_tensor else 0.0,
            vector_j=0.0 if on_tensor else s.math_j,
            memory_j=s.memory_j,
            static_j=hardware.power.busy_w * latency,
        ),
        implementation=f"extended_roofline/{kernel.instruction}/{kernel.name}",  # StrEnum: value
        diagnostics=ExtendedRooflineDiagnostics.make(
            kernel=kernel,
            occupancy=s.occupancy,
            grid=s.grid,
            traffic=s.traffic,
            full_wave=full,
            tail_wave=tail,
            fixed_overhead_cycles=s.rates.fixed_overhead_cycles,
            total_cycles=total,
            overlapped_cycles=overlapped,
            issued_flops=s.issued_flops,
            useful_flops_per_s=flops / latency,
            rates=s.rates,
        ),
    )
