"""The shape view of an embedding lookup (``OpKind.EMBEDDING``): :class:`EmbeddingView`.

Tensors (docs/op_files.md): one integer ``input``, the indices; one ``weight``, the table
``[vocab, hidden]``; one ``output`` ``[*indices.shape, hidden]``; an optional ``workspace``.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.enums import TensorRole
from opmodel.core.viewcheck import fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["EmbeddingView", "embedding_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class EmbeddingView:
    """``y[i, :] = table[indices[i], :]``: a gather of ``tokens`` rows of ``hidden`` elements."""

    tokens: int
    hidden: int
    vocab: int
    indices: TensorSpec
    table: TensorSpec
    y: TensorSpec


def embedding_view(op: LocalOp) -> EmbeddingView:
    """Check ``op``'s tensors against the convention (module docstring)."""
    only_roles(op, (TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT, TensorRole.WORKSPACE))
    indices = one(op, TensorRole.INPUT, "indices")
    table = one(op, TensorRole.WEIGHT, "table [vocab, hidden]")
    y = one(op, TensorRole.OUTPUT, "y [..., hidden]")
    if indices.dtype.is_float:
        raise fail(op, f"indices must have an integer dtype (got {indices.dtype.value})")
    if len(table.shape) != 2:
        raise fail(op, f"table must be [vocab, hidden]; got {list(table.shape)}")
    vocab, hidden = table.shape
    if y.num_elements != indices.num_elements * hidden or y.shape[-1] != hidden:
        raise fail(
            op,
            f"output must be [*indices.shape, {hidden}] = "
            f"{[*indices.shape, hidden]}; got {list(y.shape)}",
        )
    return EmbeddingView(
        tokens=indices.num_elements, hidden=hidden, vocab=vocab, indices=indices, table=table, y=y
    )
