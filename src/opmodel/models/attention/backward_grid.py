"""The backward pass's grid (:mod:`.backward`): tiles counted on the ``Br x Bc`` grid, with
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
    CTA visits (``longest_block_tiles``), counted on the ``Br x Bc`` grid (module docstring);
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
    ``shape = (block_q, block_kv, causal, window)``: the tiles are the forward's on the same
    ``Br x Bc`` grid (any pair of blocks, :func:`request_tile_counts`); the key block most
    query blocks see is key block 0 without a window (every query row sees it when causal with
    ``seq_q <= seq_kv``), and with one about as many query blocks as a ``Bc``-row query block
    sees key blocks, counted on the ``Bc x Bc`` grid and scaled by ``Bc / Br``."""
    block_q, bc, causal, window = shape
    exact = request_tile_counts(shape, seq_q, seq_kv)
    longest = exact.q_blocks
    if window:
        coarse = request_tile_counts((bc, bc, causal, window), seq_q, seq_kv)
        longest = min(longest, math.ceil(coarse.longest_block_tiles * bc / block_q))
    return TileCounts(
        q_blocks=exact.q_blocks,
        kv_blocks=exact.kv_blocks,
        tiles=exact.tiles,
        longest_block_tiles=longest,
    )
