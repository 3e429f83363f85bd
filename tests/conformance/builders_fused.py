"""Builders of Liger-Kernel's Triton kernels (attr ``implementation: fused``), of row ops with
a fused residual add and of ATen elementwise ops with a broadcast or strided input for the conformance
suite (:mod:`tests.conformance.builders`)."""

from __future__ import annotations

from collections.abc import Callable

from opmodel import DType, LocalOp, OpKind, TensorSpec, backward_of
from opmodel.core.attrs_optimizer import OPTIMIZER_STATES

Sizes = dict[str, int]


def _op(kind: OpKind, tensors: tuple[TensorSpec, ...], **attrs: object) -> LocalOp:
    return LocalOp(name=kind.value, kind=kind, phase="inference", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


def fused_elementwise(s: Sizes, d: DType) -> LocalOp:
    """Liger's row-per-program elementwise kernel over ``rows x length`` (attr ``fused``)."""
    shape = (s["rows"], s["length"])
    ins = tuple(TensorSpec("input", shape, d) for _ in range(s["inputs"]))
    return _op(OpKind.ELEMENTWISE, (*ins, TensorSpec("output", shape, d)), implementation="fused")


def broadcast_elementwise(s: Sizes, d: DType) -> LocalOp:
    """ATen's add, mul, div or where (``function`` 0-3) of ``rows x length`` and a broadcast
    input: ``[length]``, ``[rows, 1]`` or ``[1]`` (``shape`` 0, 1, 2), or a strided view of
    the output's shape (``shape`` 3, layout ``strided``); where's condition is that input, as
    int8, before the two operands."""
    shape = (s["rows"], s["length"])
    other = ((s["length"],), (s["rows"], 1), (1,), shape)[s["shape"]]
    layout = "strided" if s["shape"] == 3 else None
    function = ("add", "mul", "div", "where")[s["function"]]
    tensors: tuple[TensorSpec, ...] = (
        TensorSpec("input", shape, d),
        TensorSpec("input", other, d, layout),
    )
    if function == "where":
        tensors = (TensorSpec("input", other, DType.INT8, layout), *tensors)
    return _op(OpKind.ELEMENTWISE, (*tensors, TensorSpec("output", shape, d)), function=function)


def fused_rope(s: Sizes, d: DType) -> LocalOp:
    """Liger's ``_triton_rope`` over ``[tokens, heads, head size]`` with a cos/sin row each."""
    rotated = (s["tokens"], s["heads"], s["head"])
    tensors = (
        TensorSpec("input", rotated, d),
        TensorSpec("input", (s["tokens"], 1, s["head"]), d),
        TensorSpec("output", rotated, d),
    )
    return _op(OpKind.ELEMENTWISE, tensors, function="rope", implementation="fused")


def residual_norm(kind: OpKind, weights: int) -> Callable[[Sizes, DType], LocalOp]:
    """A norm of ``x + residual`` that also writes the sum (tensors tagged ``residual``)."""

    def build(s: Sizes, d: DType) -> LocalOp:
        shape = (s["rows"], s["length"])
        ws = tuple(TensorSpec("weight", (s["length"],), d) for _ in range(weights))
        tensors = (
            TensorSpec("input", shape, d),
            TensorSpec("input", shape, d, "residual"),
            *ws,
            TensorSpec("output", shape, d),
            TensorSpec("output", shape, d, "residual"),
        )
        return _op(kind, tensors, implementation=("fused", "vllm")[s["vllm"]])

    return build


def cross_entropy(implementation: str) -> Callable[[Sizes, DType], LocalOp]:
    """A cross-entropy loss over ``rows x vocab`` logits, reduced or per row (``reduced``)."""

    def build(s: Sizes, d: DType) -> LocalOp:
        rows = s["rows"]
        tensors = (
            TensorSpec("input", (rows, s["vocab"]), d),
            TensorSpec("input", (rows,), DType.INT64),
            TensorSpec("output", (1,) if s["reduced"] else (rows,), DType.FP32),
        )
        reduction = "mean" if s["reduced"] else "none"
        return _op(
            OpKind.CROSS_ENTROPY, tensors, implementation=implementation, reduction=reduction
        )

    return build


CROSS_ENTROPY_SIZES = {"rows": (1, 32768), "vocab": (1, 262144), "reduced": (0, 1)}
_ROWS = {"rows": (1, 65536), "length": (1, 16384), "vllm": (0, 1)}
FUSED: dict[
    str, tuple[dict[str, tuple[int, int]], Callable[[Sizes, DType], LocalOp], tuple[str, ...]]
] = {
    # rows past Liger's 65,536-element limit run as element blocks (the switch in test_models.py)
    "elementwise_fused": (
        {"rows": (1, 16384), "length": (1, 131072), "inputs": (1, 3)},
        fused_elementwise,
        ("rows", "length"),
    ),
    "elementwise_broadcast": (
        {"rows": (1, 16384), "length": (1, 16384), "shape": (0, 3), "function": (0, 3)},
        broadcast_elementwise,
        ("rows", "length"),
    ),
    "rope_fused": (
        {"tokens": (1, 16384), "heads": (1, 64), "head": (8, 256)},
        fused_rope,
        ("tokens", "heads", "head"),
    ),
    "rmsnorm_residual": (_ROWS, residual_norm(OpKind.RMSNORM, 1), ("rows", "length")),
    "layernorm_residual": (_ROWS, residual_norm(OpKind.LAYERNORM, 2), ("rows", "length")),
    "cross_entropy_fused": (CROSS_ENTROPY_SIZES, cross_entropy("fused"), ("rows", "vocab")),
}


_OPTIMIZERS = ("sgd", "sgd_momentum", "adam", "adamw")
OPTIMIZER_SIZES = {"n": (1, 1 << 28), "tensors": (1, 300), "algorithm": (0, 3), "foreach": (0, 1)}
"""Parameters, parameter tensors, the algorithm's index in ``_OPTIMIZERS`` and foreach (1).
Only the parameters grow in the monotonicity check: more tensors of fewer elements each may
run in parallel, faster."""


def optimizer(s: Sizes, d: DType) -> LocalOp:
    """An optimizer step over ``n`` parameters in ``tensors`` tensors (at most ``n``), fp32
    states beside ``d`` parameters and gradients."""
    algorithm = _OPTIMIZERS[s["algorithm"]]
    n = s["n"]
    states = tuple(
        TensorSpec("workspace", (n,), DType.FP32) for _ in range(OPTIMIZER_STATES[algorithm])
    )
    tensors = (TensorSpec("weight", (n,), d), TensorSpec("grad", (n,), d), *states)
    implementation = "foreach" if s["foreach"] else "fused"
    return LocalOp(
        name="optimizer",
        kind=OpKind.OPTIMIZER,
        phase="train_bwd",
        tensors=tensors,
        attrs={
            "algorithm": algorithm,
            "tensors": min(s["tensors"], n),
            "implementation": implementation,
        },
    )


# what embedding_backward's sizes may grow: not "vocab", whose extra rows spread a hot row's
# partial sums over more threads (one row named 3,073 times sums 308 partials in a chain);
# tests/models/streaming/test_embedding_backward.py checks the vocabulary's effect
GROWS = ("tokens", "hidden")


def embedding(s: Sizes, d: DType) -> LocalOp:
    """A gather of ``tokens`` int32 ids from a ``vocab x hidden`` table."""
    return _op(
        OpKind.EMBEDDING,
        (
            TensorSpec("input", (s["tokens"],), "int32"),
            TensorSpec("weight", (s["vocab"], s["hidden"]), d),
            TensorSpec("output", (s["tokens"], s["hidden"]), d),
        ),
    )


def embedding_backward(s: Sizes, d: DType) -> LocalOp:
    """The backward op of :func:`embedding`'s gather: the table's gradient."""
    return backward_of(embedding(s, d))
