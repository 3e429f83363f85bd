"""The tensors of a row op's backward pass (softmax, layernorm, rmsnorm): :class:`RowView`.

A row op with a ``grad`` tensor dy, in phase ``train_bwd``, is its backward pass. It reads the
forward's input x (softmax: the forward's output y, since ``dx = y (dy - sum(dy y))``), dy
(shaped as x) and the weights (layernorm's gamma and beta, rmsnorm's gamma), and writes dx (an
output shaped as x) and, optionally, the weights' gradients (outputs of ``row_length``
elements: dgamma, and layernorm's dbeta). The per-row statistics the forward saved (mean and
inverse standard deviation, fp32, one or two values per row) are read too; they are small and
not tensors here.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import TYPE_CHECKING

from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.viewcheck import fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec
    from opmodel.core.views import RowView

__all__ = ["row_backward_view"]

# gradients of its weights a kind may write: layernorm's dgamma and dbeta, rmsnorm's dgamma
_WEIGHT_GRADS = {OpKind.SOFTMAX: 0, OpKind.LAYERNORM: 2, OpKind.RMSNORM: 1}


def row_backward_view(
    op: LocalOp,
    forward: Callable[[LocalOp, TensorSpec, TensorSpec, tuple[TensorSpec, ...]], RowView],
) -> RowView:
    """The backward pass's view: ``forward`` (the forward view's checks,
    :func:`~opmodel.core.views.row_view_of`) checks x, dx and the weights as it checks x, y and
    the weights of the forward op; dy and the weights' gradients are checked here."""
    if op.phase is not Phase.TRAIN_BWD:
        raise fail(
            op,
            f"a grad tensor (dy) makes this the {op.kind.value}'s backward pass: phase must be "
            f"train_bwd (got {op.phase.value})",
        )
    roles = (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.GRAD, TensorRole.OUTPUT)
    only_roles(op, (*roles, TensorRole.WORKSPACE))
    dy = one(op, TensorRole.GRAD, "dy")
    x = one(op, TensorRole.INPUT, "x")
    if dy.shape != x.shape:
        raise fail(op, f"dy must be shaped as x {list(x.shape)}; got {list(dy.shape)}")
    outputs = op.tensors_with(TensorRole.OUTPUT)
    dx = [t for t in outputs if t.shape == x.shape]
    if len(dx) != 1:
        raise fail(op, f"needs exactly one output shaped as x {list(x.shape)} (dx), got {len(dx)}")
    grads = tuple(t for t in outputs if t is not dx[0])
    limit = _WEIGHT_GRADS[op.kind]
    if len(grads) > limit:
        raise fail(
            op,
            f"{op.kind.value} writes at most {limit} weight gradient(s) besides dx; "
            f"got {len(grads)} more outputs",
        )
    view = forward(op, x, dx[0], op.tensors_with(TensorRole.WEIGHT))
    for grad in grads:
        if grad.num_elements != view.row_length:
            raise fail(
                op,
                f"a weight gradient {list(grad.shape)} must have row_length={view.row_length} "
                "elements",
            )
    return dataclasses.replace(view, dy=dy, weight_grads=grads)
