"""Which FlashAttention kernel runs, its block sizes and how its softmax overlaps the MMAs.

* ``fa2`` (FlashAttention-2, Dao 2023; sm_80, sm_86, sm_89, and sm_90 when no ``wgmma`` is
  modelled): warp-level ``mma.sync``, 4 warps per CTA. Block sizes follow the shape of FA2's
  forward launch templates (csrc/flash_attn/src/flash_fwd_launch_template.h), approximately:
  128 x 128 for head_dim <= 64, 128 x 64 up to 128, 64 x 64 up to 256. Within a CTA the
  softmax runs between the two MMAs of a tile, so per tile ``t = t_mma + t_softmax``.
* ``fa3`` (FlashAttention-3, Shah et al. 2024; sm_90): warpgroup ``wgmma`` fed by TMA, two
  consumer warpgroups in ping-pong so that one warpgroup's exponentials run under the other's
  GEMMs. Blocks 128 x 128 up to head_dim 128, 128 x 64 above. Per tile
  ``t = t_mma + t_bookkeeping``: the special-function work overlaps; the FP32 row max, row sum
  and output rescale stay between a warpgroup's two GEMMs (a modelling assumption, checked
  against the FA3 paper's throughput in tests). sm_100 uses the same structure with
  ``tcgen05`` (an approximation until Blackwell attention kernels are modelled).
* AMD CDNA: the FA2 structure with ``mfma`` (the architecture's warp-level MMA).
* ``splitkv`` (flash-decoding: FA2's split-KV forward for few query rows): 64-row query blocks
  holding a KV head's query heads (GQA packing), key blocks of 128, the KV sequence split so
  that the grid fills the GPU (FA2's ``num_splits_heuristic``), then a combine pass.
"""

from __future__ import annotations

from opmodel.core.values import FastValue, value_type
from opmodel.hardware.spec import HardwareSpec, Instruction

__all__ = ["FlashKernel", "flash_kernel"]

DECODE_MAX_QUERY_ROWS = 16  # a query length up to this runs the split-KV (decode) kernel
# architectures whose attention kernels use asynchronous MMAs with warp specialisation (FA3 on
# sm_90; Blackwell kernels follow the same structure with tcgen05, an approximation)
_ASYNC_MMA = {"sm90": Instruction.WGMMA, "sm100": Instruction.TCGEN05}


@value_type
class FlashKernel(FastValue):
    """A FlashAttention kernel: name, block sizes, MMA instruction and softmax overlap."""

    name: str
    block_q: int
    block_kv: int
    instruction: Instruction
    softmax_overlapped: bool


def flash_kernel(hardware: HardwareSpec, head_dim: int, seq_q: int) -> FlashKernel:
    """The kernel FlashAttention runs for ``head_dim`` and ``seq_q`` query rows on ``hardware``."""
    sm = hardware.compute.sm
    assert sm is not None
    if seq_q <= DECODE_MAX_QUERY_ROWS:
        return FlashKernel(
            name="splitkv",
            block_q=64,
            block_kv=128,
            instruction=sm.warp_mma_instruction,
            softmax_overlapped=False,
        )
    asynchronous = _ASYNC_MMA.get(hardware.architecture or "")
    if asynchronous is not None:
        block_kv = 128 if head_dim <= 128 else 64
        return FlashKernel(
            name="fa3",
            block_q=128,
            block_kv=block_kv,
            instruction=asynchronous,
            softmax_overlapped=True,
        )
    if head_dim <= 64:
        block_q, block_kv = 128, 128
    elif head_dim <= 128:
        block_q, block_kv = 128, 64
    else:
        block_q, block_kv = 64, 64
    return FlashKernel(
        name="fa2",
        block_q=block_q,
        block_kv=block_kv,
        instruction=sm.warp_mma_instruction,
        softmax_overlapped=False,
    )
