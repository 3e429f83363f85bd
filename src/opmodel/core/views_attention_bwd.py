"""The tensors of an attention's backward pass (:func:`~opmodel.core.views_matmul.attention_view`).

A backward attention is an ``attention_prefill`` op in phase ``train_bwd`` with one ``grad``
tensor, dO (shaped as O). It reads Q, K, V and the forward output O (``input`` tensors tagged
with layout ``q``, ``k``, ``v``, ``o``) and dO, and writes dQ, dK and dV (``output`` tensors
tagged ``q``, ``k``, ``v``, each shaped as its input). The per-row log-sum-exp the forward
saved (fp32, one value per query row and head) is read too; it is small and not a tensor here.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.viewcheck import fail, one

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["backward_tensors"]


def _tagged(op: LocalOp, role: TensorRole, tags: tuple[str, ...], what: str) -> list[TensorSpec]:
    """The ``role`` tensors of a backward attention, one per layout tag, in ``tags`` order."""
    found = op.tensors_with(role)
    by_tag = {t.layout: t for t in found}
    if len(found) != len(tags) or set(by_tag) != set(tags):
        names = "/".join(tags)
        raise fail(
            op,
            f"an attention backward needs {len(tags)} {role.value} tensors {what} tagged with "
            f"layout {names}; got {len(found)} with layouts {[t.layout for t in found]}",
        )
    return [by_tag[tag] for tag in tags]


def backward_tensors(op: LocalOp) -> tuple[list[TensorSpec], TensorSpec]:
    """(Q, K, V, O) and dO of a backward attention, its dQ, dK, dV checked against Q, K, V."""
    if op.kind is not OpKind.ATTENTION_PREFILL:
        raise fail(op, "only attention_prefill has a backward pass (a grad tensor dO)")
    if op.phase is not Phase.TRAIN_BWD:
        raise fail(
            op,
            f"a grad tensor (dO) makes this the attention's backward pass: phase must be "
            f"train_bwd (got {op.phase.value})",
        )
    forward = _tagged(op, TensorRole.INPUT, ("q", "k", "v", "o"), "(Q, K, V and O)")
    grads = _tagged(op, TensorRole.OUTPUT, ("q", "k", "v"), "(dQ, dK, dV)")
    for name, grad, tensor in zip(("dQ", "dK", "dV"), grads, forward, strict=False):
        if grad.shape != tensor.shape:
            raise fail(op, f"{name} must be shaped as its input {list(tensor.shape)}")
    grad_o = one(op, TensorRole.GRAD, "dO")
    if grad_o.shape != forward[3].shape:
        raise fail(op, f"dO must be shaped as O {list(forward[3].shape)}; got {list(grad_o.shape)}")
    return forward, grad_o
