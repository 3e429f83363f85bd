"""The backward op of a forward op (docs/op_files.md): what a training step runs for it.

A backward op is the same kind in phase ``train_bwd`` with a ``grad`` tensor, the incoming
gradient, shaped as the forward's output. It reads the forward's inputs and weights (attention
also its output O, tagged ``o``) and writes a gradient per input and weight, shaped as it.
Attention's tensors are tagged ``q``/``k``/``v``/``o`` whether or not the forward tagged them.
An embedding's backward op writes the table's gradient only (its integer indices have none).
"""

from __future__ import annotations

import dataclasses

from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.core.views import EmbeddingView, RowView
from opmodel.core.views_matmul import AttentionView

__all__ = ["BACKWARD_KINDS", "backward_of", "is_backward", "kind_label"]

BACKWARD_KINDS = (
    OpKind.ATTENTION_PREFILL,
    OpKind.SOFTMAX,
    OpKind.LAYERNORM,
    OpKind.RMSNORM,
    OpKind.EMBEDDING,
)
"""Kinds with a backward op; a GEMM's or an elementwise op's backward kernels are ops of their
own kind (README, "A training step's ops")."""
# attrs of a forward embedding its backward op does not take: the gather's kernel and inputs
_EMBEDDING_FORWARD_ATTRS = frozenset(
    {"implementation", "warm_l2", "warm_input", "producer_bytes", "producer_waves"}
)


def _embedding_backward(op: LocalOp, view: EmbeddingView) -> LocalOp:
    """The table's gradient: the indices, dy shaped as the output, dw shaped as the table (in
    the output's dtype), ATen's kernels (the forward's kernel and warm-input attrs dropped)."""
    tensors = (
        view.indices,
        dataclasses.replace(view.y, role=TensorRole.GRAD),
        TensorSpec(TensorRole.OUTPUT, view.table.shape, view.y.dtype),
    )
    attrs = {k: v for k, v in op.attrs.items() if k not in _EMBEDDING_FORWARD_ATTRS}
    return LocalOp(name=op.name, kind=op.kind, phase=Phase.TRAIN_BWD, tensors=tensors, attrs=attrs)


def _read(op: LocalOp) -> tuple[tuple[TensorSpec, ...], TensorSpec]:
    """(what the backward reads of the forward, besides its output; the output)."""
    view = op.view
    if isinstance(view, AttentionView):
        tagged = tuple(
            dataclasses.replace(t, layout=tag)
            for t, tag in ((view.q, "q"), (view.k, "k"), (view.v, "v"))
        )
        return tagged, dataclasses.replace(view.o, layout="o")
    assert isinstance(view, RowView)
    if view.residual is not None:
        raise OpValidationError(
            f"op '{op.name}' ({op.kind.value}): backward_of a fused residual add is not modelled; "
            "take backward_of the norm without its residual tensors (the add passes dy through)"
        )
    return (view.x, *view.weights), view.y


def backward_of(op: LocalOp) -> LocalOp:
    """The backward op of the forward op ``op`` (module docstring), with ``op``'s name and
    attrs; an OpValidationError for a kind without one or an op that is a backward already."""
    if not isinstance(op, LocalOp):
        raise OpValidationError(f"backward_of: expected a LocalOp (got {type(op).__name__})")
    if op.kind not in BACKWARD_KINDS:
        kinds = ", ".join(k.value for k in BACKWARD_KINDS)
        raise OpValidationError(
            f"op '{op.name}' ({op.kind.value}): has no backward op (kinds with one: {kinds})"
        )
    if op.tensors_with(TensorRole.GRAD):
        raise OpValidationError(f"op '{op.name}' ({op.kind.value}): is a backward op already")
    if isinstance(op.view, EmbeddingView):
        return _embedding_backward(op, op.view)
    read, output = _read(op)
    saved = (dataclasses.replace(output, role=TensorRole.INPUT),)
    tensors = (
        *read,
        *(saved if op.kind is OpKind.ATTENTION_PREFILL else ()),
        dataclasses.replace(output, role=TensorRole.GRAD),
        *(dataclasses.replace(t, role=TensorRole.OUTPUT) for t in read),
    )
    return LocalOp(
        name=op.name, kind=op.kind, phase=Phase.TRAIN_BWD, tensors=tensors, attrs=op.attrs
    )


def is_backward(op: LocalOp) -> bool:
    """True for an op's backward pass (a ``grad`` tensor: docs/op_files.md)."""
    return bool(getattr(op.view, "backward", False))


def kind_label(op: LocalOp) -> str:
    """The op's kind, ``<kind>_backward`` for its backward pass: the groups of the validation
    tables and of the accuracy table the text summary quotes."""
    return f"{op.kind.value}_backward" if is_backward(op) else op.kind.value
