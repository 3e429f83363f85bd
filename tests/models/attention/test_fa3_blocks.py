"""FA3's own block sizes (hopper/tile_size.h) and the tile counts they need: any query and key
block sizes, causal or not (sums of floors)."""

from __future__ import annotations

import dataclasses

from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp
from opmodel.core.views_matmul import AttentionView
from opmodel.models.attention import tile_counts
from opmodel.models.attention.evaluate import evaluate_attention
from opmodel.models.attention.tiles import floor_sum
from tests.models.attention.ops import H100, MODEL, attention, evaluation


def test_causal_tiles_of_fa3_fp8_blocks_by_hand() -> None:
    """512 causal rows on 128 x 224 blocks: the query blocks end at rows 128, 256, 384 and
    512, so they visit ceil(128 / 224) = 1, ceil(256 / 224) = 2, ceil(384 / 224) = 2 and
    ceil(512 / 224) = 3 key blocks: 8 tiles, the longest 3."""
    counts = tile_counts(512, 512, 128, 224, causal=True)
    assert (counts.tiles, counts.longest_block_tiles) == (8, 3)


@given(st.integers(0, 60), st.integers(1, 300), st.integers(0, 500), st.integers(-1000, 1000))
def test_floor_sum_matches_enumeration(count: int, divisor: int, slope: int, offset: int) -> None:
    expected = sum((slope * i + offset) // divisor for i in range(count))
    assert floor_sum(count, divisor, slope, offset) == expected


def test_floor_sum_by_hand() -> None:
    # floor(i / 3) for i = 0..9: 0 0 0 1 1 1 2 2 2 3 = 12; floor((2 i - 5) / 4), i = 0..4:
    # floor(-5/4) = -2, floor(-3/4) = -1, floor(-1/4) = -1, floor(1/4) = 0, floor(3/4) = 0
    assert floor_sum(10, 3, 1, 0) == 12
    assert floor_sum(5, 4, 2, -5) == -4


def _in_order(op: LocalOp) -> LocalOp:
    return dataclasses.replace(op, attrs={**op.attrs, "cta_order": "in_order"})


def _fa3(op: LocalOp) -> LocalOp:
    return dataclasses.replace(op, attrs={**op.attrs, "attention_kernel": "fa3"})


def _view(op: LocalOp) -> AttentionView:
    view = op.view
    assert isinstance(view, AttentionView)
    return view


def test_fa3_blocks_follow_its_tile_table() -> None:
    """hopper/tile_size.h: 16-bit head_dim 128 takes 128 x 176 without a mask and 128 x 128
    with one, head_dim 64 192 x 192 and 192 x 128, head_dim 256 128 x 80; one-byte operands
    128 x 224 at head_dim 128 and 192 x 160 at 64. Without attr attention_kernel the sm_90
    prefill keeps 128 x 128 (PyTorch's SDPA, cuDNN's kernel on the H200 rows)."""
    blocks = {
        (d, causal): (e.kernel.block_q, e.kernel.block_kv)
        for d in (64, 128, 256)
        for causal in (False, True)
        for e in [evaluation(_fa3(attention(1, 16, 4096, d, causal=causal)), H100)]
    }
    assert blocks == {
        (64, False): (192, 192),
        (64, True): (192, 128),
        (128, False): (128, 176),
        (128, True): (128, 128),
        (256, False): (128, 80),
        (256, True): (128, 80),
    }
    default = evaluation(attention(1, 16, 4096, 128), H100)
    assert (default.kernel.name, default.kernel.block_q, default.kernel.block_kv) == (
        "fa3",
        128,
        128,
    )
    for d, expected in ((128, (128, 224)), (64, (192, 160)), (256, (128, 128))):
        e = evaluation(attention(1, 16, 4096, d, dtype=DType.FP8_E4M3), H100)
        assert (e.kernel.block_q, e.kernel.block_kv) == expected


def test_fa3_fp8_causal_tiles_by_hand() -> None:
    """512 causal tokens on FP8's 128 x 224 blocks: the four query blocks end at rows 128, 256,
    384 and 512 and visit 1, 2, 2 and 3 key blocks, 8 tiles a head (the 16-bit default's
    128 x 128 blocks: 1 + 2 + 3 + 4 = 10)."""
    e = evaluation(attention(1, 16, 512, 128, causal=True, dtype=DType.FP8_E4M3), H100)
    assert (e.tiles.q_blocks, e.tiles.kv_blocks, e.tiles.tiles) == (4, 3, 8)
    assert e.tiles.longest_block_tiles == 3
    assert evaluation(attention(1, 16, 512, 128, causal=True), H100).tiles.tiles == 10


def test_fa3_causal_can_be_slower_than_its_unmasked_run_on_larger_blocks() -> None:
    """FA3's causal head_dim 128 kernel takes 128-key blocks where the unmasked one takes 176:
    at 520 tokens of one sequence (80 CTAs, one wave) the last query block walks five small
    tiles against three large ones, and the causal run takes longer, as FA3 itself would. On
    the causal kernel's own blocks the unmasked run is never faster."""
    causal, full = _fa3(attention(1, 16, 520, 128, causal=True)), _fa3(attention(1, 16, 520, 128))
    assert MODEL.predict(causal, H100).latency_s > MODEL.predict(full, H100).latency_s
    kernel = evaluation(causal, H100).kernel
    same_blocks = evaluate_attention(kernel, _view(full), H100)
    assert evaluate_attention(kernel, _view(causal), H100).latency_s <= same_blocks.latency_s


@given(st.integers(1, 4), st.integers(17, 9000), st.sampled_from([64, 128, 256]), st.booleans())
def test_fa3_causal_never_slower_than_unmasked_on_the_same_blocks(
    batch: int, seq: int, head_dim: int, in_order: bool
) -> None:
    """The property of the default kernel (test_properties) on FA3's own blocks, which differ
    with the mask: the causal kernel's blocks run unmasked bound its causal run, in either
    launch order, and the causal run takes at least 45 % of that."""
    causal = _fa3(attention(batch, 16, seq, head_dim, causal=True))
    causal = _in_order(causal) if in_order else causal
    kernel = evaluation(causal, H100).kernel
    full = _fa3(attention(batch, 16, seq, head_dim))
    unmasked = evaluate_attention(kernel, _view(full), H100).latency_s
    masked = evaluate_attention(kernel, _view(causal), H100).latency_s
    assert 0.45 * unmasked <= masked <= unmasked * (1 + 1e-12)
