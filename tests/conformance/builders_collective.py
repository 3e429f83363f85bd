"""The conformance suite's collective ops (``OpKind.COLLECTIVE``): every operation, 2-8 ranks."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, TensorSpec
from opmodel.core.attrs_collective import COLLECTIVE_OPERATIONS as _COLLECTIVES


def collective(s: dict[str, int], d: DType) -> LocalOp:
    """``n`` elements a rank sends (all-gather) or receives (reduce-scatter), or its buffer."""
    operation = _COLLECTIVES[s["operation"]]
    ranks = 2 if operation == "send_recv" else s["ranks"]  # a send has a sender and a receiver
    send = s["n"] * ranks if operation == "reduce_scatter" else s["n"]
    recv = s["n"] * ranks if operation == "all_gather" else s["n"]
    tensors = (TensorSpec("input", (send,), d), TensorSpec("output", (recv,), d))
    attrs = {"operation": operation, "ranks": ranks}
    return LocalOp(
        name="collective", kind=OpKind.COLLECTIVE, phase="inference", tensors=tensors, attrs=attrs
    )


COLLECTIVE_SIZES = {"n": (1, 1 << 26), "ranks": (2, 8), "operation": (0, len(_COLLECTIVES) - 1)}
"""Buffer elements, ranks and the operation's index in ``_COLLECTIVES``."""
