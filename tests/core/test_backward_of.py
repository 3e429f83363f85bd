"""``opmodel.backward_of``: the backward op of a forward op, checked tensor by tensor."""

from __future__ import annotations

import pytest

from opmodel import LocalOp, OpValidationError, TensorSpec, backward_of


def test_untagged_attention_gets_its_tags_and_o_is_read() -> None:
    q, kv = (1, 8, 64, 16), (1, 2, 64, 16)
    forward = LocalOp(
        name="att",
        kind="attention_prefill",  # type: ignore[arg-type]
        phase="prefill",  # type: ignore[arg-type]
        tensors=(
            TensorSpec("input", q, "bf16"),
            TensorSpec("input", kv, "bf16"),
            TensorSpec("input", kv, "bf16"),
            TensorSpec("output", q, "bf16"),
        ),
        attrs={"causal": True},
    )
    op = backward_of(forward)
    assert op.phase.value == "train_bwd" and op.attrs == forward.attrs and op.name == "att"
    assert [(t.role.value, t.layout, t.shape) for t in op.tensors] == [
        ("input", "q", q),
        ("input", "k", kv),
        ("input", "v", kv),
        ("input", "o", q),
        ("grad", "o", q),
        ("output", "q", q),
        ("output", "k", kv),
        ("output", "v", kv),
    ]
    assert op.view.backward


def test_layernorm_writes_a_gradient_per_weight() -> None:
    x, w = (4, 8), (8,)
    forward = LocalOp(
        name="ln",
        kind="layernorm",  # type: ignore[arg-type]
        phase="train_fwd",  # type: ignore[arg-type]
        tensors=(
            TensorSpec("input", x, "fp32"),
            TensorSpec("weight", w, "fp32"),
            TensorSpec("weight", w, "fp32"),
            TensorSpec("output", x, "fp32"),
        ),
    )
    op = backward_of(forward)
    roles = [(t.role.value, t.shape) for t in op.tensors]
    assert roles == [
        ("input", x),
        ("weight", w),
        ("weight", w),
        ("grad", x),
        ("output", x),
        ("output", w),
        ("output", w),
    ]
    assert len(op.view.weight_grads) == 2


def test_kinds_without_a_backward_op_and_backward_ops_are_refused() -> None:
    gemm = LocalOp(
        name="g",
        kind="gemm",  # type: ignore[arg-type]
        phase="train_fwd",  # type: ignore[arg-type]
        tensors=(
            TensorSpec("input", (4, 8), "bf16"),
            TensorSpec("weight", (8, 2), "bf16"),
            TensorSpec("output", (4, 2), "bf16"),
        ),
    )
    with pytest.raises(OpValidationError, match=r"op 'g' \(gemm\): has no backward op \(kinds"):
        backward_of(gemm)
    softmax = LocalOp(
        name="s",
        kind="softmax",  # type: ignore[arg-type]
        phase="train_fwd",  # type: ignore[arg-type]
        tensors=(TensorSpec("input", (4, 8), "bf16"), TensorSpec("output", (4, 8), "bf16")),
    )
    with pytest.raises(OpValidationError, match="is a backward op already"):
        backward_of(backward_of(softmax))
