"""Per-cycle rates and latencies of one GPU for the GEMM timeline, derated by utilisation."""

from __future__ import annotations

from dataclasses import dataclass

from opmodel.core.dtypes import DType
from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware.spec import HardwareSpec, SmSpec
from opmodel.models.gemm.fp4_overhead import fp4_extra_cycles
from opmodel.models.gemm.overhead import fixed_overhead_cycles

__all__ = ["GpuRates", "gpu_rates"]


@dataclass(frozen=True, slots=True, kw_only=True)
class GpuRates:
    """Rates per SM clock cycle; ``l2``/``dram`` are device-wide, the others per SM."""

    clock_hz: float
    sm_count: int
    math_flops_per_cycle_per_sm: float  # tensor engine, or vector engine for SIMT kernels
    smem_bytes_per_cycle_per_sm: float
    l2_bytes_per_cycle: float
    dram_bytes_per_cycle: float
    l2_latency_cycles: float
    dram_latency_cycles: float
    tensor_latency_cycles: int
    fixed_overhead_cycles: int


def gpu_rates(
    hardware: HardwareSpec, sm: SmSpec, dtype: DType, *, on_tensor: bool, mma_sync: bool = False
) -> GpuRates:
    """Rates for ``dtype`` on the tensor (or vector) engine of ``hardware``; a kernel issuing
    warp-level ``mma.sync`` (``mma_sync``) reaches ``sm.mma_sync_tensor_fraction`` of the tensor
    rate (below 1 on sm_90, whose full rate needs warpgroup MMAs), as in
    :mod:`opmodel.models.gemm.device`."""
    for level in ("l2", "smem"):
        if level not in hardware.levels_by_name:
            msg = (
                f"hardware '{hardware.name}' has no '{level}' memory level, "
                "which GEMM kernel models need"
            )
            raise UnsupportedOpError(msg)
    compute, util, clock = hardware.compute, hardware.utilization, hardware.compute.clock_hz
    peak = compute.tensor_peak(dtype) if on_tensor else compute.vector_peak(dtype)
    fraction = util.tensor_fraction if on_tensor else util.vector_fraction
    if on_tensor and mma_sync:
        fraction *= sm.mma_sync_tensor_fraction
    assert peak is not None
    l2, smem, hbm = hardware.level("l2"), hardware.level("smem"), hardware.hbm
    return GpuRates(
        clock_hz=clock,
        sm_count=sm.sm_count,
        math_flops_per_cycle_per_sm=peak * fraction / (sm.sm_count * clock),
        smem_bytes_per_cycle_per_sm=smem.bandwidth_bytes_per_s
        * hardware.memory_fraction("smem")
        / (sm.sm_count * clock),
        l2_bytes_per_cycle=l2.bandwidth_bytes_per_s * hardware.memory_fraction("l2") / clock,
        dram_bytes_per_cycle=hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm") / clock,
        l2_latency_cycles=l2.latency_s * clock,
        dram_latency_cycles=hbm.latency_s * clock,
        tensor_latency_cycles=sm.tensor_latency_cycles,
        fixed_overhead_cycles=fixed_overhead_cycles(hardware, "extended_roofline")
        + fp4_extra_cycles(hardware, "extended_roofline", dtype),
    )
