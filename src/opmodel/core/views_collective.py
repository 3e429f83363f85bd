"""The shape view of a collective communication op (``OpKind.COLLECTIVE``): one rank's part.

Tensors (docs/op_files.md): one ``input``, the rank's send buffer, and one ``output``, its
receive buffer, of one dtype. ``all_reduce``, ``all_to_all``, ``broadcast`` and ``send_recv``
(between 2 ranks) keep the element count; ``all_gather`` receives ``ranks`` times what each
rank sends and ``reduce_scatter`` sends ``ranks`` times what it receives. The op's ``buffer``
is the larger of the two, the size nccl-tests reports (NVIDIA/nccl-tests doc/PERFORMANCE.md).
Attrs ``operation`` and ``ranks`` are required; ``ranks_per_node`` (optional) places the group
on nodes and must divide ``ranks``. On a TPU's ICI, ``torus_shape`` (optional, default
``[ranks]``) gives the group's extent along each torus axis it spans, its product ``ranks``,
and ``wraparound`` (default true) whether those axes close into rings.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import TYPE_CHECKING

from opmodel.core.attrs_collective import COLLECTIVE_OPERATIONS
from opmodel.core.dtypes import DType
from opmodel.core.enums import TensorRole
from opmodel.core.viewcheck import compute_dtype, fail, one, only_roles

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["CollectiveView", "collective_view"]


@dataclass(frozen=True, slots=True, kw_only=True)
class CollectiveView:
    """One rank's ``operation`` over a group of ``ranks`` devices."""

    operation: str
    ranks: int
    protocol: str  # auto, ll, ll128 or simple
    algorithm: str  # auto, ring, tree or nvls
    ranks_per_node: int | None  # the group's devices in each node (None: the hardware decides)
    send: TensorSpec
    recv: TensorSpec
    buffer_bytes: int  # the larger of send and receive buffer
    compute_dtype: DType  # of the reduction's additions
    torus_shape: tuple[int, ...] | None = None  # ICI: the group's extent per torus axis
    wraparound: bool | None = None  # ICI: whether those axes are rings (None: not given)

    @property
    def torus_extents(self) -> tuple[int, ...]:
        """The group's extent per torus axis: ``torus_shape``, else one axis of ``ranks``."""
        return self.torus_shape or (self.ranks,)


def _required(op: LocalOp, name: str, what: str) -> object:
    value = op.attrs.get(name)
    if value is None:
        raise fail(op, f"attrs.{name} is required ({what})")
    return value


def _check_sizes(op: LocalOp, operation: str, ranks: int, counts: tuple[int, int]) -> None:
    sent, received = counts
    if operation == "all_gather":
        wanted, rule = sent * ranks, "ranks x the input's"
    elif operation == "reduce_scatter":
        wanted, rule = sent // ranks if sent % ranks == 0 else -1, "the input's / ranks"
    else:
        wanted, rule = sent, "the input's"
    if received != wanted:
        raise fail(
            op,
            f"{operation} over {ranks} ranks: the output holds {received} elements, where it "
            f"must hold {rule} ({sent} in the input)",
        )


def _ranks_per_node(op: LocalOp, ranks: int) -> int | None:
    per_node = op.attrs.get("ranks_per_node")
    if per_node is None:
        return None
    assert isinstance(per_node, int)
    if ranks % per_node:
        raise fail(
            op,
            f"attrs.ranks_per_node {per_node} must divide attrs.ranks {ranks} (the group fills "
            "each of its nodes alike)",
        )
    return per_node


def _check_algorithm(
    op: LocalOp, names: tuple[str, str, str], ranks: int, per_node: int | None
) -> None:
    """NVLink SHARP: an all-reduce in one node with the simple protocol; the tree: an
    all-reduce."""
    operation, protocol, algorithm = names
    if algorithm == "nvls" and (operation != "all_reduce" or protocol not in ("auto", "simple")):
        raise fail(
            op,
            "algorithm nvls (NVLink SHARP) runs all_reduce with the simple protocol "
            f"(got {operation}, protocol {protocol})",
        )
    if algorithm == "nvls" and per_node is not None and per_node < ranks:
        raise fail(
            op, "algorithm nvls (NVLink SHARP) reduces inside one node (ranks_per_node < ranks)"
        )
    if algorithm == "tree" and operation != "all_reduce":
        raise fail(
            op, f"algorithm tree (NCCL's double binary tree) runs all_reduce (got {operation})"
        )


def _torus_shape(op: LocalOp, ranks: int) -> tuple[int, ...] | None:
    shape = op.attrs.get("torus_shape")
    if shape is None:
        return None
    assert isinstance(shape, list | tuple)
    sizes = tuple(int(n) for n in shape)
    if len(sizes) > 3 or math.prod(sizes) != ranks:
        raise fail(
            op,
            f"attrs.torus_shape {list(sizes)} must list one to three axis extents whose product "
            f"is attrs.ranks {ranks}",
        )
    return sizes


def collective_view(op: LocalOp) -> CollectiveView:
    """Check ``op``'s tensors and attrs against the convention (module docstring)."""
    only_roles(op, (TensorRole.INPUT, TensorRole.OUTPUT))
    operation = str(_required(op, "operation", ", ".join(COLLECTIVE_OPERATIONS)))
    ranks = _required(op, "ranks", "devices in the group, at least 2")
    assert isinstance(ranks, int)
    if operation == "send_recv" and ranks != 2:
        raise fail(op, f"send_recv is between 2 ranks, the sender and the receiver (got {ranks})")
    send = one(op, TensorRole.INPUT, "the send buffer")
    recv = one(op, TensorRole.OUTPUT, "the receive buffer")
    if send.dtype is not recv.dtype:
        raise fail(
            op, f"input and output must share a dtype ({send.dtype.value}, {recv.dtype.value})"
        )
    _check_sizes(op, operation, ranks, (send.num_elements, recv.num_elements))
    protocol, algorithm = op.attrs.get("protocol", "auto"), op.attrs.get("algorithm", "auto")
    assert isinstance(protocol, str) and isinstance(algorithm, str)
    per_node = _ranks_per_node(op, ranks)
    _check_algorithm(op, (operation, protocol, algorithm), ranks, per_node)
    return CollectiveView(
        operation=operation,
        ranks=ranks,
        protocol=protocol,
        algorithm=algorithm,
        ranks_per_node=per_node,
        send=send,
        recv=recv,
        buffer_bytes=max(send.nbytes, recv.nbytes),
        compute_dtype=compute_dtype(op, DType.FP64 if send.dtype is DType.FP64 else DType.FP32),
        torus_shape=_torus_shape(op, ranks),
        wraparound=_wraparound(op),
    )


def _wraparound(op: LocalOp) -> bool | None:
    value = op.attrs.get("wraparound")
    assert value is None or isinstance(value, bool)
    return value
