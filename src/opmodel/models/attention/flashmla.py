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
The model runs that walk exactly (:func:`schedule_runs`: equal requests in a row taken together,
repeating cycles of parts counted at once, memoised; a few steps for any batch of equal requests):
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


_WalkState = tuple[int, int, int, int, int, int, int]


@lru_cache(maxsize=4096)
def schedule_runs(runs: tuple[tuple[int, int], ...], parts: int) -> tuple[int, int, int, int]:
    """:func:`schedule` over runs of ``(blocks, requests)``, requests of equal length in a row.
    A run costs a few steps however many requests it holds (:func:`_take_run`)."""
    fixed = _FIXED_OVERHEAD_BLOCKS
    payload = -(-sum((blocks + fixed) * count for blocks, count in runs) // parts) + fixed
    # (left in the part being filled, its blocks, its pieces, parts closed, busiest, its
    # pieces, partial pieces)
    walk: _WalkState = (payload, 0, 0, 0, 0, 0, 0)
    for request_blocks, requests in runs:
        walk = _take_run(walk, request_blocks, requests, payload)
    _, got, pieces, used, most, most_pieces, partials = walk
    if got > most or (got == most and pieces > most_pieces):
        most, most_pieces = got, pieces
    return min(parts, used + (got > 0)), most, most_pieces, partials


def _take_run(walk: _WalkState, request_blocks: int, requests: int, payload: int) -> _WalkState:
    """The walk over a run of ``requests`` requests of ``request_blocks`` blocks each. The
    requests a part takes whole are taken together; when the part being filled meets the run
    in a state it met before, the parts between repeat until the run ends, so all but the
    last of those cycles are counted at once (each adds the same parts and partials and no
    busier part). Equal requests therefore cost a few steps whatever their number."""
    unit, remaining = request_blocks + _FIXED_OVERHEAD_BLOCKS, requests
    seen: dict[tuple[int, int, int], tuple[int, int, int]] = {}
    while remaining:
        left, got, pieces, used, most, most_pieces, partials = walk
        before = seen.pop((left, got, pieces), None)
        if before is not None and (cycles := remaining // (before[0] - remaining) - 1) > 0:
            remaining -= cycles * (before[0] - remaining)
            used += cycles * (used - before[1])
            partials += cycles * (partials - before[2])
            seen.clear()
        seen[(left, got, pieces)] = (remaining, used, partials)
        whole = min(remaining, left // unit)  # requests the part takes whole, together
        left, got, pieces = left - whole * unit, got + whole * request_blocks, pieces + whole
        walk = (left, got, pieces, used, most, most_pieces, partials)
        remaining -= whole
        if remaining:  # the next one does not fit: cut it
            walk, remaining = _cut(walk, request_blocks, payload), remaining - 1
    return walk


def _cut(walk: _WalkState, request_blocks: int, payload: int) -> _WalkState:
    """One request the part being filled cannot take whole: cut where each part's payload
    ends, the rest into the next parts (a run of fresh parts that each cut ``payload - 5``
    blocks off it taken in one step), as ``get_mla_metadata`` does."""
    fixed = _FIXED_OVERHEAD_BLOCKS
    left, got, pieces, used, most, most_pieces, partials = walk
    cut_size = payload - fixed  # what a fresh part cuts off a request longer than its payload
    rest, cuts = request_blocks, 0
    while left < rest + fixed:  # the rest does not fit this part
        if left > fixed:  # cut it where the payload ends
            rest, got, pieces, cuts = rest - left + fixed, got + left - fixed, pieces + 1, cuts + 1
        if got > most or (got == most and pieces > most_pieces):
            most, most_pieces = got, pieces
        used, left, got, pieces = used + 1, payload, 0, 0
        if rest + fixed > payload:  # fresh parts that each cut cut_size blocks
            run = (rest + fixed - payload + cut_size - 1) // cut_size
            rest, cuts, used = rest - run * cut_size, cuts + run, used + run
            if cut_size > most or (cut_size == most and most_pieces < 1):
                most, most_pieces = cut_size, 1
    partials += cuts + 1 if cuts else 0
    return left - rest - fixed, got + rest, pieces + 1, used, most, most_pieces, partials


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
