"""The shape views of an embedding lookup (``OpKind.EMBEDDING``): :class:`EmbeddingView`, and
its backward pass, :class:`EmbeddingBackwardView`.

Tensors (docs/op_files.md): one integer ``input``, the indices; one ``weight``, the table
``[vocab, hidden]``; one ``output`` ``[*indices.shape, hidden]``; an optional ``workspace``.

The backward pass (phase ``train_bwd``, a ``grad`` tensor): the integer indices ``input``, dy
(the ``grad``, shaped as the forward's output ``[*indices.shape, hidden]``) and the table's
gradient dW (the ``output``, ``[vocab, hidden]``, in dy's dtype: PyTorch's
``embedding_dense_backward`` allocates it with dy's options), a scatter-add of dy's rows
into the rows the indices name.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.enums import Phase, TensorRole
from opmodel.core.viewcheck import fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["EmbeddingBackwardView", "EmbeddingView", "embedding_view"]

# the warm-input attrs describe a forward gather's inputs; the backward's kernels do not use them
_FORWARD_ONLY = ("warm_l2", "warm_input", "producer_bytes", "producer_waves")


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingView:
    """``y[i, :] = table[indices[i], :]``: a gather of ``tokens`` rows of ``hidden`` elements."""

    tokens: int
    hidden: int
    vocab: int
    indices: TensorSpec
    table: TensorSpec
    y: TensorSpec


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingBackwardView:
    """``dw[indices[i], :] += dy[i, :]`` over ``tokens`` rows of ``hidden`` elements into a
    zeroed ``[vocab, hidden]`` gradient: the table's gradient."""

    tokens: int
    hidden: int
    vocab: int
    indices: TensorSpec
    dy: TensorSpec
    dw: TensorSpec
    distinct_indices: int | None  # attr distinct_indices: rows the indices name (None: unsaid)

    @property
    def backward(self) -> bool:
        """Always True: the embedding's backward pass."""
        return True


def embedding_view(op: LocalOp) -> EmbeddingView | EmbeddingBackwardView:
    """Check ``op``'s tensors against the convention (module docstring)."""
    if op.tensors_with(TensorRole.GRAD):
        return _backward_view(op)
    only_roles(op, (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    indices = one(op, TensorRole.INPUT, "indices")
    table = one(op, TensorRole.WEIGHT, "table [vocab, hidden]")
    y = one(op, TensorRole.OUTPUT, "y [..., hidden]")
    _integer_indices(op, indices)
    if len(table.shape) != 2:
        raise fail(op, f"table must be [vocab, hidden]; got {list(table.shape)}")
    vocab, hidden = table.shape
    _rows_of(op, y, indices, hidden, "output")
    if "distinct_indices" in op.attrs:
        raise fail(op, "attr distinct_indices applies to the embedding's backward pass only")
    return EmbeddingView(
        tokens=indices.num_elements, hidden=hidden, vocab=vocab, indices=indices, table=table, y=y
    )


def _backward_view(op: LocalOp) -> EmbeddingBackwardView:
    """The backward pass's tensors (module docstring)."""
    if op.phase is not Phase.TRAIN_BWD:
        raise fail(
            op,
            "a grad tensor (dy) makes this the embedding's backward pass: phase must be "
            f"train_bwd (got {op.phase.value})",
        )
    only_roles(op, (TensorRole.INPUT, TensorRole.GRAD, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    indices = one(op, TensorRole.INPUT, "indices")
    dy = one(op, TensorRole.GRAD, "dy [*indices, hidden]")
    dw = one(op, TensorRole.OUTPUT, "dw [vocab, hidden]")
    _integer_indices(op, indices)
    if len(dw.shape) != 2:
        raise fail(op, f"the output dw must be [vocab, hidden]; got {list(dw.shape)}")
    vocab, hidden = dw.shape
    _rows_of(op, dy, indices, hidden, "dy")
    if not dy.dtype.is_float or dw.dtype is not dy.dtype:
        raise fail(
            op,
            f"dy and dw must share one float dtype (got {dy.dtype.value} and {dw.dtype.value})",
        )
    distinct = _distinct_indices(op, min(indices.num_elements, vocab))
    return EmbeddingBackwardView(
        tokens=indices.num_elements,
        hidden=hidden,
        vocab=vocab,
        indices=indices,
        dy=dy,
        dw=dw,
        distinct_indices=distinct,
    )


def _distinct_indices(op: LocalOp, most: int) -> int | None:
    """Attr ``distinct_indices`` (at most ``most``: the tokens and the vocabulary), after
    rejecting the forward's warm-input attrs, which the backward's kernels do not use."""
    unmodelled = [a for a in _FORWARD_ONLY if a in op.attrs]
    if unmodelled:
        raise fail(
            op,
            f"attr {unmodelled[0]} is not modelled for the embedding's backward pass (its "
            "kernels read dy cold from DRAM)",
        )
    distinct = op.attrs.get("distinct_indices")
    if isinstance(distinct, int) and distinct > most:
        raise fail(
            op,
            f"attr distinct_indices must be at most min(tokens, vocab) = {most} (got {distinct})",
        )
    return distinct if isinstance(distinct, int) else None


def _integer_indices(op: LocalOp, indices: TensorSpec) -> None:
    if indices.dtype.is_float:
        raise fail(op, f"indices must have an integer dtype (got {indices.dtype.value})")


def _rows_of(op: LocalOp, t: TensorSpec, indices: TensorSpec, hidden: int, what: str) -> None:
    """``t`` must be ``[*indices.shape, hidden]`` (the forward's output, the backward's dy)."""
    if t.num_elements != indices.num_elements * hidden or t.shape[-1] != hidden:
        raise fail(
            op,
            f"{what} must be [*indices.shape, {hidden}] = "
            f"{[*indices.shape, hidden]}; got {list(t.shape)}",
        )
