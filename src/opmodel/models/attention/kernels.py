"""Which FlashAttention kernel runs, its block sizes and how its softmax overlaps the MMAs.

* ``fa2`` (FlashAttention-2, Dao 2023; sm_80, sm_86, sm_89, and sm_90 when no ``wgmma`` is
  modelled): warp-level ``mma.sync``, 4 warps per CTA. Block sizes follow the shape of FA2's
  forward launch templates (csrc/flash_attn/src/flash_fwd_launch_template.h), approximately:
  128 x 128 for head_dim <= 64, 128 x 64 up to 128, 64 x 64 up to 256. Within a CTA the
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

__all__ = [
    "FLASHMLA",
    "DecodeGrid",
    "FlashKernel",
    "async_mma_instruction",
    "decode_blocks",
    "decode_grid",
    "flash_kernel",
    "kernel_choice_problem",
    "kernel_mma",
    "num_splits",
    "request_keys",
    "split_block_kv",
    "split_slots",
    "table_entries",
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


# FlashMLA's dense decode kernel (sm_90, attr shared_kv: MLA's one latent cache;
# :mod:`.flashmla`): Flash_fwd_kernel_traits_mla<576, 64, 64, 8 warps>, wgmma
FLASHMLA = FlashKernel(
    name="flashmla",
    block_q=64,
    block_kv=64,
    instruction=Instruction.WGMMA,
    softmax_overlapped=False,
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
    return _prefill_kernel(sm.warp_mma_instruction, head_dim, asynchronous)


def _fa3_prefill(view: AttentionView) -> FlashKernel:
    """FA3's prefill kernel on sm_90 (``wgmma``) with its blocks (:func:`fa3_blocks`)."""
    block_q, block_kv = fa3_blocks(view)
    return FlashKernel(
        name="fa3",
        block_q=block_q,
        block_kv=block_kv,
        instruction=Instruction.WGMMA,
        softmax_overlapped=True,
    )


def _prefill_kernel(
    warp_mma: Instruction, head_dim: int, asynchronous: Instruction | None
) -> FlashKernel:
    """The FA3 structure with 128 x 128 blocks up to head_dim 128 and 128 x 64 above: sm_90's
    16-bit prefill when attr ``attention_kernel`` does not name FA3 (PyTorch's SDPA, which
    runs cuDNN's fused kernel on sm_90 (its ncu name holds a 64 x 128 x 128 tile) or FA3; the
    blocks the H200's cuDNN rows were checked with) and sm_100's ``tcgen05`` (an approximation
    until Blackwell's kernels are modelled); or FA2's prefill kernel on the warp MMA (module
    docstring)."""
    if asynchronous is not None:
        block_kv = 128 if head_dim <= 128 else 64
        return FlashKernel(
            name="fa3",
            block_q=128,
            block_kv=block_kv,
            instruction=asynchronous,
            softmax_overlapped=True,
            emulated_exponentials=asynchronous is Instruction.TCGEN05,
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
        instruction=warp_mma,
        softmax_overlapped=False,
    )


@value_type
class DecodeGrid(FastValue):
    """How split-KV decode cuts the work: query-row blocks, key range, splits, CTAs."""

    m_blocks: int  # blocks of packed query rows per KV head (GQA packing)
    kv_len: int  # keys a full request reads (a sliding window reads only its last keys)
    kv_blocks: int
    splits: int
    ctas: int  # CTAs with work (a split past a short request's keys exits at once)
    tiles_per_cta: int  # their mean key blocks
    keys_read: int  # keys the batch's requests read, summed
    table_entries: int  # block-table entries read (a paged cache's pages in use; 0 contiguous)
    # one request's fp32 partial outputs, written by each piece of a request the grid cuts and
    # merged by a combine kernel (0 when no request is cut)
    partials: int = 0
    longest_tiles: int = 0  # the busiest CTA's key blocks (kv_lengths, FlashMLA's parts)
    longest_pieces: int = 1  # request pieces that CTA starts, each with its own pipeline fill


def request_keys(view: AttentionView) -> tuple[int, ...] | None:
    """Keys each request's decode reads (attr ``kv_lengths``, at most a sliding window's last
    ``window + seq_q - 1``); ``None`` when every request reads the same."""
    if view.kv_lengths is None:
        return None
    if view.window is None:
        return view.kv_lengths
    reach = view.window + view.seq_q - 1
    return tuple(min(length, reach) for length in view.kv_lengths)


def decode_blocks(kernel: FlashKernel, view: AttentionView) -> tuple[int, int, int]:
    """(query blocks per KV head, keys a full request reads, key blocks) of a decode kernel's
    grid: of the cache's capacity (K's seq dim) when requests differ in length."""
    group = max(1, view.heads_q // max(1, view.heads_kv))
    rows = view.seq_q * group  # GQA packing: a KV head's query heads share its blocks
    # a sliding window reads only the last window + seq_q - 1 keys
    kv_len = min(view.seq_kv, view.window + view.seq_q - 1) if view.window else view.seq_kv
    return math.ceil(rows / kernel.block_q), kv_len, math.ceil(kv_len / kernel.block_kv)


def table_entries(view: AttentionView, keys: tuple[int, ...] | None, kv_len: int) -> int:
    """Block-table entries a paged decode reads: each request's pages in use (0 contiguous)."""
    page = view.page_size
    if not page:
        return 0
    if keys is None:
        return view.batch * math.ceil(kv_len / page)
    return sum(-(-k // page) for k in keys)


def decode_grid(kernel: FlashKernel, view: AttentionView, sm_count: int) -> DecodeGrid:
    """Split-KV decode's grid for ``view`` on ``sm_count`` SMs (module docstring). FA2 sizes the
    split by the cache's capacity (``seqlen_k``); with ``kv_lengths`` a request's split CTAs
    clip their key range to its length (``n_block_max``, flash_fwd_kernel.h), so each request
    keeps ``ceil(blocks / per split)`` CTAs with work."""
    m_blocks, kv_len, kv_blocks = decode_blocks(kernel, view)
    grid = view.batch * view.heads_kv * m_blocks
    splits = num_splits(grid, split_slots(sm_count), kv_blocks)
    per_split = math.ceil(kv_blocks / splits)
    keys = request_keys(view)
    if keys is None:
        pieces, tiles, longest = view.batch * splits, view.batch * splits * per_split, per_split
    else:
        blocks = [-(-k // kernel.block_kv) for k in keys]
        # a request's CTAs past its last block exit at once
        pieces = sum(-(-n // per_split) for n in blocks)
        tiles, longest = sum(blocks), min(per_split, max(blocks))
    return DecodeGrid.make(
        m_blocks=m_blocks,
        kv_len=kv_len,
        kv_blocks=kv_blocks,
        splits=splits,
        ctas=pieces * view.heads_kv * m_blocks,
        tiles_per_cta=math.ceil(tiles / pieces),
        keys_read=view.batch * kv_len if keys is None else sum(keys),
        table_entries=table_entries(view, keys, kv_len),
        partials=view.batch * splits if splits > 1 else 0,
        longest_tiles=longest,
    )
