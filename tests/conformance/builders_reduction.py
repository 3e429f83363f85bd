"""Conformance builders of reductions: over the trailing axis, over the leading one (a bias
gradient's ``dy.sum(0)``, attr ``dim``) and the index reduction ``argmax`` (int64 output)."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, Phase, TensorSpec

__all__ = ["argmax", "reduction", "reduction_leading"]

Sizes = dict[str, int]


def _op(x: TensorSpec, y: TensorSpec, **attrs: object) -> LocalOp:
    return LocalOp(
        name="reduction",
        kind=OpKind.REDUCTION,
        phase=Phase.INFERENCE,
        tensors=(x, y),
        attrs=attrs,  # type: ignore[arg-type]
    )


def reduction(s: Sizes, d: DType) -> LocalOp:
    """``x.sum(-1)`` of ``[rows, length]``."""
    return _op(
        TensorSpec("input", (s["rows"], s["length"]), d), TensorSpec("output", (s["rows"],), d)
    )


def reduction_leading(s: Sizes, d: DType) -> LocalOp:
    """``x.sum(0)`` of ``[rows, length]``: ATen's outputs-across-lanes launch."""
    x = TensorSpec("input", (s["rows"], s["length"]), d)
    return _op(x, TensorSpec("output", (s["length"],), d), dim=[0])


def argmax(s: Sizes, d: DType) -> LocalOp:
    """``x.argmax(-1)``: int64 indices, the reduce kernel with its counted arithmetic."""
    x = TensorSpec("input", (s["rows"], s["length"]), d)
    return _op(x, TensorSpec("output", (s["rows"],), DType.INT64), function="argmax")
