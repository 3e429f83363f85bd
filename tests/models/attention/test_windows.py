"""Sliding-window attention: tile counts and score pairs against enumeration, prefill and decode, the causal requirement."""

from __future__ import annotations

import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import LocalOp
from opmodel.core.errors import OpModelError
from opmodel.core.views_matmul import windowed_score_pairs
from opmodel.models.attention.tiles import windowed_tile_counts
from tests.models.attention.ops import H100, MODEL, attention, evaluation


def _windowed(batch: int, seq: int, window: int, seq_q: int | None = None) -> LocalOp:
    op = attention(batch, 32, seq, 128, causal=True, kv_heads=8, seq_q=seq_q)
    attrs = {**op.attrs, "causal": True, "window": window}
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)


def _brute_windowed(
    seq_q: int, seq_kv: int, block_q: int, block_kv: int, window: int
) -> tuple[int, int]:
    total = longest = 0
    for block in range(math.ceil(seq_q / block_q)):
        end = min((block + 1) * block_q, seq_q)
        last_key = min(max(end + seq_kv - seq_q, 0), seq_kv)
        first_key = max(0, block * block_q + seq_kv - seq_q - window + 1)
        tiles = max(0, math.ceil(last_key / block_kv) - first_key // block_kv)
        total, longest = total + tiles, max(longest, tiles)
    return total, longest


@given(
    st.integers(1, 3000),
    st.integers(0, 3000),
    st.integers(1, 4000),
    st.sampled_from([16, 32, 64, 80, 128, 160, 176, 192, 224]),
    st.sampled_from([16, 32, 64, 80, 128, 160, 176, 192, 224]),
)
def test_windowed_tiles_and_pairs_match_enumeration(
    seq_q: int, extra_kv: int, window: int, block_q: int, block_kv: int
) -> None:
    seq_kv = seq_q + extra_kv
    counts = windowed_tile_counts(seq_q, seq_kv, block_q, block_kv, window)
    assert (counts.tiles, counts.longest_block_tiles) == _brute_windowed(
        seq_q, seq_kv, block_q, block_kv, window
    )
    pairs = sum(min(window, i + seq_kv - seq_q + 1) for i in range(seq_q))
    assert windowed_score_pairs(seq_q, seq_kv, window) == pairs


def test_sliding_window_prefill_and_decode() -> None:
    causal = MODEL.predict(attention(1, 32, 16384, 128, causal=True, kv_heads=8), H100)
    windowed = MODEL.predict(_windowed(1, 16384, 4096), H100)
    assert windowed.latency_s < 0.5 * causal.latency_s  # a 4k band of a 16k causal square
    assert windowed.flops < causal.flops
    decode = evaluation(_windowed(8, 32768, 4096, seq_q=1), H100)
    full = evaluation(attention(8, 32, 32768, 128, kv_heads=8, seq_q=1), H100)
    assert decode.dram_read_bytes < 0.2 * full.dram_read_bytes  # only the last 4096 keys


def test_window_needs_causal() -> None:
    op = attention(1, 8, 256, 64)
    with pytest.raises(OpModelError, match="window needs causal"):
        LocalOp(
            name="a",
            kind=op.kind,
            phase=op.phase,
            tensors=op.tensors,
            attrs={"causal": False, "window": 64},
        )
