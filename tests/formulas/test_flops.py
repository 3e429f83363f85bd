"""FLOP and byte formulas, each checked against a count done by hand."""

from __future__ import annotations

from opmodel import LocalOp, TensorSpec
from opmodel.formulas import flops as f
from opmodel.formulas.traffic import gather_read_bytes
from opmodel.formulas.work import op_work

from ..conftest import gemm


def test_gemm_flops_is_two_mnk() -> None:
    # 2 x 3 x 5 x 7 = 210 multiply-adds = 420 FLOPs... per batch of 2 -> 420.
    assert f.gemm_flops(2, 3, 5, 7) == 420


def test_attention_matmul_flops() -> None:
    # 6 (batch x heads) x 10 pairs x 2 x (8 + 16) = 2880
    assert f.attention_matmul_flops(6, 10, 8, 16) == 2880


def test_row_op_flops() -> None:
    assert f.softmax_flops(100) == 500
    assert f.layernorm_flops(100, weights=2) == 700
    assert f.rmsnorm_flops(100, weights=1) == 400


def test_gather_reads_distinct_rows_only() -> None:
    assert gather_read_bytes(tokens=10, vocab=4, row_bytes=32) == 128
    assert gather_read_bytes(tokens=3, vocab=4, row_bytes=32) == 96


def test_gemm_work() -> None:
    work = op_work(gemm(64, 32, 16))
    assert work.matmul_flops == 2 * 64 * 32 * 16
    assert work.vector_flops == 0
    # read A (64*16) + B (16*32) elements, write C (64*32), 2 bytes each
    assert work.read_bytes == (64 * 16 + 16 * 32) * 2
    assert work.write_bytes == 64 * 32 * 2


def test_attention_work_counts_causal_pairs() -> None:
    op = LocalOp(
        name="a",
        kind="attention_prefill",
        phase="prefill",
        tensors=(
            TensorSpec("input", (1, 2, 4, 8), "fp16"),
            TensorSpec("input", (1, 1, 4, 8), "fp16"),
            TensorSpec("input", (1, 1, 4, 8), "fp16"),
            TensorSpec("output", (1, 2, 4, 8), "fp16"),
        ),
        attrs={"causal": True},
    )
    work = op_work(op)
    pairs = 10  # 4 x 4 causal: 1 + 2 + 3 + 4
    assert work.matmul_flops == 2 * 2 * pairs * (8 + 8)
    assert work.vector_flops == 5 * 2 * pairs
    assert work.vector_dtype == "fp32"
    assert work.read_bytes == (64 + 32 + 32) * 2
    assert work.write_bytes == 64 * 2


def test_embedding_work_reads_gathered_rows_not_the_table() -> None:
    op = LocalOp(
        name="e",
        kind="embedding",
        phase="prefill",
        tensors=(
            TensorSpec("input", (5,), "int64"),
            TensorSpec("weight", (1000, 16), "bf16"),
            TensorSpec("output", (5, 16), "bf16"),
        ),
    )
    work = op_work(op)
    assert work.flops == 0
    assert work.read_bytes == 5 * 8 + 5 * 16 * 2
    assert work.write_bytes == 5 * 16 * 2


def test_elementwise_default_and_named_functions() -> None:
    def ew(function: str | None, inputs: int) -> int:
        tensors = [TensorSpec("input", (10,), "bf16") for _ in range(inputs)]
        attrs = {"function": function} if function else {}
        op = LocalOp(
            name="e",
            kind="elementwise",
            phase="train_fwd",
            tensors=(*tensors, TensorSpec("output", (10,), "bf16")),
            attrs=attrs,
        )
        return op_work(op).vector_flops

    assert ew(None, 1) == 10  # unary default: one FLOP per element
    assert ew(None, 3) == 20  # ternary default: two combines per element
    assert ew("silu", 1) == 40  # neg, exp, add, div
    assert ew("gelu", 1) == 90
    # backward functions over x (or y) and dy: module comments of opmodel.core.attrs
    assert ew("relu_backward", 2) == 20
    assert ew("sigmoid_backward", 2) == ew("tanh_backward", 2) == 30
    assert ew("silu_backward", 2) == 90
    assert ew("gelu_backward", 2) == 150


def test_backward_flops() -> None:
    # 6 (batch x heads) x 10 pairs x 2 x (3 x 8 + 2 x 16) = 6,720: 2.5x the forward at d 8/8
    assert f.attention_backward_matmul_flops(6, 10, 8, 16) == 6720
    assert f.attention_backward_matmul_flops(1, 1, 8, 8) == 2.5 * f.attention_matmul_flops(
        1, 1, 8, 8
    )
    assert f.row_backward_flops("softmax", 100, 0, 0) == 400
    assert f.row_backward_flops("layernorm", 100, 2, 2) == (9 + 2 + 2 + 1) * 100
    assert f.row_backward_flops("rmsnorm", 100, 1, 1) == (6 + 1 + 2) * 100
    assert f.row_backward_flops("rmsnorm", 100, 1, 0) == 700
