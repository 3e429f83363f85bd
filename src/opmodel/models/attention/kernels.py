"""Which FlashAttention kernel runs, its block sizes and how its softmax overlaps the MMAs.

* ``fa2`` (FlashAttention-2, Dao 2023; sm_80, sm_86, sm_89, and sm_90 when no ``wgmma`` is
  modelled): warp-level ``mma.sync``. Blocks and warps per CTA are FA2's forward launch
  template's (:func:`~opmodel.models.attention.launch_blocks.fa2_forward_blocks`: 128 x 128
  up to head_dim 64, 128 x 64 up to 128 (sm_86/sm_89: 128 x 32, or 64 x 64 causal), 128 x 64
  of 8 warps up to 192 and on the A100 at 256, 64 x 64 at 256 elsewhere) on NVIDIA GPUs;
  elsewhere 128 x 128 up to head_dim 64, 128 x 64 up to 128, 64 x 64 above. Within a CTA the
  softmax runs between the two MMAs of a tile, so per tile ``t = t_mma + t_softmax``.
* ``fa3`` (FlashAttention-3, Shah et al. 2024; sm_90): warpgroup ``wgmma`` fed by TMA, two
  consumer warpgroups in ping-pong so that one warpgroup's exponentials run under the other's
  GEMMs. Blocks 128 x 128 up to head_dim 128, 128 x 64 above; FA3's own tile table
  (:func:`fa3_blocks`) where attr ``attention_kernel`` names FA3 or Q, K and V are one byte
  wide. Per tile
  ``t = t_mma + t_bookkeeping``: the special-function work overlaps the other warpgroup's
  GEMMs, as far as they last (``costs.tile_cycles``); the FP32 row max, row sum and output
  rescale stay between a warpgroup's two GEMMs (a modelling assumption, checked
  against the FA3 paper's throughput in tests). sm_100 uses the same structure with
  ``tcgen05`` (an approximation until Blackwell attention kernels are modelled), with the
  exponentials all hidden: Blackwell's tensor cores are twice as fast against the same 16
  MUFU results per cycle, and its kernels (FlashAttention-4, Zadouri et al. 2026) compute
  part of the exponentials with FMA polynomials to get past that limit.
* AMD CDNA: the FA2 structure with ``mfma`` (the architecture's warp-level MMA).
* ``splitkv`` (flash-decoding: FA2's split-KV forward for few query rows): 64-row query blocks
  holding a KV head's query heads (GQA packing), key blocks of 256 for head_dim <= 64, 128 up
  to 128 and 64 above (``kBlockN`` of ``run_mha_fwd_splitkv_dispatch`` in
  flash_fwd_launch_template.h, which flash_api.cpp's split count repeats), the KV sequence
  split so that the grid fills the GPU (FA2's ``num_splits_heuristic``), then a combine pass.
  Decode (a KV-cache read, ``flash_attn_with_kvcache``) and any attention of 16 query rows or
  fewer run it. FA2's ``mha_fwd`` also takes it for a longer prefill whose grid of batch x heads
  x 64-row query blocks cannot fill twice the SM count; the model keeps ``fa2`` there, without
  the split and its combine pass (an approximation for small prefills).
  On sm_90 and sm_100 the MMAs are the asynchronous warpgroup ones: FA3, which serves decode on
  Hopper (``flash_attn_with_kvcache`` with split-KV and GQA packing), issues ``wgmma`` there
  too. The block shape stays FA2's (an approximation).
"""

from __future__ import annotations

import math

from opmodel.core.values import FastValue, value_type
from opmodel.core.views_matmul import AttentionView
from opmodel.hardware.spec import HardwareSpec, Instruction
from opmodel.models.attention.fa3_blocks import fa3_blocks
from opmodel.models.attention.launch_blocks import fa2_forward_blocks, is_sm8x

__all__ = [
    "FLASHMLA",
    "FlashKernel",
    "async_mma_instruction",
    "fa3_warps",
    "flash_kernel",
    "kernel_choice_problem",
    "kernel_mma",
    "num_splits",
    "split_block_kv",
    "split_slots",
]

DECODE_MAX_QUERY_ROWS = 16  # an attention with this few query rows runs the split-KV kernel
SPLIT_BLOCK_Q = 64  # kBlockM of FA2's split-KV kernels
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
    # part of the exponentials computed with FMA polynomials instead of the MUFU (Blackwell
    # kernels, FlashAttention-4), so the MUFU's 16 per cycle do not bound the tile
    emulated_exponentials: bool = False
    warps: int = 4  # per CTA (FA2's kernel traits; FA3's consumer and producer warpgroups)


# FlashMLA's dense decode kernel (sm_90, attr shared_kv: MLA's one latent cache;
# :mod:`.flashmla`): Flash_fwd_kernel_traits_mla<576, 64, 64, 8 warps>, wgmma
FLASHMLA = FlashKernel(
    name="flashmla",
    block_q=64,
    block_kv=64,
    instruction=Instruction.WGMMA,
    softmax_overlapped=False,
    warps=8,
)


def async_mma_instruction(hardware: HardwareSpec) -> Instruction | None:
    """The asynchronous warpgroup MMA the architecture's attention kernels issue (``wgmma`` on
    sm_90, ``tcgen05`` on sm_100), or ``None`` where they issue the warp-level MMA."""
    return _ASYNC_MMA.get(hardware.architecture or "")


def kernel_mma(hardware: HardwareSpec, view: AttentionView) -> Instruction | None:
    """The asynchronous warpgroup MMA the op's kernels issue: the architecture's
    (:func:`async_mma_instruction`), or ``None`` (warp-level ``mma.sync``) when attr
    ``attention_kernel`` names FlashAttention-2, which runs its sm_80 kernels on Hopper too."""
    return None if view.kernel_choice == "fa2" else async_mma_instruction(hardware)


def kernel_choice_problem(hardware: HardwareSpec, view: AttentionView) -> str | None:
    """Why the kernel family attr ``attention_kernel`` names cannot run on ``hardware``, or
    ``None``: FA3 needs warpgroup MMAs (sm_90, sm_100), FlashMLA sm_90's ``wgmma``."""
    arch = hardware.architecture or "no sm_90 or sm_100 architecture"
    asynchronous = async_mma_instruction(hardware)
    if view.kernel_choice == "fa3" and asynchronous is None:
        return f"fa3 needs warpgroup MMAs (sm90 or sm100); {hardware.name} is {arch}"
    if view.kernel_choice == "flashmla" and asynchronous is not Instruction.WGMMA:
        return f"flashmla runs on sm90 (wgmma); {hardware.name} is {arch}"
    return None


def num_splits(blocks: int, sms: int, kv_blocks: int, max_splits: int = 128) -> int:
    """FA2's ``num_splits_heuristic`` (csrc/flash_attn/flash_api.cpp): one split when the grid of
    ``blocks`` CTAs already fills 80 % of ``sms``, else the fewest splits of the ``kv_blocks`` key
    blocks whose wave efficiency is within 85 % of the best. FA2 passes twice the SM count
    (:func:`split_slots`)."""
    if blocks >= 0.8 * sms:
        return 1
    limit = max(1, min(max_splits, sms, kv_blocks))
    efficiency = [0.0] * (limit + 1)
    for splits in range(1, limit + 1):
        same = splits > 1 and math.ceil(kv_blocks / splits) == math.ceil(kv_blocks / (splits - 1))
        if not same:
            waves = blocks * splits / sms
            efficiency[splits] = waves / math.ceil(waves)
    best = max(efficiency)
    return next(s for s in range(1, limit + 1) if efficiency[s] >= 0.85 * best)


def split_slots(sm_count: int) -> int:
    """The SM count FA2's split heuristic works with: ``multiProcessorCount * 2``, "to hard-code
    the fact that we're using 128 threads per block" (set_params_splitkv, flash_api.cpp)."""
    return 2 * sm_count


def split_block_kv(head_dim: int) -> int:
    """``kBlockN`` of FA2's split-KV kernels: 256 up to head_dim 64, 128 up to 128, 64 above."""
    return 256 if head_dim <= 64 else 128 if head_dim <= 128 else 64


def flash_kernel(hardware: HardwareSpec, view: AttentionView, *, decode: bool) -> FlashKernel:
    """The kernel FlashAttention runs for ``view`` on ``hardware``. ``decode``: the op reads a
    KV cache (``flash_attn_with_kvcache``: the split-KV kernel whatever the query length)."""
    sm = hardware.compute.sm
    assert sm is not None
    head_dim = max(view.head_dim_qk, view.head_dim_v)
    asynchronous = kernel_mma(hardware, view)
    split = FlashKernel(
        name="splitkv",
        block_q=SPLIT_BLOCK_Q,
        block_kv=split_block_kv(head_dim),
        # FA3's split-KV decode issues wgmma like its prefill (one consumer warpgroup per
        # 64-row block, so no ping-pong overlap of the softmax)
        instruction=asynchronous or sm.warp_mma_instruction,
        softmax_overlapped=False,
    )
    if decode or view.seq_q <= DECODE_MAX_QUERY_ROWS:
        # MLA's shared latent cache decodes with FlashMLA on Hopper, unless FA2/FA3 is named
        mla = view.shared_kv and view.kernel_choice in (None, "flashmla")
        return FLASHMLA if mla and asynchronous is Instruction.WGMMA else split
    if asynchronous is Instruction.WGMMA and (
        view.kernel_choice == "fa3" or view.q.dtype.bits <= 8
    ):
        return _fa3_prefill(view)
    if asynchronous is not None:
        return _async_prefill(head_dim, asynchronous)
    return _fa2_prefill(hardware, view, head_dim)


def _fa3_prefill(view: AttentionView) -> FlashKernel:
    """FA3's prefill kernel on sm_90 (``wgmma``) with its blocks (:func:`fa3_blocks`)."""
    return _fa3_structure(*fa3_blocks(view), Instruction.WGMMA)


def fa3_warps(block_q: int) -> int:
    """Warps of an FA3 forward CTA: a consumer warpgroup per 64 query rows and the producer
    warpgroup (hopper/mainloop_fwd_sm90_tma_gmma_ws.hpp: ``AtomLayoutQK`` of ``kBlockM / 64``
    MMA warpgroups; the kernel adds one producer warpgroup)."""
    return 4 * (block_q // 64 + 1)


def _async_prefill(head_dim: int, asynchronous: Instruction) -> FlashKernel:
    """The FA3 structure with 128 x 128 blocks up to head_dim 128 and 128 x 64 above: sm_90's
    16-bit prefill when attr ``attention_kernel`` does not name FA3 (PyTorch's SDPA, which
    runs cuDNN's fused kernel on sm_90 (its ncu name holds a 64 x 128 x 128 tile) or FA3; the
    blocks the H200's cuDNN rows were checked with) and sm_100's ``tcgen05`` (an approximation
    until Blackwell's kernels are modelled)."""
    return _fa3_structure(128, 128 if head_dim <= 128 else 64, asynchronous)


def _fa3_structure(block_q: int, block_kv: int, instruction: Instruction) -> FlashKernel:
    """The FA3 structure (module docstring) on ``block_q x block_kv`` blocks: the softmax under
    the other warpgroups' GEMMs, the exponentials emulated on ``tcgen05`` (FlashAttention-4)."""
    return FlashKernel(
        name="fa3",
        block_q=block_q,
        block_kv=block_kv,
        instruction=instruction,
        softmax_overlapped=True,
        emulated_exponentials=instruction is Instruction.TCGEN05,
        warps=fa3_warps(block_q),
    )


def _fa2_prefill(hardware: HardwareSpec, view: AttentionView, head_dim: int) -> FlashKernel:
    """FA2's prefill kernel on the warp MMA: on NVIDIA GPUs with FA2's own blocks and warps
    (:func:`~opmodel.models.attention.launch_blocks.fa2_forward_blocks`), elsewhere (AMD's
    ``mfma``, generic configs) 128 x 128 up to head_dim 64, 128 x 64 up to 128 and 64 x 64
    above (module docstring)."""
    sm = hardware.compute.sm
    assert sm is not None
    arch = hardware.architecture or ""
    if arch.startswith("sm"):
        block_q, block_kv, warps = fa2_forward_blocks(
            head_dim,
            view.causal and view.window is None,
            is_sm8x(arch),
            sm.max_shared_memory_per_cta_bytes,
            sm.shared_memory_per_sm_bytes,
        )
    elif head_dim <= 64:
        block_q, block_kv, warps = 128, 128, 4
    else:
        block_q, block_kv, warps = (128, 64, 4) if head_dim <= 128 else (64, 64, 4)
    return FlashKernel(
        name="fa2",
        block_q=block_q,
        block_kv=block_kv,
        instruction=sm.warp_mma_instruction,
        softmax_overlapped=False,
        warps=warps,
    )
