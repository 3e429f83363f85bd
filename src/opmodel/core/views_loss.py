"""The shape view of a cross-entropy loss (``OpKind.CROSS_ENTROPY``): logits ``[..., vocab]``
and one integer target per row in, the loss out.

Tensors (docs/op_files.md): two ``input`` tensors, the logits (a floating dtype; every dim but
the last is a row) and the targets (an integer dtype, one per row), and one ``output``, the
loss: one element when reduced (attr ``reduction``: ``mean`` or ``sum``) or one per row
(``none``); without the attr, a one-element loss is reduced. A backward pass (a ``grad``
tensor) is not modelled: the error says how to write one with the other kinds.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.viewcheck import compute_dtype, fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["CrossEntropyView", "cross_entropy_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CrossEntropyView:
    """``loss = -log softmax(logits)[target]`` over ``rows`` rows of ``vocab`` logits."""

    rows: int
    vocab: int
    logits: TensorSpec
    targets: TensorSpec
    loss: TensorSpec
    reduced: bool  # the loss is the mean or sum over the rows, not one per row
    compute_dtype: DType


def _inputs(op: LocalOp) -> tuple[TensorSpec, TensorSpec]:
    """(logits, targets): the op's floating-point input and its integer one, in either order."""
    inputs = op.tensors_with(TensorRole.INPUT)
    if len(inputs) != 2:
        raise fail(op, f"needs two input tensors (logits, targets), got {len(inputs)}")
    floats = [t for t in inputs if t.dtype.is_float]
    if len(floats) != 1:
        raise fail(
            op, "needs one floating-point input (the logits) and one integer input (targets)"
        )
    logits = floats[0]
    return logits, inputs[1] if inputs[0] is logits else inputs[0]


def cross_entropy_view(op: LocalOp) -> CrossEntropyView:
    """Check ``op``'s tensors against the convention (module docstring)."""
    if op.tensors_with(TensorRole.GRAD):
        raise fail(
            op,
            "a backward pass (grad tensor) is not modelled; write PyTorch's as a copy-sized "
            "write of the logits' gradient (nll_loss's fill and scatter) and a softmax backward "
            "pass, and Liger's, whose forward wrote the gradient, as at most an elementwise mul "
            "(README, 'A training step's ops')",
        )
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT))
    logits, targets = _inputs(op)
    loss = one(op, TensorRole.OUTPUT, "loss")
    vocab = logits.shape[-1]
    rows = logits.num_elements // vocab
    if targets.num_elements != rows:
        raise fail(
            op,
            f"targets {list(targets.shape)} must hold one index per row of the logits "
            f"{list(logits.shape)} ({rows} rows)",
        )
    reduction = op.attrs.get("reduction")
    # without the attr, from the loss's shape (one row's single loss counts as reduced)
    reduced = loss.num_elements == 1 if reduction is None else reduction != "none"
    wanted = 1 if reduced else rows
    if loss.num_elements != wanted:
        what = "mean or sum: 1 element" if reduced else f"none: one per row, {rows}"
        raise fail(op, f"loss {list(loss.shape)} does not match the reduction ({what})")
    default = DType.FP64 if logits.dtype is DType.FP64 else DType.FP32
    return CrossEntropyView(
        rows=rows,
        vocab=vocab,
        logits=logits,
        targets=targets,
        loss=loss,
        reduced=reduced,
        compute_dtype=compute_dtype(op, default),
    )
