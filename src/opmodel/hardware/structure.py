"""Hardware structure types: the device family, clock domains, matrix instructions and the
compute units' structure (a GPU's SMs with their occupancy limits, a TPU's matrix units), parts
of :class:`~opmodel.hardware.spec.HardwareSpec` (SI units; docs/hardware.md)."""

from __future__ import annotations

from dataclasses import dataclass, field

from opmodel.core.enums import StrValueEnum
from opmodel.hardware.ranges import (
    COUNT,
    CYCLES,
    LATENCY_CYCLES,
    ON_CHIP_BYTES,
    ON_CHIP_RESERVE_BYTES,
    REGISTERS,
)
from opmodel.parsing.schema import MUST_BE_FRACTION

__all__ = [
    "ASYNC_INSTRUCTIONS",
    "WARP_MMA_INSTRUCTIONS",
    "ClockDomain",
    "HardwareKind",
    "Instruction",
    "MxuSpec",
    "SmSpec",
]


class HardwareKind(StrValueEnum):
    """Device family; drives which kernel machinery applies."""

    GPU = "gpu"
    TPU = "tpu"


class ClockDomain(StrValueEnum):
    """Which clock a memory level's bandwidth and latency follow when the SM clock changes."""

    CORE = "core"
    MEMORY = "memory"


class Instruction(StrValueEnum):
    """How a GEMM kernel's math is issued."""

    MMA_SYNC = "mma_sync"  # warp-level tensor-core MMA (NVIDIA sm_80 and later)
    WGMMA = "wgmma"  # warpgroup-level asynchronous MMA with TMA loads (NVIDIA sm_90)
    TCGEN05 = "tcgen05"  # CTA-level asynchronous MMA, accumulators in tensor memory (sm_100)
    MFMA = "mfma"  # wavefront-level matrix FMA on AMD CDNA matrix cores
    SIMT = "simt"  # vector FMA on the CUDA cores / SIMD lanes


WARP_MMA_INSTRUCTIONS = frozenset({Instruction.MMA_SYNC, Instruction.MFMA})
"""Instructions one warp (wavefront) issues on its own fragments: kernels built from op attrs
use the architecture's ``sm.warp_mma_instruction``, which must be one of these."""

ASYNC_INSTRUCTIONS = frozenset({Instruction.WGMMA, Instruction.TCGEN05})
"""Asynchronous MMAs fed by TMA, with producer warps and CTA clusters."""


@dataclass(frozen=True, slots=True, kw_only=True)
class SmSpec:
    """GPU streaming-multiprocessor structure and per-SM limits (CUDA occupancy limits).

    ``fma_latency_cycles`` is the dependent-issue latency of a vector FMA (4 cycles on Volta
    and later per the CUDA C++ Best Practices Guide, the default when omitted);
    ``mma_sync_tensor_fraction`` is the share of the tensor peak that warp-level ``mma.sync``
    instructions can reach (1.0 when omitted; below 1 on sm_90, whose full rate needs
    warpgroup ``wgmma``). ``warp_mma_instruction`` is the warp-level matrix instruction that
    kernels built from op attrs issue: ``mma_sync`` on NVIDIA (default), ``mfma`` on AMD CDNA,
    where an SM is a compute unit, an SMSP a SIMD and a warp a 64-wide wavefront.
    ``sfu_ops_per_cycle_per_sm``: results per clock per SM of the special-function unit
    (``exp2``, ``rsqrt``, ``sin``, ...): 16 for compute capability 5.x to 9.0 in the CUDA C++
    Programming Guide's arithmetic-instruction throughput table (the default when omitted).
    ``cta_turnaround_cycles``: SM cycles to launch a CTA, run it and free its slot beyond its
    own work, which every CTA of a resident slot pays in turn (0 when omitted: not priced);
    the shipped values come from gpu-benches' published gpu-stream sweeps, where a wave of
    store-only 32-thread CTAs takes that long (docs/hardware.md).
    """

    sm_count: int = field(metadata=COUNT)
    smsps_per_sm: int = field(metadata=COUNT)
    warp_size: int = field(metadata=COUNT)
    max_ctas_per_sm: int = field(metadata=COUNT)
    max_warps_per_sm: int = field(metadata=COUNT)
    max_threads_per_cta: int = field(metadata=COUNT)
    registers_per_sm: int = field(metadata=REGISTERS)
    max_registers_per_thread: int = field(metadata=REGISTERS)
    shared_memory_per_sm_bytes: int = field(metadata=ON_CHIP_BYTES)
    max_shared_memory_per_cta_bytes: int = field(metadata=ON_CHIP_BYTES)
    mma_shape_mnk: tuple[int, int, int] = field(metadata=COUNT)
    tensor_latency_cycles: int = field(metadata=LATENCY_CYCLES)
    register_allocation_unit: int = field(metadata=REGISTERS)
    shared_memory_reserved_per_cta_bytes: int = field(metadata=ON_CHIP_RESERVE_BYTES)
    fma_latency_cycles: int = field(default=4, metadata=LATENCY_CYCLES)
    mma_sync_tensor_fraction: float = field(default=1.0, metadata=MUST_BE_FRACTION)
    warp_mma_instruction: Instruction = Instruction.MMA_SYNC
    sfu_ops_per_cycle_per_sm: int = field(default=16, metadata=COUNT)
    cta_turnaround_cycles: float = field(default=0.0, metadata=CYCLES)


@dataclass(frozen=True, slots=True, kw_only=True)
class MxuSpec:
    """TPU TensorCore / matrix-unit (systolic array) structure."""

    tensor_cores: int = field(metadata=COUNT)
    mxus_per_core: int = field(metadata=COUNT)
    mxu_rows: int = field(metadata=COUNT)
    mxu_cols: int = field(metadata=COUNT)
