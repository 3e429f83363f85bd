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
The model runs that walk exactly (:func:`schedule_runs`: one step per part, the whole requests
of a run of equal ones a part holds taken together, memoised; at most ``parts + runs`` steps):
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
from opmodel.models.attention.kernels import FLASHMLA, FlashKernel
from opmodel.models.attention.split_grid import (
    DecodeGrid,
    decode_blocks,
    request_keys,
    table_entries,
)

__all__ = ["FLASHMLA", "flashmla_grid", "schedule", "schedule_runs"]

_FIXED_OVERHEAD_BLOCKS = 5  # Config::FIXED_OVERHEAD_NUM_BLOCKS, get_mla_metadata's weight


def schedule(blocks: tuple[int, ...], parts: int) -> tuple[int, int, int, int]:
    """``get_mla_metadata``'s walk over the requests' key ``blocks`` for ``parts`` parts
    (module docstring): (parts with work, the busiest part's blocks, the request pieces it
    starts, the pieces of cut requests, which write partial outputs)."""
    runs: list[tuple[int, int]] = []
    for request_blocks in blocks:
        if runs and runs[-1][0] == request_blocks:
            runs[-1] = (request_blocks, runs[-1][1] + 1)
        else:
            runs.append((request_blocks, 1))
    return schedule_runs(tuple(runs), parts)


@lru_cache(maxsize=4096)
def schedule_runs(runs: tuple[tuple[int, int], ...], parts: int) -> tuple[int, int, int, int]:
    """:func:`schedule` over runs of ``(blocks, requests)``, requests of equal length in a row:
    one step per part, the whole requests of a run a part holds taken together, so the walk
    costs ``O(parts + runs)`` however many requests a run holds."""
    if not runs:  # no requests: no part gets work
        return 0, 0, 0, 0
    fixed = _FIXED_OVERHEAD_BLOCKS
    payload = -(-sum((blocks + fixed) * count for blocks, count in runs) // parts) + fixed
    following = iter(runs[1:])
    blocks, left = runs[0]  # the run being placed and its requests not yet finished
    unit = blocks + fixed
    done = cut_pieces = 0  # the current request's blocks given out and its pieces so far
    used = most = most_pieces = partials = 0
    while used < parts and left:
        used += 1
        remain = payload
        got = pieces = 0
        while left and remain >= blocks - done + fixed:  # the current request's rest fits
            remain -= blocks - done + fixed
            got += blocks - done
            if cut_pieces:
                partials += 2 if cut_pieces == 1 else 1
            whole = remain // unit  # and whole requests behind it, taken together
            if whole >= left:
                whole = left - 1
            remain -= whole * unit
            got += whole * blocks
            pieces += 1 + whole
            left -= 1 + whole
            done = cut_pieces = 0
            if not left:  # the run is placed: on to the next ((0, 0) after the last)
                blocks, left = next(following, (0, 0))
                unit = blocks + fixed
        if left and remain > fixed:  # cut the current request where the payload ends
            got += remain - fixed
            done += remain - fixed
            pieces += 1
            if cut_pieces:
                partials += 2 if cut_pieces == 1 else 1
            cut_pieces += 1
        if got > most or (got == most and pieces > most_pieces):
            most, most_pieces = got, pieces
    return used, most, most_pieces, partials


def flashmla_grid(kernel: FlashKernel, view: AttentionView, sm_count: int) -> DecodeGrid:
    """FlashMLA's persistent grid for ``view`` on ``sm_count`` SMs (module docstring)."""
    m_blocks, kv_len, kv_blocks = decode_blocks(kernel, view)
    parts = max(1, sm_count // view.heads_kv // m_blocks)
    keys = request_keys(view)
    if keys is None:
        used, longest, pieces, partials = schedule_runs(((kv_blocks, view.batch),), parts)
        block_sum = kv_blocks * view.batch
    else:
        size = kernel.block_kv
        blocks = tuple([(k + size - 1) // size for k in keys])
        used, longest, pieces, partials = schedule(blocks, parts)
        block_sum = sum(blocks)
    return DecodeGrid.make(
        m_blocks=m_blocks,
        kv_len=kv_len,
        kv_blocks=kv_blocks,
        splits=max(1, math.ceil(used / view.batch)),
        ctas=m_blocks * view.heads_kv * used,
        tiles_per_cta=math.ceil(block_sum / used),
        keys_read=view.batch * kv_len if keys is None else sum(keys),
        table_entries=table_entries(view, keys, kv_len),
        partials=partials,
        longest_tiles=longest,
        longest_pieces=pieces,
    )
