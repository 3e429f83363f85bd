"""Typed shape views of every op kind, built once when a :class:`LocalOp` is constructed.

A view checks the tensors against the kind's convention and exposes the sizes models need.
This module holds the row, elementwise, reduction, embedding and copy views and the dispatcher
:func:`build_view`; the others live in the ``views_*`` modules beside it. Vector-engine ops
(all but GEMM and attention) compute in fp32 unless their input is fp64 or the
``compute_dtype`` attr says otherwise: GPU kernels for softmax, norms and activations upcast
16- and 8-bit floats to fp32 registers, so fp32 throughput is what limits them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, TensorRole
from opmodel.core.viewcheck import fail, one, only_roles, vector_dtype
from opmodel.core.views_attention import attention_view
from opmodel.core.views_collective import CollectiveView, collective_view
from opmodel.core.views_embedding import EmbeddingBackwardView, EmbeddingView, embedding_view
from opmodel.core.views_grouped import grouped_gemm_view
from opmodel.core.views_loss import CrossEntropyView, cross_entropy_view
from opmodel.core.views_matmul import AttentionView, GemmView, gemm_view
from opmodel.core.views_optimizer import OptimizerView, optimizer_view
from opmodel.core.views_reduction import ReductionView, reduction_view
from opmodel.core.views_row_bwd import row_backward_view

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = [
    "RESIDUAL",
    "STRIDED",
    "AttentionView",
    "CollectiveView",
    "CopyView",
    "CrossEntropyView",
    "ElementwiseView",
    "EmbeddingBackwardView",
    "EmbeddingView",
    "GemmView",
    "OpView",
    "OptimizerView",
    "ReductionView",
    "RowView",
    "broadcasts",
    "build_view",
]

RESIDUAL = "residual"  # the layout tag of a row op's fused residual add (RowView.residual)
# the layout tag of an elementwise input that is a non-contiguous view of the output's shape:
# its innermost dimension contiguous, its rows not adjacent (one half of torch.chunk(y, 2, -1),
# a column slice); ATen then runs its non-contiguous kernel (docs/models/streaming.md)
STRIDED = "strided"


@dataclass(frozen=True, slots=True, kw_only=True)
class RowView:
    """A row-wise op (softmax, layernorm, rmsnorm): ``rows`` rows of ``row_length`` elements.

    Its backward pass (``dy``, a ``grad`` tensor): ``x`` is the forward's input (softmax: its
    output), ``y`` the input gradient dx, ``weight_grads`` the weights' gradients (outputs of
    ``row_length`` elements; :func:`build_view`)."""

    rows: int
    row_length: int
    x: TensorSpec
    y: TensorSpec
    weights: tuple[TensorSpec, ...]
    compute_dtype: DType
    dy: TensorSpec | None = None
    weight_grads: tuple[TensorSpec, ...] = ()
    # a fused residual add (rmsnorm, layernorm): the residual read and the sum ``x + residual``
    # written (the next layer's residual), both tagged layout "residual"; the norm runs on the sum
    residual: tuple[TensorSpec, TensorSpec] | None = None

    @property
    def backward(self) -> bool:
        """True for the op's backward pass (a ``grad`` tensor dy)."""
        return self.dy is not None


@dataclass(frozen=True, slots=True, kw_only=True)
class ElementwiseView:
    """``y = f(x1, ..., xn)`` with numpy broadcasting of inputs to the output shape."""

    num_elements: int
    inputs: tuple[TensorSpec, ...]
    y: TensorSpec
    function: str | None
    compute_dtype: DType


@dataclass(frozen=True, slots=True, kw_only=True)
class CopyView:
    """``y = x`` (possibly with a dtype cast) over ``num_elements`` elements."""

    num_elements: int
    x: TensorSpec
    y: TensorSpec


OpView = (
    GemmView
    | AttentionView
    | RowView
    | ElementwiseView
    | ReductionView
    | EmbeddingView
    | EmbeddingBackwardView
    | CopyView
    | CrossEntropyView
    | CollectiveView
    | OptimizerView
)


def _row_view(op: LocalOp) -> RowView:
    if op.tensors_with(TensorRole.GRAD):
        return row_backward_view(op, row_view_of)
    return _row_forward_view(op)


def _row_forward_view(op: LocalOp) -> RowView:
    only_roles(op, (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    tagged = [t for t in op.tensors if t.layout == RESIDUAL]
    x = one(op, TensorRole.INPUT, "x", besides=RESIDUAL)
    y = one(op, TensorRole.OUTPUT, "y", besides=RESIDUAL)
    view = row_view_of(op, x, y, op.tensors_with(TensorRole.WEIGHT))
    if not tagged:
        return view
    roles = [t.role for t in tagged]
    if op.kind is OpKind.SOFTMAX or sorted(r.value for r in roles) != ["input", "output"]:
        got = ", ".join(sorted(r.value for r in roles))
        raise fail(
            op,
            "a fused residual add (rmsnorm, layernorm) takes one input and one output with "
            f"layout 'residual', the residual read and the sum written (got {got})",
        )
    read, written = sorted(tagged, key=lambda t: t.role is TensorRole.OUTPUT)
    for t in (read, written):
        if t.num_elements != x.num_elements:
            shape = list(t.shape)
            raise fail(op, f"residual {shape} must have as many elements as x {list(x.shape)}")
    return dataclasses.replace(view, residual=(read, written))


def row_view_of(
    op: LocalOp, x: TensorSpec, y: TensorSpec, weights: tuple[TensorSpec, ...]
) -> RowView:
    """The row view of ``op`` with input ``x``, output ``y`` and ``weights``, checked (the
    backward pass passes x, dx and the weights, :mod:`opmodel.core.views_row_bwd`)."""
    length_attr = op.attrs.get("row_length")
    row_length = length_attr if isinstance(length_attr, int) else x.shape[-1]
    if x.num_elements % row_length:
        raise fail(
            op,
            f"row_length {row_length} does not divide the {x.num_elements} "
            f"elements of input {list(x.shape)}",
        )
    if y.num_elements != x.num_elements:
        raise fail(
            op, f"output {list(y.shape)} must have as many elements as input {list(x.shape)}"
        )
    if op.kind is OpKind.SOFTMAX and weights:
        raise fail(op, "softmax takes no weight tensor")
    for w in weights:
        if w.num_elements != row_length:
            raise fail(op, f"weight {list(w.shape)} must have row_length={row_length} elements")
    return RowView(
        rows=x.num_elements // row_length,
        row_length=row_length,
        x=x,
        y=y,
        weights=weights,
        compute_dtype=vector_dtype(op, x),
    )


def broadcasts(shape: tuple[int, ...], target: tuple[int, ...]) -> bool:
    """True when ``shape`` broadcasts to ``target`` (NumPy's rule, trailing dims aligned)."""
    if shape == target:  # the common case, without the per-dim walk
        return True
    if len(shape) > len(target):
        return False
    return all(s in (1, t) for s, t in zip(reversed(shape), reversed(target), strict=False))


def _elementwise_view(op: LocalOp) -> ElementwiseView:
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    inputs = op.tensors_with(TensorRole.INPUT)
    if not inputs:
        raise fail(op, "needs at least one input tensor")
    y = one(op, TensorRole.OUTPUT, "y")
    for index, x in enumerate(inputs):
        if not broadcasts(x.shape, y.shape):
            raise fail(
                op,
                f"input {index} shape {list(x.shape)} does not broadcast to output {list(y.shape)}",
            )
    _check_strided(op, inputs, y)
    function = op.attrs.get("function")
    if function == "where" and len(inputs) != 3:
        problem = "function where needs 3 inputs, a condition and two operands"
        raise fail(op, f"{problem} (got {len(inputs)})")
    return ElementwiseView(
        num_elements=y.num_elements,
        inputs=inputs,
        y=y,
        function=function if isinstance(function, str) else None,
        compute_dtype=vector_dtype(op, inputs[0]),
    )


def _check_strided(op: LocalOp, inputs: tuple[TensorSpec, ...], y: TensorSpec) -> None:
    """Layout ``strided`` marks an input of the output's shape, of at least two dimensions
    (the rows it skips between); the output is written contiguously."""
    if y.layout == STRIDED:
        raise fail(op, "the output is written contiguously; layout strided marks an input view")
    for index, x in enumerate(inputs):
        if x.layout == STRIDED and (x.shape != y.shape or len(x.shape) < 2):
            raise fail(
                op,
                f"input {index} has layout strided (a view with rows not adjacent): it needs the "
                f"output's shape {list(y.shape)} of at least 2 dimensions (got {list(x.shape)})",
            )


def _copy_view(op: LocalOp) -> CopyView:
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT))
    x = one(op, TensorRole.INPUT, "x")
    y = one(op, TensorRole.OUTPUT, "y")
    if x.num_elements != y.num_elements:
        raise fail(
            op, f"output {list(y.shape)} must have as many elements as input {list(x.shape)}"
        )
    return CopyView(num_elements=x.num_elements, x=x, y=y)


_BUILDERS: dict[OpKind, Callable[[LocalOp], OpView]] = {
    OpKind.GEMM: gemm_view,
    OpKind.BATCHED_GEMM: gemm_view,
    OpKind.GROUPED_GEMM: grouped_gemm_view,
    OpKind.ATTENTION_PREFILL: attention_view,
    OpKind.ATTENTION_DECODE: attention_view,
    OpKind.SOFTMAX: _row_view,
    OpKind.LAYERNORM: _row_view,
    OpKind.RMSNORM: _row_view,
    OpKind.ELEMENTWISE: _elementwise_view,
    OpKind.REDUCTION: reduction_view,
    OpKind.EMBEDDING: embedding_view,
    OpKind.COPY: _copy_view,
    OpKind.CROSS_ENTROPY: cross_entropy_view,
    OpKind.COLLECTIVE: collective_view,
    OpKind.OPTIMIZER: optimizer_view,
}


def build_view(op: LocalOp) -> OpView:
    """Parse ``op``'s tensors into the typed view of its kind (raises OpValidationError)."""
    if op.kind is not OpKind.ELEMENTWISE and any(t.layout == STRIDED for t in op.tensors):
        raise fail(op, "layout strided is for an elementwise op's inputs (ATen's strided views)")
    return _BUILDERS[op.kind](op)
