"""The shape view of a grouped GEMM: one GEMM per group over contiguous rows.

Two forms, told apart by the ranks of B and C (``group_sizes[g]`` is group ``g``'s rows):

- **Grouped along M** (B ``[groups, k, n]``, C ``[rows, n]``): ``C[rows, n] = A[rows, k] @
  B[g, k, n]``, group ``g`` multiplying its next ``group_sizes[g]`` rows of A by its own
  ``B[g]``: a mixture-of-experts layer's expert GEMMs once tokens are sorted by expert
  (DeepGEMM's "contiguous layout", PyTorch's ``torch._grouped_mm`` with offsets, vLLM's and
  SGLang's fused MoE kernels), and their input gradients ``dX = dY W^T``. ``transpose_b``
  stores each ``B[g]`` as ``[n, k]`` (a linear layer's weight).
- **Grouped along K** (B ``[rows, n]``, C ``[groups, m, n]``): the rows are the contraction,
  ``C[g] = A[:, rows of g] @ B[rows of g, :]``. With ``transpose_a`` A is stored ``[rows, m]``
  and this is the experts' weight gradients ``dW[g] = X_g^T dY_g`` (DeepGEMM's K-grouped
  kernels, ``torch._grouped_mm`` of two 2-D operands); without it A is stored ``[m, rows]``,
  and with ``transpose_b`` B is stored ``[n, rows]``.
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


_FORMS = (
    "A [rows, k], B [groups, k, n] ([groups, n, k] with transpose_b) and C [rows, n] (groups "
    "along M), or A [m, rows] ([rows, m] with transpose_a), B [rows, n] ([n, rows] with "
    "transpose_b) and C [groups, m, n] (groups along K)"
)


def _along_k(op: LocalOp, a: TensorSpec, b: TensorSpec, c: TensorSpec) -> bool:
    """True for the K-grouped form; an error naming both forms when the ranks fit neither."""
    ranks = (len(a.shape), len(b.shape), len(c.shape))
    if ranks == (2, 3, 2):
        if op.attrs.get("transpose_a", False) is True:
            raise fail(
                op,
                "transpose_a is not accepted when the groups split the rows of A (M): A is "
                "[rows, k] (a weight gradient, grouped along K, has B [rows, n] and C "
                "[groups, m, n])",
            )
        return False
    if ranks == (2, 2, 3):
        return True
    shapes = f"A {list(a.shape)}, B {list(b.shape)}, C {list(c.shape)}"
    raise fail(op, f"shapes must be {_FORMS}; got {shapes}")


def _group_sizes(op: LocalOp, rows: int, groups: int, axis: str) -> tuple[int, ...]:
    given = op.attrs.get("group_sizes")
    if given is None:
        return balanced_group_sizes(rows, groups)
    assert isinstance(given, tuple)  # validated and frozen by LocalOp
    if len(given) != groups:
        holder = "B" if axis == "M" else "C"
        raise fail(
            op,
            f"attrs.group_sizes: needs one entry per group of {holder} ({groups}); "
            f"got {len(given)}",
        )
    if sum(given) != rows:
        what = "A's rows" if axis == "M" else "the rows of A and B (K)"
        raise fail(op, f"attrs.group_sizes: must sum to {what} ({rows}); they sum to {sum(given)}")
    return given


def grouped_gemm_view(op: LocalOp) -> GemmView:
    """Parse and check a grouped GEMM; raise OpValidationError naming the problem."""
    a, b, c = gemm_operands(op)
    along_k = _along_k(op, a, b, c)
    m, n, k, ta, tb = gemm_dims(op, a, b)
    rows, groups = (k, c.shape[0]) if along_k else (m, b.shape[0])
    want_c = (groups, m, n) if along_k else (m, n)
    if c.shape != want_c:
        raise fail(op, f"C must be {list(want_c)} for A {list(a.shape)} and B {list(b.shape)}")
    return GemmView(
        batch=1,
        m=m,
        n=n,
        k=k,
        a=a,
        b=b,
        c=c,
        transpose_a=ta,
        transpose_b=tb,
        broadcast_b=False,
        compute_dtype=compute_dtype(op, a.dtype),
        group_sizes=_group_sizes(op, rows, groups, "K" if along_k else "M"),
        groups_along_k=along_k,
    )
