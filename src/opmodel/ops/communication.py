"""The collective constructor: ``ops.collective("all_reduce", elements, ranks)``
(docs/op_files.md)."""

from __future__ import annotations

from opmodel.core.attrs import AttrValue
from opmodel.core.attrs_collective import COLLECTIVE_OPERATIONS
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.ops._common import assemble, dtype_of, positive, tensor

__all__ = ["collective"]


def collective(  # noqa: PLR0913 - the op's sizes, dtype and its standard keywords
    operation: str,
    elements: int,
    ranks: int,
    dtype: DType | str = DType.BF16,
    *,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """One rank's part of ``operation`` over ``ranks`` devices on a buffer of ``elements``:
    the reduced or exchanged buffer (all_reduce, all_to_all, broadcast, send_recv), the
    gathered output of all_gather (each rank sends ``elements / ranks``), or the input of
    reduce_scatter (each rank keeps ``elements / ranks``), as nccl-tests sizes them."""
    where = "ops.collective"
    if not isinstance(operation, str) or operation not in COLLECTIVE_OPERATIONS:
        accepted = ", ".join(COLLECTIVE_OPERATIONS)
        raise OpValidationError(f"{where}: operation must be one of {accepted} (got {operation!r})")
    n, r = positive(where, "elements", elements), positive(where, "ranks", ranks)
    shard = n // r
    if operation in ("all_gather", "reduce_scatter") and shard * r != n:
        raise OpValidationError(
            f"{where}: elements must be a multiple of ranks for {operation} (got {n} and {r})"
        )
    send = shard if operation == "all_gather" else n
    recv = shard if operation == "reduce_scatter" else n
    d = dtype_of(where, "dtype", dtype)
    tensors = (tensor(TensorRole.INPUT, (send,), d), tensor(TensorRole.OUTPUT, (recv,), d))
    options: dict[str, AttrValue | None] = {"operation": operation, "ranks": r}
    return assemble(OpKind.COLLECTIVE, (name, phase), tensors, options, attrs)
