"""The loss constructor: ``ops.cross_entropy(rows, vocab)`` (docs/op_files.md)."""

from __future__ import annotations

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.ops._common import assemble, dtype_of, positive, tensor

__all__ = ["cross_entropy"]

_REDUCTIONS = ("mean", "sum", "none")


def cross_entropy(
    rows: int,
    vocab: int,
    dtype: DType | str = DType.FP32,
    *,
    reduction: str = "mean",
    target_dtype: DType | str = DType.INT64,
    implementation: str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.TRAIN_FWD,
    **attrs: AttrValue,
) -> LocalOp:
    """The cross-entropy loss of ``rows`` rows of ``vocab`` logits (fp32 by default, as a
    language model's head upcasts them) against one integer target per row: the loss's
    ``mean`` (default) or ``sum`` as one fp32 element, or ``none``, one per row.
    ``implementation``: ``pytorch`` (``nn.CrossEntropyLoss``, the kernel-level models'
    default) or ``fused`` (Liger-Kernel's kernel)."""
    where = "ops.cross_entropy"
    r, v = positive(where, "rows", rows), positive(where, "vocab", vocab)
    if not isinstance(reduction, str) or reduction not in _REDUCTIONS:
        accepted = ", ".join(_REDUCTIONS)
        raise OpValidationError(f"{where}: reduction must be one of {accepted} (got {reduction!r})")
    loss = (r,) if reduction == "none" else (1,)
    tensors = (
        tensor(TensorRole.INPUT, (r, v), dtype_of(where, "dtype", dtype)),
        tensor(TensorRole.INPUT, (r,), dtype_of(where, "target_dtype", target_dtype)),
        tensor(TensorRole.OUTPUT, loss, DType.FP32),
    )
    options: dict[str, AttrValue | None] = {
        "implementation": implementation,
        "reduction": reduction,
    }
    return assemble(OpKind.CROSS_ENTROPY, (name, phase), tensors, options, attrs)
