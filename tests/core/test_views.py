"""Shape views: sizes derived from tensors, with hand-counted expectations."""

from __future__ import annotations

from opmodel import LocalOp, TensorSpec
from opmodel.core.views import AttentionView, EmbeddingView, RowView
from opmodel.core.views_matmul import causal_score_pairs


def _attention(sq: int, skv: int, causal: bool, hq: int = 4, hkv: int = 2) -> LocalOp:
    return LocalOp(
        name="attn",
        kind="attention_prefill",
        phase="prefill",
        tensors=(
            TensorSpec("input", (2, hq, sq, 8), "bf16"),
            TensorSpec("input", (2, hkv, skv, 8), "bf16"),
            TensorSpec("input", (2, hkv, skv, 16), "bf16"),
            TensorSpec("output", (2, hq, sq, 16), "bf16"),
        ),
        attrs={"causal": causal},
    )


def test_causal_pairs_square_is_triangle() -> None:
    # 4 queries over 4 keys: rows see 1, 2, 3, 4 keys -> 10 pairs.
    assert causal_score_pairs(4, 4) == 10


def test_causal_pairs_bottom_right_aligned() -> None:
    # 2 queries over 5 keys (offset 3): row 0 sees keys 0..3 (4), row 1 sees 0..4 (5) -> 9.
    assert causal_score_pairs(2, 5) == 9
    # decode: 1 query sees every key.
    assert causal_score_pairs(1, 7) == 7


def test_causal_pairs_match_brute_force_count() -> None:
    for sq in range(1, 9):
        for skv in range(sq, 12):
            brute = sum(1 for i in range(sq) for j in range(skv) if j <= i + skv - sq)
            assert causal_score_pairs(sq, skv) == brute


def test_attention_view_gqa_and_value_dim() -> None:
    view = _attention(16, 16, causal=True).view
    assert isinstance(view, AttentionView)
    assert (view.batch, view.heads_q, view.heads_kv) == (2, 4, 2)
    assert (view.head_dim_qk, view.head_dim_v) == (8, 16)
    assert view.score_pairs == 16 * 17 // 2
    assert _attention(16, 16, causal=False).view.score_pairs == 256  # type: ignore[union-attr]


def test_tagged_operands_may_come_in_any_order() -> None:
    op = LocalOp(
        name="attn",
        kind="attention_decode",
        phase="decode",
        tensors=(
            TensorSpec("input", (1, 2, 9, 8), "bf16", "v"),
            TensorSpec("input", (1, 4, 1, 8), "bf16", "q"),
            TensorSpec("input", (1, 2, 9, 8), "bf16", "k"),
            TensorSpec("output", (1, 4, 1, 8), "bf16", "o"),
        ),
    )
    view = op.view
    assert isinstance(view, AttentionView)
    assert (view.seq_q, view.seq_kv, view.heads_q, view.heads_kv) == (1, 9, 4, 2)


def test_row_view_defaults_to_last_dim_and_fp32_compute() -> None:
    op = LocalOp(
        name="ln",
        kind="layernorm",
        phase="train_fwd",
        tensors=(
            TensorSpec("input", (3, 5, 8), "bf16"),
            TensorSpec("weight", (8,), "bf16"),
            TensorSpec("output", (3, 5, 8), "bf16"),
        ),
    )
    view = op.view
    assert isinstance(view, RowView)
    assert (view.rows, view.row_length, len(view.weights)) == (15, 8, 1)
    assert view.compute_dtype == "fp32"


def test_embedding_view() -> None:
    op = LocalOp(
        name="emb",
        kind="embedding",
        phase="prefill",
        tensors=(
            TensorSpec("input", (2, 3), "int32"),
            TensorSpec("weight", (100, 16), "bf16"),
            TensorSpec("output", (2, 3, 16), "bf16"),
        ),
    )
    view = op.view
    assert isinstance(view, EmbeddingView)
    assert (view.tokens, view.hidden, view.vocab) == (6, 16, 100)
