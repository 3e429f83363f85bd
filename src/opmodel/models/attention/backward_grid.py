"""The backward pass's grid (:mod:`.backward`): tiles counted on the ``Bc x Bc`` grid, with
each key block's CTA as the unit of work, per (batch, head) or, for requests of different
lengths, per head over the batch."""

from __future__ import annotations

import math

from opmodel.core.views_matmul import AttentionView
from opmodel.models.attention.kernels import FlashKernel
from opmodel.models.attention.tiles import (
    TileCounts,
    batch_tile_counts,
    request_tile_counts,
)

__all__ = ["backward_heads", "backward_tiles"]


def backward_tiles(kernel: FlashKernel, view: AttentionView) -> TileCounts:
    """Per (batch, head): query blocks, key blocks, tiles, and the most tiles one key block's
    CTA visits (``longest_block_tiles``), counted on the ``Bc x Bc`` grid (module docstring);
    with per-request lengths, per head over the batch (:func:`batch_tile_counts`)."""
    lengths = view.request_lengths()
    shape = (kernel.block_q, kernel.block_kv, view.causal, view.window)
    if lengths is None:
        return _request_tiles(shape, view.seq_q, view.seq_kv)
    return batch_tile_counts(_request_tiles, shape, lengths)


def backward_heads(view: AttentionView) -> int:
    """The heads :func:`backward_tiles`' counts repeat over: ``batch x heads_q``, or
    ``heads_q`` when they are summed over the requests."""
    return view.heads_q if view.kv_lengths is not None else view.batch * view.heads_q


def _request_tiles(shape: tuple[int, int, bool, int | None], seq_q: int, seq_kv: int) -> TileCounts:
    """:func:`backward_tiles` of one request of ``seq_q`` queries and ``seq_kv`` keys, for
    ``shape = (block_q, block_kv, causal, window)``."""
    block_q, bc, causal, window = shape
    ratio = bc // block_q
    coarse = request_tile_counts((bc, bc, causal, window), seq_q, seq_kv)
    q_blocks = math.ceil(seq_q / block_q)
    tiles = min(q_blocks * coarse.kv_blocks, ratio * coarse.tiles)
    # without a window the first key block is seen by every query row (seq_q <= seq_kv when
    # causal); a band's key block by about as many query blocks as a query block's key blocks
    longest = min(q_blocks, ratio * coarse.longest_block_tiles) if window else q_blocks
    return TileCounts(
        q_blocks=q_blocks, kv_blocks=coarse.kv_blocks, tiles=tiles, longest_block_tiles=longest
    )
