"""Split-KV decode's grid (FA2's ``flash_attn_with_kvcache``; :mod:`.decode`, and FlashMLA's
scheduler in :mod:`.flashmla`): query-row blocks with GQA packing, the key range a request
reads, the split FA2's ``num_splits_heuristic`` picks, the CTAs with work and the block-table
entries of a paged cache. The kernel and its blocks are :mod:`.kernels`'."""

from __future__ import annotations

import math

from opmodel.core.values import FastValue, value_type
from opmodel.core.views_matmul import AttentionView
from opmodel.models.attention.kernels import FlashKernel, num_splits, split_slots

__all__ = ["DecodeGrid", "decode_blocks", "decode_grid", "request_keys", "table_entries"]


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
