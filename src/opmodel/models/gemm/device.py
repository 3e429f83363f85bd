"""Raw per-cycle rates and latencies of one GPU for one GEMM dtype and instruction kind.

Everything here is a pure function of the hardware spec, the dtype and the instruction, so it
is computed once and kept in ``hardware.derived_cache``. Peaks are derated by the spec's
utilisation fractions (1.0 when not configured) and, for ``mma.sync`` on GPUs whose full tensor
rate needs warpgroup MMAs (sm_90), by ``sm.mma_sync_tensor_fraction``.
"""

from __future__ import annotations

from dataclasses import dataclass

from opmodel.core.dtypes import DType
from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware.spec import HardwareSpec, Instruction
from opmodel.models.gemm.fp4_overhead import fp4_extra_cycles
from opmodel.models.gemm.overhead import fixed_overhead_cycles
from opmodel.models.gemm.simt_fraction import simt_fp32_fraction

__all__ = ["TIMED_BY", "DeviceRates", "device_rates"]

# the model whose kernel times this machinery computes (its fixed overhead calibration)
TIMED_BY = "effective_roofline"


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceRates:
    """Raw rates per SM-clock cycle: math per SMSP, SMEM per SM, L2 and DRAM device-wide."""

    clock_hz: float
    sm_count: int
    smsps_per_sm: int
    math_flops_per_cycle_per_smsp: float
    math_latency_cycles: float  # tensor MMA or vector FMA issue-to-result latency
    smem_bytes_per_cycle_per_sm: float
    smem_latency_cycles: float
    l2_bytes_per_cycle: float
    l2_latency_cycles: float
    dram_bytes_per_cycle: float
    dram_latency_cycles: float
    fixed_overhead_cycles: int
    math_j_per_flop: float
    l2_capacity_bytes: int  # the L2 one SM's data can use (shared_capacity_bytes)
    dram_j_per_byte: float
    l2_j_per_byte: float
    smem_j_per_byte: float
    busy_w: float  # static power while the kernel runs


def _require_levels(hardware: HardwareSpec) -> None:
    for level in ("l2", "smem"):
        if level not in hardware.levels_by_name:
            msg = (
                f"hardware '{hardware.name}' has no '{level}' memory level, "
                "which GEMM kernel models need"
            )
            raise UnsupportedOpError(msg)


def _math_fraction(hardware: HardwareSpec, dtype: DType, instruction: Instruction) -> float:
    """The share of the engine's peak a GEMM's math sustains: the config's utilization, the
    ``mma.sync`` share where the SM's native MMA is another, and FP32 SGEMM's share on the
    SIMT path (GA102, AD102: :mod:`.simt_fraction`)."""
    util, sm = hardware.utilization, hardware.compute.sm
    assert sm is not None
    if instruction is Instruction.SIMT:
        return util.vector_fraction * simt_fp32_fraction(hardware, dtype)
    if instruction is Instruction.MMA_SYNC:
        return util.tensor_fraction * sm.mma_sync_tensor_fraction
    return util.tensor_fraction


def _build(
    hardware: HardwareSpec, dtype: DType, instruction: Instruction, overhead_cycles: int
) -> DeviceRates:
    _require_levels(hardware)
    compute, clock = hardware.compute, hardware.compute.clock_hz
    sm = compute.sm
    assert sm is not None
    on_tensor = instruction is not Instruction.SIMT
    peak = compute.tensor_peak(dtype) if on_tensor else compute.vector_peak(dtype)
    if peak is None:
        engine = "tensor" if on_tensor else "vector"
        msg = f"hardware '{hardware.name}' has no {engine} peak for {dtype}"
        raise UnsupportedOpError(msg)
    fraction = _math_fraction(hardware, dtype, instruction)
    l2, smem, hbm = hardware.level("l2"), hardware.level("smem"), hardware.hbm
    return DeviceRates(
        clock_hz=clock,
        sm_count=sm.sm_count,
        smsps_per_sm=sm.smsps_per_sm,
        math_flops_per_cycle_per_smsp=peak * fraction / (sm.sm_count * sm.smsps_per_sm * clock),
        math_latency_cycles=float(sm.tensor_latency_cycles if on_tensor else sm.fma_latency_cycles),
        smem_bytes_per_cycle_per_sm=smem.bandwidth_bytes_per_s
        * hardware.memory_fraction("smem")
        / (sm.sm_count * clock),
        smem_latency_cycles=smem.latency_s * clock,
        l2_bytes_per_cycle=l2.bandwidth_bytes_per_s * hardware.memory_fraction("l2") / clock,
        l2_latency_cycles=l2.latency_s * clock,
        dram_bytes_per_cycle=hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm") / clock,
        dram_latency_cycles=hbm.latency_s * clock,
        fixed_overhead_cycles=overhead_cycles,
        math_j_per_flop=compute.energy_per_flop(tensor=on_tensor, dtype=dtype),
        l2_capacity_bytes=int(l2.shared_capacity_bytes),
        dram_j_per_byte=hbm.energy_j_per_byte,
        l2_j_per_byte=l2.energy_j_per_byte,
        smem_j_per_byte=smem.energy_j_per_byte,
        busy_w=hardware.power.busy_w,
    )


def device_rates(hardware: HardwareSpec, dtype: DType, instruction: Instruction) -> DeviceRates:
    """The rates of ``hardware`` for ``dtype`` on ``instruction``, with the fixed overhead of
    :data:`TIMED_BY` in force (:mod:`~opmodel.models.gemm.overhead`), memoised on the spec: the
    models start a new cache under another calibration (``in_force``)."""
    key = ("gemm.device_rates", dtype, instruction)
    cached = hardware.derived_cache.get(key)
    if cached is None:
        overhead = fixed_overhead_cycles(hardware, TIMED_BY)
        overhead += fp4_extra_cycles(hardware, TIMED_BY, dtype)
        cached = hardware.derived_cache[key] = _build(hardware, dtype, instruction, overhead)
    return cached
