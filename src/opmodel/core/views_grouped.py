"""The shape view of a grouped GEMM: one GEMM per group over contiguous rows of A.

``C[rows, n] = A[rows, k] @ B[g, k, n]`` where the rows of A (and of C) come in contiguous
groups, group ``g`` taking the next ``group_sizes[g]`` rows and multiplying them by its own
``B[g]``: the expert GEMMs of a mixture-of-experts layer once tokens are sorted by expert
(DeepGEMM's "contiguous layout", PyTorch's ``torch._grouped_mm`` with offsets, vLLM's and
SGLang's fused MoE kernels). ``transpose_b`` stores each ``B[g]`` as ``[n, k]`` (a linear
layer's weight). Groups are along M only: a weight-gradient GEMM whose groups split the
contraction (``dW[g] = A[g]^T dC[g]``) is a different kernel and is refused with a pointer to
its per-group GEMMs.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from opmodel.core.viewcheck import compute_dtype, fail
from opmodel.core.views_matmul import GemmView, gemm_dims, gemm_operands

if TYPE_CHECKING:
    from opmodel.core.op import LocalOp, TensorSpec

__all__ = ["balanced_group_sizes", "grouped_gemm_view"]


def balanced_group_sizes(rows: int, groups: int) -> tuple[int, ...]:
    """``rows`` split over ``groups`` as evenly as possible: the first ``rows mod groups``
    groups take one row more (the default of attr ``group_sizes``)."""
    base, extra = divmod(rows, groups)
    return (base + 1,) * extra + (base,) * (groups - extra)


def _shapes(op: LocalOp, a: TensorSpec, b: TensorSpec, c: TensorSpec) -> None:
    if op.attrs.get("transpose_a", False) is True:
        raise fail(
            op,
            "transpose_a is not accepted: a grouped_gemm groups the rows of A (M); a weight "
            "gradient grouped along K (dW[g] = A[g]^T dC[g]) is one gemm per group",
        )
    for name, tensor, rank, form in (
        ("A", a, 2, "[rows, k]"),
        ("B", b, 3, "[groups, k, n] ([groups, n, k] with transpose_b)"),
        ("C", c, 2, "[rows, n]"),
    ):
        if len(tensor.shape) != rank:
            raise fail(op, f"{name} must be {form}; got shape {list(tensor.shape)}")


def _group_sizes(op: LocalOp, rows: int, groups: int) -> tuple[int, ...]:
    given = op.attrs.get("group_sizes")
    if given is None:
        return balanced_group_sizes(rows, groups)
    assert isinstance(given, tuple)  # validated and frozen by LocalOp
    if len(given) != groups:
        raise fail(
            op,
            f"attrs.group_sizes: needs one entry per group of B ({groups}); got {len(given)}",
        )
    if sum(given) != rows:
        raise fail(
            op,
            f"attrs.group_sizes: must sum to A's rows ({rows}); they sum to {sum(given)}",
        )
    return given


def grouped_gemm_view(op: LocalOp) -> GemmView:
    """Parse and check a grouped GEMM; raise OpValidationError naming the problem."""
    a, b, c = gemm_operands(op)
    _shapes(op, a, b, c)
    rows, n, k, _, tb = gemm_dims(op, a, b)
    if c.shape != (rows, n):
        raise fail(op, f"C must be {[rows, n]} for A {list(a.shape)} and B {list(b.shape)}")
    return GemmView(
        batch=1,
        m=rows,
        n=n,
        k=k,
        a=a,
        b=b,
        c=c,
        transpose_a=False,
        transpose_b=tb,
        broadcast_b=False,
        compute_dtype=compute_dtype(op, a.dtype),
        group_sizes=_group_sizes(op, rows, b.shape[0]),
    )
