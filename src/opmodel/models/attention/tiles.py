"""Tiles of a FlashAttention kernel's (query block, key/value block) grid, in closed form.

A query block ``b`` holds rows ``[b Br, min((b + 1) Br, Sq))``. With a bottom-right-aligned
causal mask, row ``i`` sees keys ``j <= i + (Skv - Sq)``, so block ``b`` visits
``ceil(clamp(min((b + 1) Br, Sq) + Skv - Sq, 0, Skv) / Bc)`` key blocks; without a mask, all
``ceil(Skv / Bc)``. With ``Br = k Bc`` the count of every block but the last is the clamped
linear function ``clamp(k (b + 1) + ceil((Skv - Sq) / Bc), 0, nk)``, summed here as arithmetic
series: no loop over blocks.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import lru_cache

from opmodel.core.values import FastValue, value_type

__all__ = [
    "TileCounts",
    "TileShape",
    "batch_tile_counts",
    "request_tile_counts",
    "tile_counts",
    "windowed_tile_counts",
]


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def _clamped_linear_sum(slope: int, offset: int, first: int, last: int, high: int) -> int:
    """``sum(clamp(slope * j + offset, 0, high) for j in first..last)`` without the loop."""
    if last < first:
        return 0
    low_j = max(first, (-offset) // slope + 1)  # first j with a positive value
    high_j = min(last, _ceil_div(high - offset, slope) - 1)  # last j below ``high``
    total = 0
    if high_j >= low_j:
        count = high_j - low_j + 1
        total += slope * (low_j + high_j) * count // 2 + offset * count
    saturated_from = max(first, high_j + 1, low_j)
    if last >= saturated_from:
        total += high * (last - saturated_from + 1)
    return total


@value_type
class TileCounts(FastValue):
    """Per (batch, head): query blocks, key blocks, tiles visited, and the longest block's
    (:func:`batch_tile_counts`: per head over a batch of requests at different lengths)."""

    q_blocks: int
    kv_blocks: int
    tiles: int
    longest_block_tiles: int


TileShape = tuple[int, int, bool, int | None]
"""A kernel's tile grid for counting: (block_q, block_kv, causal, sliding window or None)."""


def request_tile_counts(shape: TileShape, seq_q: int, seq_kv: int) -> TileCounts:
    """Tiles one (batch, head) of ``seq_q`` queries and ``seq_kv`` keys visits on ``shape``:
    :func:`tile_counts`, or :func:`windowed_tile_counts` with a window (which is causal)."""
    block_q, block_kv, causal, window = shape
    return _tiles(seq_q, seq_kv, (block_q, block_kv), causal, window)


@lru_cache(maxsize=4096)  # a kernel's evaluations of one op; a sweep's repeated batches
def batch_tile_counts(
    per_request: Callable[[TileShape, int, int], TileCounts],
    shape: TileShape,
    lengths: tuple[tuple[int, int], ...],
) -> TileCounts:
    """Tiles of one head over a batch whose requests hold different ``(queries, keys)``
    lengths (attrs ``q_lengths``, ``kv_lengths``): query blocks, key blocks and tiles summed
    over the requests (each request's blocks are CTAs of its own), the longest block the
    longest of any request. ``per_request(shape, queries, keys)`` counts one request (the
    forward's :func:`request_tile_counts`, or the backward pass's grid; distinct lengths
    counted once). O(batch), no loop over blocks; memoised."""
    seen: dict[tuple[int, int], TileCounts] = {}
    q_blocks = kv_blocks = tiles = longest = 0
    for pair in lengths:
        counts = seen.get(pair)
        if counts is None:
            counts = seen[pair] = per_request(shape, *pair)
        q_blocks, kv_blocks = q_blocks + counts.q_blocks, kv_blocks + counts.kv_blocks
        tiles, longest = tiles + counts.tiles, max(longest, counts.longest_block_tiles)
    return TileCounts(
        q_blocks=q_blocks, kv_blocks=kv_blocks, tiles=tiles, longest_block_tiles=longest
    )


def tile_counts(seq_q: int, seq_kv: int, block_q: int, block_kv: int, causal: bool) -> TileCounts:
    """Tiles one (batch, head) visits; causal masks need ``block_q`` a multiple of ``block_kv``."""
    return _tiles(seq_q, seq_kv, (block_q, block_kv), causal, None)


def windowed_tile_counts(
    seq_q: int, seq_kv: int, block_q: int, block_kv: int, window: int
) -> TileCounts:
    """Tiles of a causal mask with a sliding ``window``: block ``b`` starts at key block
    ``floor(max(0, b Br + off - window + 1) / Bc)``. The sum of those starts is subtracted, by
    the same clamped arithmetic series, and the longest block is found among the breakpoints
    of the (concave, piecewise linear) count per block."""
    return _tiles(seq_q, seq_kv, (block_q, block_kv), True, window)


@lru_cache(maxsize=65536)  # pure in its integers; a sweep's lengths repeat
def _tiles(
    seq_q: int, seq_kv: int, blocks: tuple[int, int], causal: bool, window: int | None
) -> TileCounts:
    block_q, block_kv = blocks
    if causal and block_q % block_kv:
        msg = f"block_q {block_q} must be a multiple of block_kv {block_kv}"
        raise ValueError(msg)
    q_blocks = _ceil_div(seq_q, block_q)
    kv_blocks = _ceil_div(seq_kv, block_kv)
    if not causal:
        return TileCounts(
            q_blocks=q_blocks,
            kv_blocks=kv_blocks,
            tiles=q_blocks * kv_blocks,
            longest_block_tiles=kv_blocks,
        )
    offset = _ceil_div(seq_kv - seq_q, block_kv)
    ratio = block_q // block_kv
    body = _clamped_linear_sum(ratio, offset, 1, q_blocks - 1, kv_blocks)
    last = kv_blocks if seq_kv > 0 else 0  # the last block ends at row Sq - 1: all Skv keys
    if window is None:
        return TileCounts(
            q_blocks=q_blocks, kv_blocks=kv_blocks, tiles=body + last, longest_block_tiles=last
        )
    start = (seq_kv - seq_q - window + 1) // block_kv  # floor; clamped at 0 below
    starts = _clamped_linear_sum(ratio, start, 0, q_blocks - 1, kv_blocks)

    def visited(b: int) -> int:
        end = last if b == q_blocks - 1 else min(kv_blocks, max(0, ratio * (b + 1) + offset))
        return end - min(kv_blocks, max(0, ratio * b + start))

    candidates = {0, q_blocks - 1, -(-start // ratio), (kv_blocks - offset) // ratio - 1}
    candidates |= {c + d for c in tuple(candidates) for d in (-1, 1)}
    longest = max(visited(b) for b in candidates if 0 <= b < q_blocks)
    return TileCounts(
        q_blocks=q_blocks,
        kv_blocks=kv_blocks,
        tiles=body + last - starts,
        longest_block_tiles=longest,
    )
