"""Prefill and its backward pass over requests of different lengths (attrs ``q_lengths``,
``kv_lengths``: a packed batch, FlashAttention's varlen API; docs/models/attention.md,
"Requests of different lengths")."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import LocalOp
from opmodel.core.errors import OpValidationError
from opmodel.formulas.work import op_work
from opmodel.models import get_model, model_names
from opmodel.models.attention.backward import backward_tiles
from opmodel.models.attention.tiles import batch_tile_counts, request_tile_counts
from tests.models.attention.ops import A100, H100, attention, evaluation
from tests.models.attention.test_backward import backward

DOCS = (2048, 512, 64)  # a packed batch of three documents, padded to 2,048 tokens


def with_lengths(op: LocalOp, **attrs: object) -> LocalOp:
    """``op`` with the given attrs added."""
    return dataclasses.replace(op, attrs={**op.attrs, **attrs})


def packed(causal: bool = True, lengths: tuple[int, ...] = DOCS) -> LocalOp:
    """Self-attention over the documents, 16 heads of 128 channels, padded to the longest
    (at least 64 tokens: a prefill)."""
    op = attention(len(lengths), 16, max(64, *lengths), 128, causal=causal)
    return with_lengths(op, q_lengths=lengths, kv_lengths=lengths)


@pytest.mark.parametrize(
    ("attrs", "message"),
    [
        ({"q_lengths": DOCS}, "attrs.q_lengths needs attrs.kv_lengths"),
        ({"q_lengths": (2049, 1, 1), "kv_lengths": DOCS}, "2049 exceeds Q's seq dim 2048"),
        ({"q_lengths": DOCS, "kv_lengths": (2048, 512)}, "needs one entry per request (batch 3)"),
        ({"q_lengths": DOCS, "kv_lengths": (2048, 511, 64)}, "511 is shorter than the 512 query"),
    ],
)
def test_lengths_are_checked(attrs: dict[str, object], message: str) -> None:
    with pytest.raises(OpValidationError, match="lengths") as caught:
        with_lengths(attention(3, 16, 2048, 128, causal=True), **attrs)
    assert message in str(caught.value)


def test_work_counts_each_document() -> None:
    """Causal self-attention of L tokens has L (L + 1) / 2 pairs per head; the reads are the
    documents' rows of Q, K and V, the write their rows of O."""
    work = op_work(packed())
    pairs = sum(n * (n + 1) // 2 for n in DOCS)
    assert work.matmul_flops == 2 * 16 * pairs * 256
    rows = sum(DOCS)
    assert work.read_bytes == 3 * rows * 16 * 128 * 2
    assert work.write_bytes == rows * 16 * 128 * 2


def test_batch_tile_counts_by_hand() -> None:
    """Blocks of 128 x 64, causal: 256 tokens make 2 query blocks of 4 key blocks, visiting 2
    and 4 tiles; 128 tokens one of 2. Summed: 3 query blocks, 6 key blocks, 8 tiles, the
    longest block 4."""
    counts = batch_tile_counts(request_tile_counts, (128, 64, True, None), ((256, 256), (128, 128)))
    assert (counts.q_blocks, counts.kv_blocks, counts.tiles, counts.longest_block_tiles) == (
        3,
        6,
        8,
        4,
    )


def test_prefill_grid_is_the_documents_blocks() -> None:
    """FA2 on an A100 (128 x 64 blocks at head_dim 128): 16 + 4 + 1 query blocks per head, 16
    heads: 336 CTAs, not the padded 3 x 16 x 16 = 768."""
    e = evaluation(packed(), A100)
    assert e.kernel.name == "fa2" and e.ctas == 16 * (16 + 4 + 1)
    assert e.dram_read_bytes == 3 * sum(DOCS) * 16 * 128 * 2


@pytest.mark.parametrize("name", model_names())
@pytest.mark.parametrize("causal", [False, True])
def test_full_lengths_are_the_padded_batch(name: str, causal: bool) -> None:
    """Every request filling the tensors is the op without the attrs, forward and backward."""
    model = get_model(name)
    for op in (
        attention(4, 16, 1024, 128, causal=causal),
        backward(4, 16, 1024, 128, causal=causal),
    ):
        full = with_lengths(op, q_lengths=(1024,) * 4, kv_lengths=(1024,) * 4)
        for hardware in (A100, H100):
            assert model.predict(full, hardware).latency_s == pytest.approx(
                model.predict(op, hardware).latency_s, rel=1e-12
            )


@given(st.lists(st.integers(1, 2048), min_size=1, max_size=6), st.booleans())
def test_shorter_documents_never_take_longer(lengths: list[int], causal: bool) -> None:
    """A packed batch takes no longer than the same batch padded to its longest document."""
    padded = (max(64, *lengths),) * len(lengths)
    e = evaluation(packed(causal, tuple(lengths)), H100)
    full = evaluation(packed(causal, padded), H100)
    assert e.latency_s <= full.latency_s * (1 + 1e-9)


def test_backward_counts_each_document() -> None:
    """The backward pass's key-block CTAs are the documents' own: FA3 on an H100 at head_dim
    128 (Br 64, Bc 128): 16 + 4 + 1 key blocks per head, and every tile of each document."""
    op = with_lengths(backward(3, 16, 2048, 128, causal=True), q_lengths=DOCS, kv_lengths=DOCS)
    counts = backward_tiles(evaluation(op, H100).kernel, op.view)
    assert counts.kv_blocks == 16 + 4 + 1
    e = evaluation(op, H100)
    assert e.ctas == 16 * 21
    padded = evaluation(backward(3, 16, 2048, 128, causal=True), H100)
    assert e.latency_s < padded.latency_s
    assert e.dram_read_bytes < padded.dram_read_bytes


def test_chunked_prefill_reads_each_context() -> None:
    """A chunk of 256 query tokens per request against contexts of different lengths (kv
    alone): FLOPs count each request's causal pairs, 256 (L - 256) + 256 x 257 / 2."""
    op = with_lengths(attention(2, 8, 4096, 64, seq_q=256, causal=True), kv_lengths=(4096, 1024))
    pairs = sum(256 * (n - 256) + 256 * 257 // 2 for n in (4096, 1024))
    assert op_work(op).matmul_flops == 2 * 8 * pairs * 128
