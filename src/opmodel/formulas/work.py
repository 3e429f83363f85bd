"""The hardware-independent work of an op: FLOPs by kind of arithmetic and compulsory bytes.

One rule per view type; every model that needs FLOPs or compulsory traffic uses this.
"""

from __future__ import annotations

from opmodel.core.attrs import ELEMENTWISE_FLOPS_PER_ELEMENT
from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import (
    AttentionView,
    CopyView,
    ElementwiseView,
    EmbeddingView,
    GemmView,
    ReductionView,
    RowView,
)
from opmodel.formulas import flops as f
from opmodel.formulas.traffic import (
    compulsory_read_bytes,
    compulsory_write_bytes,
    gather_read_bytes,
)

__all__ = ["OpWork", "op_work"]


@value_type
class OpWork(FastValue):
    """FLOPs an op must do and bytes it must move, independent of any hardware.

    ``matmul_flops`` may run on a tensor engine (in ``matmul_dtype``); ``vector_flops`` run on
    the vector engine (in ``vector_dtype``). Bytes are the compulsory global-memory traffic.
    """

    matmul_flops: int
    matmul_dtype: DType | None
    vector_flops: int
    vector_dtype: DType | None
    read_bytes: int
    write_bytes: int

    @property
    def flops(self) -> int:
        """All FLOPs."""
        return self.matmul_flops + self.vector_flops


def _attention_softmax_dtype(view: AttentionView) -> DType:
    return DType.FP64 if view.compute_dtype is DType.FP64 else DType.FP32


def op_work(op: LocalOp) -> OpWork:
    """The work of ``op`` (see :mod:`opmodel.formulas.flops`), memoised in ``op.derived_cache``."""
    work = op.derived_cache.get("work")
    if work is None:
        work = op.derived_cache["work"] = _op_work(op)
    return work


def _op_work(op: LocalOp) -> OpWork:  # noqa: PLR0911 - one branch per view type
    view = op.view
    read = compulsory_read_bytes(op.tensors)
    write = compulsory_write_bytes(op.tensors)
    if isinstance(view, GemmView):
        mm = f.gemm_flops(view.batch, view.m, view.n, view.k)
        return OpWork(
            matmul_flops=mm,
            matmul_dtype=view.compute_dtype,
            vector_flops=0,
            vector_dtype=None,
            read_bytes=read,
            write_bytes=write,
        )
    if isinstance(view, AttentionView):
        pairs = view.score_pairs
        batch_heads = view.batch * view.heads_q
        mm = f.attention_matmul_flops(batch_heads, pairs, view.head_dim_qk, view.head_dim_v)
        return OpWork(
            matmul_flops=mm,
            matmul_dtype=view.compute_dtype,
            vector_flops=f.softmax_flops(batch_heads * pairs),
            vector_dtype=_attention_softmax_dtype(view),
            read_bytes=read,
            write_bytes=write,
        )
    if isinstance(view, RowView):
        elements = view.x.num_elements
        weights = len(view.weights)
        if op.kind is OpKind.SOFTMAX:
            vec = f.softmax_flops(elements)
        elif op.kind is OpKind.LAYERNORM:
            vec = f.layernorm_flops(elements, weights)
        else:
            vec = f.rmsnorm_flops(elements, weights)
        return _vector(vec, view.compute_dtype, read, write)
    if isinstance(view, ElementwiseView):
        per = (
            ELEMENTWISE_FLOPS_PER_ELEMENT[view.function]
            if view.function
            else max(1, len(view.inputs) - 1)
        )
        return _vector(f.elementwise_flops(view.num_elements, per), view.compute_dtype, read, write)
    if isinstance(view, ReductionView):
        return _vector(f.reduction_flops(view.x.num_elements), view.compute_dtype, read, write)
    if isinstance(view, EmbeddingView):
        row_bytes = nbytes_of(view.hidden, view.table.dtype)
        table_read = gather_read_bytes(view.tokens, view.vocab, row_bytes)
        return _vector(0, None, view.indices.nbytes + table_read, write)
    assert isinstance(view, CopyView)
    return _vector(0, None, read, write)


def _vector(flops: int, dtype: DType | None, read: int, write: int) -> OpWork:
    return OpWork(
        matmul_flops=0,
        matmul_dtype=None,
        vector_flops=flops,
        vector_dtype=dtype if flops else None,
        read_bytes=read,
        write_bytes=write,
    )
