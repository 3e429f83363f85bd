"""FlashMLA: DeepSeek's decode kernel for Multi-head Latent Attention on sm_90 (attr ``shared_kv``).

MLA's absorbed form attends every query head to one latent cache (MQA): keys of 576 channels
(512 latent + 64 rotary), values the first 512 of the same rows, read once. On Hopper its
decode runs FlashMLA (Li and Liu 2025, github.com/deepseek-ai/FlashMLA; the kernel vLLM and
SGLang serve DeepSeek-V3 with): ``Flash_fwd_kernel_traits_mla<576, 64, 64, 8 warps>``, blocks
of 64 packed query rows (the query heads of the KV head, times the query tokens) by 64 keys,
two warpgroups on ``wgmma`` and one CTA per SM (the 64 x 512 fp32 output fills the register
file, as its deep-dive note says).

Its grid is persistent and balanced rather than FA2's split heuristic (``get_mla_metadata``,
csrc/flash_api.cpp): ``num_sm_parts = SMs // heads_kv // m_blocks`` parts, each running
``m_blocks x heads_kv`` CTAs side by side (one wave, at most one CTA per SM). The scheduler
weighs a request as its key blocks plus 5 (``FIXED_OVERHEAD_NUM_BLOCKS``), gives each part a
payload of ``P = ceil(T / parts) + 5`` of the ``T = sum(blocks_i + 5)`` units and fills the
parts in order: a part takes whole requests while they fit and cuts the next one where its
payload ends (when at least one block fits beside the 5), leaving the rest to the next part.
The model runs that walk exactly (:func:`schedule`, O(batch + parts) integer steps, memoised):
how many parts get work, the busiest part's key blocks and the request pieces it starts, and
the pieces of the requests cut, each of which writes fp32 partial outputs that the combine
kernel (launched after every call) merges. At 4,096 tokens per request, 128 requests and 16
query heads every part takes one whole request (69 units in a payload of 72) and nothing is
cut; with lengths drawn around the same mean the busiest part holds 4-11 % more blocks, as
the published varlen times are 7-13 % longer. Per-tile time is the split-KV tile law
(:func:`~opmodel.models.attention.costs.tile_cycles`, MMA then softmax): its 85 % tensor
occupancy at 576/512 channels is what DeepSeek reports for the seesaw schedule (up to 80 % of
the throttled peak, docs/models/attention.md).
"""

from __future__ import annotations

import math
from functools import lru_cache

from opmodel.core.views_matmul import AttentionView
from opmodel.models.attention.kernels import (
    FLASHMLA,
    DecodeGrid,
    FlashKernel,
    decode_blocks,
    request_keys,
    table_entries,
)

__all__ = ["FLASHMLA", "flashmla_grid", "schedule"]

_FIXED_OVERHEAD_BLOCKS = 5  # Config::FIXED_OVERHEAD_NUM_BLOCKS, get_mla_metadata's weight


@lru_cache(maxsize=4096)
def schedule(blocks: tuple[int, ...], parts: int) -> tuple[int, int, int, int]:
    """``get_mla_metadata``'s walk over the requests' key ``blocks`` for ``parts`` parts
    (module docstring): (parts with work, the busiest part's blocks, the request pieces it
    starts, the pieces of cut requests, which write partial outputs). One step per request; a
    run of parts that each cut the same long request is taken in one step."""
    fixed = _FIXED_OVERHEAD_BLOCKS
    payload = -(-(sum(blocks) + fixed * len(blocks)) // parts) + fixed
    cut_size = payload - fixed  # what a fresh part cuts off a request longer than its payload
    used = partials = most = most_pieces = got = pieces = 0
    left = payload  # what the part being filled has left
    for request_blocks in blocks:
        rest, cuts = request_blocks, 0
        while left < rest + fixed:  # the rest does not fit this part
            if left > fixed:  # cut it where the payload ends
                rest, got, pieces, cuts = (
                    rest - left + fixed,
                    got + left - fixed,
                    pieces + 1,
                    cuts + 1,
                )
            if got > most or (got == most and pieces > most_pieces):
                most, most_pieces = got, pieces
            used, left, got, pieces = used + 1, payload, 0, 0
            if rest + fixed > payload:  # fresh parts that each cut cut_size blocks
                run = (rest + fixed - payload + cut_size - 1) // cut_size
                rest, cuts, used = rest - run * cut_size, cuts + run, used + run
                if cut_size > most or (cut_size == most and most_pieces < 1):
                    most, most_pieces = cut_size, 1
        left, got, pieces = left - rest - fixed, got + rest, pieces + 1
        partials += cuts + 1 if cuts else 0
    if got > most or (got == most and pieces > most_pieces):
        most, most_pieces = got, pieces
    return min(parts, used + (got > 0)), most, most_pieces, partials


def flashmla_grid(kernel: FlashKernel, view: AttentionView, sm_count: int) -> DecodeGrid:
    """FlashMLA's persistent grid for ``view`` on ``sm_count`` SMs (module docstring)."""
    m_blocks, kv_len, kv_blocks = decode_blocks(kernel, view)
    parts = max(1, sm_count // view.heads_kv // m_blocks)
    keys = request_keys(view)
    if keys is None:
        blocks = (kv_blocks,) * view.batch
    else:
        size = kernel.block_kv
        blocks = tuple([(k + size - 1) // size for k in keys])
    used, longest, pieces, partials = schedule(blocks, parts)
    return DecodeGrid.make(
        m_blocks=m_blocks,
        kv_len=kv_len,
        kv_blocks=kv_blocks,
        splits=max(1, math.ceil(used / view.batch)),
        ctas=m_blocks * view.heads_kv * used,
        tiles_per_cta=math.ceil(sum(blocks) / used),
        keys_read=view.batch * kv_len if keys is None else sum(keys),
        table_entries=table_entries(view, keys, kv_len),
        partials=partials,
        longest_tiles=longest,
        longest_pieces=pieces,
    )
