"""Tiles of a FlashAttention kernel's (query block, key/value block) grid, in closed form.

A query block ``b`` holds rows ``[b Br, min((b + 1) Br, Sq))``. With a bottom-right-aligned
causal mask, row ``i`` sees keys ``j <= i + (Skv - Sq)``, so block ``b`` visits
``ceil(clamp(min((b + 1) Br, Sq) + Skv - Sq, 0, Skv) / Bc)`` key blocks; without a mask, all
``ceil(Skv / Bc)``. The count of every block but the last is the clamped floor of a linear
function, ``clamp(floor((Br b + Br + Skv - Sq + Bc - 1) / Bc), 0, nk)``, for any ``Br`` and
``Bc`` (FA3's blocks need not divide each other: 128 x 176, 192 x 160, 128 x 224). Such sums
are taken in ``O(log Bc)`` by the Euclid-like reduction of sums of floors
(:func:`floor_sum`): no loop over blocks.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from functools import lru_cache

from opmodel.core.values import FastValue, value_type

__all__ = [
    "TileCounts",
    "TileShape",
    "batch_tile_counts",
    "floor_sum",
    "request_tile_counts",
    "tile_counts",
    "windowed_tile_counts",
]


def _ceil_div(a: int, b: int) -> int:
    return -((-a) // b)


def floor_sum(count: int, divisor: int, slope: int, offset: int) -> int:
    """``sum(floor((slope * i + offset) / divisor) for i in range(count))`` in ``O(log)``
    steps, for ``slope >= 0`` and ``divisor > 0`` (any integer ``offset``).

    The Euclid-like reduction (Graham, Knuth and Patashnik, "Concrete Mathematics", 2nd ed.,
    1994, section 3.5, sums of floors): whole multiples of the divisor in ``slope`` and
    ``offset`` come out as arithmetic series; what is left, ``slope < divisor``, counts the
    lattice points under the line ``y = (slope x + offset) / divisor``, which is the same sum
    with the axes swapped: ``divisor`` and ``slope`` trade places, as in Euclid's algorithm."""
    if count <= 0:
        return 0
    total, offset = offset // divisor * count, offset % divisor
    while True:
        if slope >= divisor:
            total += slope // divisor * (count * (count - 1) // 2)
            slope %= divisor
        if offset >= divisor:
            total += offset // divisor * count
            offset %= divisor
        top = slope * count + offset
        if top < divisor:
            return total
        count, offset = divmod(top, divisor)
        divisor, slope = slope, divisor


def _first_reaching(slope: int, offset: int, divisor: int, level: int) -> int:
    """The least integer ``b`` with ``floor((slope b + offset) / divisor) >= level``
    (``slope > 0``)."""
    return -((offset - level * divisor) // slope)


def _clamped_floor_sum(line: tuple[int, int, int], first: int, last: int, high: int) -> int:
    """``sum(clamp(floor((slope j + offset) / divisor), 0, high) for j in first..last)``
    without the loop (``line = (slope, offset, divisor)``, ``slope > 0``)."""
    if last < first:
        return 0
    slope, offset, divisor = line
    low_j = max(first, _first_reaching(slope, offset, divisor, 1))  # first positive value
    high_j = min(last, _first_reaching(slope, offset, divisor, high) - 1)  # last below high
    total = 0
    if high_j >= low_j:
        total += floor_sum(high_j - low_j + 1, divisor, slope, slope * low_j + offset)
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
    """Tiles one (batch, head) visits, with or without a causal mask, for any block sizes."""
    return _tiles(seq_q, seq_kv, (block_q, block_kv), causal, None)


def windowed_tile_counts(
    seq_q: int, seq_kv: int, block_q: int, block_kv: int, window: int
) -> TileCounts:
    """Tiles of a causal mask with a sliding ``window``: block ``b`` starts at key block
    ``floor(max(0, b Br + off - window + 1) / Bc)``. The sum of those starts is subtracted, by
    the same clamped sum of floors, and the longest block is found among the count's
    breakpoints and one period of its unclamped stretch (:func:`_longest_windowed`)."""
    return _tiles(seq_q, seq_kv, (block_q, block_kv), True, window)


@lru_cache(maxsize=65536)  # pure in its integers; a sweep's lengths repeat
def _tiles(
    seq_q: int, seq_kv: int, blocks: tuple[int, int], causal: bool, window: int | None
) -> TileCounts:
    block_q, block_kv = blocks
    q_blocks = _ceil_div(seq_q, block_q)
    kv_blocks = _ceil_div(seq_kv, block_kv)
    if not causal:
        return TileCounts(
            q_blocks=q_blocks,
            kv_blocks=kv_blocks,
            tiles=q_blocks * kv_blocks,
            longest_block_tiles=kv_blocks,
        )
    shift = seq_kv - seq_q
    # block b < q_blocks - 1 ends at key block ceil(((b + 1) Br + shift) / Bc)
    end_line = (block_q, block_q + shift + block_kv - 1, block_kv)
    body = _clamped_floor_sum(end_line, 0, q_blocks - 2, kv_blocks)
    last = kv_blocks if seq_kv > 0 else 0  # the last block ends at row Sq - 1: all Skv keys
    if window is None:
        return TileCounts(
            q_blocks=q_blocks, kv_blocks=kv_blocks, tiles=body + last, longest_block_tiles=last
        )
    # block b starts at key block floor(max(0, b Br + shift - window + 1) / Bc)
    start_line = (block_q, shift - window + 1, block_kv)
    starts = _clamped_floor_sum(start_line, 0, q_blocks - 1, kv_blocks)
    return TileCounts(
        q_blocks=q_blocks,
        kv_blocks=kv_blocks,
        tiles=body + last - starts,
        longest_block_tiles=_longest_windowed(end_line, start_line, q_blocks, kv_blocks),
    )


def _longest_windowed(
    end_line: tuple[int, int, int], start_line: tuple[int, int, int], q_blocks: int, high: int
) -> int:
    """The most key blocks any query block of a windowed mask visits. Where the end is
    clamped the count only grows (start at 0) or only shrinks (end at ``high``) with the
    block, so those stretches peak at their bounds; where neither is clamped it depends on
    ``(Br b + c) mod Bc`` alone, which repeats every ``Bc / gcd(Br, Bc)`` blocks: one period
    of those blocks is looked at (at most ``Bc / 16`` for FlashAttention's blocks)."""
    slope, _, divisor = end_line

    def clamped(line: tuple[int, int, int], b: int) -> int:
        return min(high, max(0, (line[0] * b + line[1]) // line[2]))

    def visited(b: int) -> int:
        end = high if b == q_blocks - 1 else clamped(end_line, b)
        return end - clamped(start_line, b)

    end_from = _first_reaching(slope, end_line[1], divisor, 1)
    end_full = _first_reaching(slope, end_line[1], divisor, high)
    start_from = _first_reaching(slope, start_line[1], divisor, 1)
    both = max(end_from, start_from, 0)
    candidates = {0, q_blocks - 1, max(end_full, start_from)}
    for bound in (end_from, end_full, start_from):
        candidates |= {bound - 1, bound}
    candidates |= set(range(both, min(both + divisor // math.gcd(slope, divisor), end_full)))
    return max(visited(b) for b in candidates if 0 <= b < q_blocks)
