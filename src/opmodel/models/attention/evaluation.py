"""What an attention kernel's evaluation gives (:mod:`.evaluate` for prefill,
:mod:`.decode` for the split-KV kernel, :mod:`.backward` for the backward pass): its kernel,
tiles, times and bytes."""

from __future__ import annotations

from opmodel.core.values import FastValue, value_type
from opmodel.models.attention.kernels import FlashKernel
from opmodel.models.attention.tiles import TileCounts

__all__ = ["AttentionEvaluation"]


@value_type
class AttentionEvaluation(FastValue):
    """The numbers behind an attention kernel's time (seconds, cycles, bytes)."""

    kernel: FlashKernel
    tiles: TileCounts
    splits: int
    ctas: int
    resident_ctas_per_sm: int
    tile_cycles: float
    mma_cycles_per_tile: float
    # the softmax's part of a tile (a backward tile: its elementwise work and shared-memory
    # staging, both between its GEMMs)
    softmax_cycles_per_tile: float
    # a query block's unhidden first softmax, epilogue and load (FA3); in the backward, a key
    # block's CTA's final store and, alone on its SM, its first load
    start_cycles_per_block: float
    compute_s: float
    dram_s: float
    l2_s: float
    limiter: str
    latency_s: float
    dram_read_bytes: int
    dram_write_bytes: int
    l2_read_bytes: int
    issued_mma_flops: int
    sm_clock_hz: float  # the clock the cycles run at (power-limited when the spec has a limit)
    dirty_write_back_bytes: int = 0  # another kernel's dirty lines it evicts (l2_dirty_bytes)
    # a backward pass's preprocess and postprocess kernels, included in latency_s (.backward)
    side_kernels_s: float = 0.0
