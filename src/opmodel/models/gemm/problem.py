"""``GemmProblem``: the sizes, dtypes and layout of one (batched) GEMM, from its op."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import field
from typing import Any

from opmodel.core.attrs import int_attr
from opmodel.core.dtypes import DTYPE_STORAGE_BITS, DType, nbytes_of
from opmodel.core.errors import OpModelError
from opmodel.core.op import LocalOp
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import GemmView

__all__ = ["GemmProblem"]


@value_type
class GemmProblem(FastValue):
    """``C[batch, m, n] = A[batch, m, k] @ B[(batch,) k, n] (+ beta C)``.

    A grouped GEMM (kind ``grouped_gemm``) has ``rows``, the grouped dimension's total. Grouped
    along M it has ``group_m``, the rows of each group that has any (ascending): its traffic
    equations see a batched GEMM of ``batch`` = those groups, each ``m = ceil(rows / batch)``
    rows with its own B, its grid counts each group's own row tiles
    (:func:`~opmodel.models.gemm.occupancy.grid_of`), and its FLOPs and A and C bytes are
    those of the ``rows``. Grouped along K (weight gradients) it has ``group_k``, the rows of
    each group that has any (ascending), and ``zero_groups``, the others, whose C is only
    zeroed: a batched GEMM of ``batch`` = the groups with rows, each with ``k = ceil(rows /
    batch)``, whose grid counts each group's own K tiles; FLOPs and A and B bytes are those of
    the ``rows``, C's those of every group
    (docs/models/extended_roofline.md, "Grouped GEMMs").

    ``beta_zero`` is False when the epilogue reads C (``C = A @ B + beta C``).
    ``broadcast_b`` means one B serves every batch entry. ``l2_dirty_bytes``: what another
    kernel wrote just before (attr; traffic.gemm_traffic writes back what the kernel evicts).
    """

    batch: int
    m: int
    n: int
    k: int
    a_dtype: DType
    b_dtype: DType
    c_dtype: DType
    compute_dtype: DType
    transpose_a: bool
    transpose_b: bool
    broadcast_b: bool
    beta_zero: bool
    l2_dirty_bytes: int = 0  # another kernel's dirty lines in L2 at the start (attr)
    group_m: tuple[int, ...] = ()  # grouped along M: the non-empty groups' rows, ascending
    group_k: tuple[int, ...] = ()  # grouped along K: the non-empty groups' rows, ascending
    zero_groups: int = 0  # grouped along K: groups without rows (their C is zeroed)
    # a grouped GEMM's grouped rows (M or K), the sum of its groups' rows; 0 otherwise
    rows: int = field(init=False, compare=False, repr=False)
    # bits stored per element of A, B and C (a block-scaled type's scales included), derived
    # once (the traffic equations use them often)
    a_bits: float = field(init=False, compare=False, repr=False)
    b_bits: float = field(init=False, compare=False, repr=False)
    c_bits: float = field(init=False, compare=False, repr=False)
    # everything but the dtypes, as plain ints and bools: the memo key where the dtypes are
    # already part of an outer key (hashing it costs a fraction of hashing the problem)
    sizes: tuple[int, int, int, int, bool, bool, bool, bool, int, tuple[int, ...]] = field(
        init=False, compare=False, repr=False
    )
    # (a, b, c, compute) dtypes: with ``sizes``, what memo keys need of a problem
    dtypes: tuple[DType, DType, DType, DType] = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        fields = self.__dict__
        fields["rows"] = sum(self.group_m or self.group_k)
        fields["a_bits"] = DTYPE_STORAGE_BITS[self.a_dtype]
        fields["b_bits"] = DTYPE_STORAGE_BITS[self.b_dtype]
        fields["c_bits"] = DTYPE_STORAGE_BITS[self.c_dtype]
        fields["sizes"] = (
            self.batch,
            self.m,
            self.n,
            self.k,
            self.transpose_a,
            self.transpose_b,
            self.broadcast_b,
            self.beta_zero,
            self.l2_dirty_bytes,
            # grouping: (len(group_m), *group_m, *group_k, zero_groups), unambiguous by axis
            (len(self.group_m), *self.group_m, *self.group_k, self.zero_groups),
        )
        fields["dtypes"] = (self.a_dtype, self.b_dtype, self.c_dtype, self.compute_dtype)

    @classmethod
    def from_op(cls, op: LocalOp) -> GemmProblem:
        """The problem of a GEMM or batched-GEMM op."""
        view = op.view
        if not isinstance(view, GemmView):
            msg = f"op '{op.name}' ({op.kind}): not a GEMM"
            raise OpModelError(msg)
        grouping: dict[str, Any] = {}
        batch = view.batch
        if view.group_sizes:  # the groups with rows are the batch entries
            grouping = _grouping(view)
            batch = len(grouping.get("group_m") or grouping["group_k"])
        return GemmProblem.make(
            batch=batch,
            m=-(-view.m // batch) if "group_m" in grouping else view.m,
            n=view.n,
            k=-(-view.k // batch) if "group_k" in grouping else view.k,
            a_dtype=view.a.dtype,
            b_dtype=view.b.dtype,
            c_dtype=view.c.dtype,
            compute_dtype=view.compute_dtype,
            transpose_a=view.transpose_a,
            transpose_b=view.transpose_b,
            broadcast_b=view.broadcast_b,
            beta_zero=op.attrs.get("beta_zero", True) is True,
            l2_dirty_bytes=int_attr(op.attrs, "l2_dirty_bytes"),
            **grouping,
        )

    @property
    def total_rows(self) -> int:
        """Rows of A and C over every batch entry or group."""
        return self.rows if self.group_m else self.batch * self.m

    @property
    def flops(self) -> int:
        """Useful FLOPs: ``2 * batch * m * n * k`` (grouped: over the ``rows``)."""
        if self.group_k:
            return 2 * self.m * self.n * self.rows
        return 2 * self.total_rows * self.n * self.k

    @property
    def a_bytes(self) -> int:
        """Bytes of A over all batches."""
        if self.group_k:
            return nbytes_of(self.m * self.rows, self.a_dtype)
        return nbytes_of(self.total_rows * self.k, self.a_dtype)

    @property
    def b_bytes(self) -> int:
        """Bytes of B (once when broadcast)."""
        if self.group_k:
            return nbytes_of(self.rows * self.n, self.b_dtype)
        copies = 1 if self.broadcast_b else self.batch
        return nbytes_of(copies * self.k * self.n, self.b_dtype)

    @property
    def c_bytes(self) -> int:
        """Bytes of C over all batches (and the zeroed groups of a K-grouped GEMM)."""
        return nbytes_of((self.total_rows + self.zero_groups * self.m) * self.n, self.c_dtype)


def _grouping(view: GemmView) -> dict[str, Any]:
    """A grouped GEMM's ``group_m`` (groups along M) or ``group_k`` and ``zero_groups``
    (along K): the groups with rows, ascending, and the others."""
    ascending = sorted(view.group_sizes)
    routed = tuple(ascending[bisect_right(ascending, 0) :])
    if view.groups_along_k:
        return {"group_k": routed, "zero_groups": len(ascending) - len(routed)}
    return {"group_m": routed}
