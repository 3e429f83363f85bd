"""Builders of Liger-Kernel's Triton kernels (attr ``implementation: fused``) for the
conformance suite (:mod:`tests.conformance.builders`)."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, TensorSpec

Sizes = dict[str, int]


def _op(kind: OpKind, tensors: tuple[TensorSpec, ...], **attrs: object) -> LocalOp:
    return LocalOp(name=kind.value, kind=kind, phase="inference", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


def fused_elementwise(s: Sizes, d: DType) -> LocalOp:
    """Liger's row-per-program elementwise kernel over ``rows x length`` (attr ``fused``)."""
    shape = (s["rows"], s["length"])
    ins = tuple(TensorSpec("input", shape, d) for _ in range(s["inputs"]))
    return _op(OpKind.ELEMENTWISE, (*ins, TensorSpec("output", shape, d)), implementation="fused")


def fused_rope(s: Sizes, d: DType) -> LocalOp:
    """Liger's ``_triton_rope`` over ``[tokens, heads, head size]`` with a cos/sin row each."""
    rotated = (s["tokens"], s["heads"], s["head"])
    tensors = (
        TensorSpec("input", rotated, d),
        TensorSpec("input", (s["tokens"], 1, s["head"]), d),
        TensorSpec("output", rotated, d),
    )
    return _op(OpKind.ELEMENTWISE, tensors, function="rope", implementation="fused")
