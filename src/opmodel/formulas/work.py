"""The hardware-independent work of an op: FLOPs by kind of arithmetic and compulsory bytes.

One rule per view type; every model that needs FLOPs or compulsory traffic uses this.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from opmodel.core.attrs import ELEMENTWISE_FLOPS_PER_ELEMENT
from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.values import FastValue, value_type
from opmodel.core.viewcheck import compute_dtype
from opmodel.core.views import (
    AttentionView,
    CollectiveView,
    CopyView,
    CrossEntropyView,
    ElementwiseView,
    EmbeddingBackwardView,
    EmbeddingView,
    GemmView,
    OptimizerView,
    ReductionView,
    RowView,
)
from opmodel.formulas import collective as c
from opmodel.formulas import flops as f
from opmodel.formulas.optimizer import flops_per_element
from opmodel.formulas.traffic import (
    compulsory_read_bytes,
    compulsory_write_bytes,
    gather_read_bytes,
)

__all__ = ["OpWork", "collective_work", "op_work"]


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


def _gemm_work(op: LocalOp, view: GemmView, read: int, write: int) -> OpWork:
    mm = f.gemm_flops(view.batch, view.m, view.n, view.k)
    if view.group_sizes and not view.groups_along_k:  # only the routed groups' weights are read
        groups = len(view.group_sizes)
        read -= view.b.nbytes * (groups - view.active_groups) // groups
    return OpWork(
        matmul_flops=mm,
        matmul_dtype=view.compute_dtype,
        vector_flops=0,
        vector_dtype=None,
        read_bytes=read,
        write_bytes=write,
    )


def _attention_work(op: LocalOp, view: AttentionView, read: int, write: int) -> OpWork:
    # pairs per head over the batch (each request at its own length with kv_lengths)
    pairs, heads = view.batch_score_pairs, view.heads_q
    if view.shared_kv:  # V is a prefix of each key row: read with K, not apart
        read -= view.v.nbytes
    if view.kv_lengths is not None:  # rows past a request's lengths are neither read nor written
        read, write = _unpadded(view, read, write)
    dims = (view.head_dim_qk, view.head_dim_v)
    if view.backward:  # five GEMMs; the scores' recompute and dS, and D = rowsum(dO * O)
        mm = f.attention_backward_matmul_flops(heads, pairs, *dims)
        vector = f.ATTENTION_BACKWARD_FLOPS_PER_SCORE * heads * pairs + 2 * view.o.num_elements
    else:
        mm = f.attention_matmul_flops(heads, pairs, *dims)
        vector = f.softmax_flops(heads * pairs)
    return OpWork(
        matmul_flops=mm,
        matmul_dtype=view.compute_dtype,
        vector_flops=vector,
        vector_dtype=_attention_softmax_dtype(view),
        read_bytes=read,
        write_bytes=write,
    )


def _unpadded(view: AttentionView, read: int, write: int) -> tuple[int, int]:
    """``read`` and ``write`` less the padding past each request's lengths (attrs
    ``kv_lengths``, ``q_lengths``): in Q, K, V (and a backward pass's O and dO) read, and in
    O (or dQ, dK, dV) written."""
    q_read = view.q.nbytes + (view.o.nbytes + view.grad_o.nbytes if view.grad_o else 0)
    # the backward pass writes dQ, dK and dV, shaped as Q, K and V; the forward O
    q_written = view.q.nbytes if view.backward else view.o.nbytes
    kv_written = view.k.nbytes + view.v.nbytes if view.backward else 0
    unread = q_read - view.q_share(q_read) + view.kv_nbytes - view.kv_share(view.kv_nbytes)
    unwritten = q_written - view.q_share(q_written) + kv_written - view.kv_share(kv_written)
    return read - unread, write - unwritten


def _row_work(op: LocalOp, view: RowView, read: int, write: int) -> OpWork:
    elements, weights = view.x.num_elements, len(view.weights)
    if view.backward:
        grads = len(view.weight_grads)
        flops = f.row_backward_flops(op.kind.value, elements, weights, grads)
    elif op.kind is OpKind.SOFTMAX:
        flops = f.softmax_flops(elements)
    elif op.kind is OpKind.LAYERNORM:
        flops = f.layernorm_flops(elements, weights)
    else:
        flops = f.rmsnorm_flops(elements, weights)
    if view.residual is not None:  # the fused residual add: one add per element
        flops += elements
    return _vector(flops, view.compute_dtype, read, write)


def _elementwise_work(op: LocalOp, view: ElementwiseView, read: int, write: int) -> OpWork:
    per = (
        ELEMENTWISE_FLOPS_PER_ELEMENT[view.function]
        if view.function
        else max(1, len(view.inputs) - 1)
    )
    return _vector(f.elementwise_flops(view.num_elements, per), view.compute_dtype, read, write)


def _reduction_work(op: LocalOp, view: ReductionView, read: int, write: int) -> OpWork:
    return _vector(f.reduction_flops(view.x.num_elements), view.compute_dtype, read, write)


def _embedding_work(op: LocalOp, view: EmbeddingView, read: int, write: int) -> OpWork:
    row_bytes = nbytes_of(view.hidden, view.table.dtype)
    table_read = gather_read_bytes(view.tokens, view.vocab, row_bytes)
    return _vector(0, None, view.indices.nbytes + table_read, write)


def _embedding_backward_work(
    op: LocalOp, view: EmbeddingBackwardView, read: int, write: int
) -> OpWork:
    """One add per element of dy into the row its index names; the indices and dy read once,
    the whole gradient table written once (its zeroing and the scattered rows: the rows land
    on lines the zeroing wrote)."""
    return _vector(view.tokens * view.hidden, compute_dtype(op, DType.FP32), read, write)


def _copy_work(op: LocalOp, view: CopyView, read: int, write: int) -> OpWork:
    return _vector(0, None, read, write)


def _cross_entropy_work(op: LocalOp, view: CrossEntropyView, read: int, write: int) -> OpWork:
    flops = f.cross_entropy_flops(view.rows, view.vocab)
    return _vector(flops, view.compute_dtype, read, write)


def _collective_work(op: LocalOp, view: CollectiveView, read: int, write: int) -> OpWork:
    return collective_work(view)


def collective_work(view: CollectiveView) -> OpWork:
    """One rank's work in a collective of ``view`` (its additions and HBM bytes), for the
    algorithm the view names (``nvls``: the buffer once each way, no additions on the GPU)."""
    link = c.collective_link_bytes(view.operation, view.ranks, view.buffer_bytes, view.algorithm)
    hbm_read, hbm_write = c.collective_hbm_bytes(
        view.operation, link, view.send.nbytes, view.recv.nbytes
    )
    elements = max(view.send.num_elements, view.recv.num_elements)
    flops = c.collective_reduce_flops(view.operation, view.ranks, elements, view.algorithm)
    return _vector(flops, view.compute_dtype, hbm_read, hbm_write)


def _optimizer_work(op: LocalOp, view: OptimizerView, read: int, write: int) -> OpWork:
    """Every tensor read once; the parameters and states written back once, in place."""
    updated = view.params.nbytes + sum(s.nbytes for s in view.states)
    flops = view.elements * flops_per_element(view.algorithm)
    return _vector(flops, view.compute_dtype, updated + view.grads.nbytes, updated)


_RULES: dict[type, Callable[[LocalOp, Any, int, int], OpWork]] = {
    GemmView: _gemm_work,
    AttentionView: _attention_work,
    RowView: _row_work,
    ElementwiseView: _elementwise_work,
    ReductionView: _reduction_work,
    EmbeddingView: _embedding_work,
    EmbeddingBackwardView: _embedding_backward_work,
    CopyView: _copy_work,
    CrossEntropyView: _cross_entropy_work,
    CollectiveView: _collective_work,
    OptimizerView: _optimizer_work,
}


def _op_work(op: LocalOp) -> OpWork:
    """One rule per view type; each gets the generic compulsory read and write bytes."""
    read = compulsory_read_bytes(op.tensors)
    write = compulsory_write_bytes(op.tensors)
    return _RULES[type(op.view)](op, op.view, read, write)


def _vector(flops: int, dtype: DType | None, read: int, write: int) -> OpWork:
    return OpWork(
        matmul_flops=0,
        matmul_dtype=None,
        vector_flops=flops,
        vector_dtype=dtype if flops else None,
        read_bytes=read,
        write_bytes=write,
    )
