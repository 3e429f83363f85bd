"""Constructors of the GEMM ops: GEMM, batched GEMM, and grouped GEMM along M and along K.

Each returns the :class:`~opmodel.core.op.LocalOp` of the README's kind conventions, so that
``ops.gemm(4096, 1024, 8192)`` is the op a hand-written ``LocalOp`` of three tensors would be;
extra keyword arguments are op attrs (kernel attrs, ``l2_dirty_bytes``, ...), checked against
the kind's schema as any op's are.
"""

from __future__ import annotations

from collections.abc import Sequence

from opmodel.core.attrs import AttrValue
from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.ops._common import assemble, dtype_of, flag, non_negative, positive, tensor

__all__ = ["batched_gemm", "gemm", "grouped_gemm", "grouped_gemm_wgrad"]

_IN, _W, _OUT = TensorRole.INPUT, TensorRole.WEIGHT, TensorRole.OUTPUT


def _mk(m: int, k: int, transposed: bool) -> tuple[int, int]:
    return (k, m) if transposed else (m, k)


def _operands(
    where: str,
    mnk: tuple[object, object, object],
    dtypes: tuple[object, object, object],
    transposes: tuple[bool, bool],
) -> tuple[TensorSpec, TensorSpec, TensorSpec]:
    """A ``[m, k]``, B ``[k, n]`` and C ``[m, n]`` (A and B laid out as ``transposes`` say),
    in ``dtypes`` = (A's, B's or None for A's, C's or None for A's); sizes and dtypes checked,
    errors naming the constructor ``where``. The constructors add their batch or group dims."""
    m, n, k = (positive(where, key, v) for key, v in zip(("m", "n", "k"), mnk, strict=True))
    d = dtype_of(where, "dtype", dtypes[0])
    w = d if dtypes[1] is None else dtype_of(where, "weight_dtype", dtypes[1])
    c = d if dtypes[2] is None else dtype_of(where, "out_dtype", dtypes[2])
    return (
        tensor(_IN, _mk(m, k, transposes[0]), d),
        tensor(_W, _mk(k, n, transposes[1]), w),
        tensor(_OUT, (m, n), c),
    )


def gemm(
    m: int,
    n: int,
    k: int,
    dtype: DType | str = DType.BF16,
    *,
    out_dtype: DType | str | None = None,
    weight_dtype: DType | str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """``C[m, n] = A[m, k] @ B[k, n]``: A input (``[k, m]`` with ``transpose_a``), B weight
    (``[n, k]`` with ``transpose_b``) in ``weight_dtype`` (default ``dtype``; ``"nvfp4"``
    with a bf16 ``dtype`` is a weight-only quantised GEMM), C output in ``out_dtype``
    (default ``dtype``)."""
    dtypes = (dtype, weight_dtype, out_dtype)
    tensors = _operands("ops.gemm", (m, n, k), dtypes, (transpose_a, transpose_b))
    options: dict[str, AttrValue | None] = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    return assemble(OpKind.GEMM, (name, phase), tensors, options, attrs)


def batched_gemm(
    batch: int,
    m: int,
    n: int,
    k: int,
    dtype: DType | str = DType.BF16,
    *,
    broadcast_b: bool = False,
    out_dtype: DType | str | None = None,
    weight_dtype: DType | str | None = None,
    transpose_a: bool = False,
    transpose_b: bool = False,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """``C[b] = A[b] @ B[b]`` for ``batch`` entries; with ``broadcast_b`` one B ``[k, n]``
    serves every entry (a weight shared over the batch); B in ``weight_dtype`` (default
    ``dtype``)."""
    where = "ops.batched_gemm"
    b = positive(where, "batch", batch)
    dtypes = (dtype, weight_dtype, out_dtype)
    a, w, c = _operands(where, (m, n, k), dtypes, (transpose_a, transpose_b))
    tensors = (
        tensor(_IN, (b, *a.shape), a.dtype),
        tensor(_W, w.shape if flag(where, "broadcast_b", broadcast_b) else (b, *w.shape), w.dtype),
        tensor(_OUT, (b, *c.shape), c.dtype),
    )
    options: dict[str, AttrValue | None] = {"transpose_a": transpose_a, "transpose_b": transpose_b}
    return assemble(OpKind.BATCHED_GEMM, (name, phase), tensors, options, attrs)


def _group_sizes(where: str, group_sizes: Sequence[int]) -> tuple[int, ...]:
    """The groups' rows as Python ints (each >= 0, at least one > 0)."""
    if isinstance(group_sizes, str | bytes) or not isinstance(group_sizes, Sequence):
        listed = getattr(group_sizes, "tolist", None)
        if not callable(listed):
            msg = f"{where}: group_sizes must be a list of integers >= 0 (got {group_sizes!r})"
            raise OpValidationError(msg)
        group_sizes = listed()
    sizes = [non_negative(where, f"group_sizes[{i}]", v) for i, v in enumerate(group_sizes)]
    if not sizes or sum(sizes) == 0:
        msg = f"{where}: group_sizes must hold at least one group with rows (got {sizes!r})"
        raise OpValidationError(msg)
    return tuple(sizes)


def grouped_gemm(
    group_sizes: Sequence[int],
    n: int,
    k: int,
    dtype: DType | str = DType.BF16,
    *,
    transpose_b: bool = False,
    out_dtype: DType | str | None = None,
    weight_dtype: DType | str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.INFERENCE,
    **attrs: AttrValue,
) -> LocalOp:
    """Experts' GEMMs grouped along M: group ``g`` multiplies its ``group_sizes[g]`` rows of
    A ``[rows, k]`` by ``B[g]`` (``[groups, k, n]``, ``[groups, n, k]`` with
    ``transpose_b``, in ``weight_dtype``, default ``dtype``) into C ``[rows, n]``; a group of
    0 rows reads no weights."""
    where = "ops.grouped_gemm"
    sizes = _group_sizes(where, group_sizes)
    dtypes = (dtype, weight_dtype, out_dtype)
    a, w, c = _operands(where, (sum(sizes), n, k), dtypes, (False, transpose_b))
    tensors = (a, tensor(_W, (len(sizes), *w.shape), w.dtype), c)
    options: dict[str, AttrValue | None] = {"transpose_b": transpose_b, "group_sizes": sizes}
    return assemble(OpKind.GROUPED_GEMM, (name, phase), tensors, options, attrs)


def grouped_gemm_wgrad(
    group_sizes: Sequence[int],
    m: int,
    n: int,
    dtype: DType | str = DType.BF16,
    *,
    transpose_a: bool = True,
    out_dtype: DType | str | None = None,
    name: str | None = None,
    phase: Phase | str = Phase.TRAIN_BWD,
    **attrs: AttrValue,
) -> LocalOp:
    """Experts' weight gradients, grouped along K: ``dW_g = X_g^T dY_g`` over each group's
    ``group_sizes[g]`` rows, X ``[rows, m]`` (as activations are stored; ``[m, rows]`` with
    ``transpose_a=False``), dY ``[rows, n]``, dW ``[groups, m, n]``."""
    where = "ops.grouped_gemm_wgrad"
    sizes = _group_sizes(where, group_sizes)
    a, w, c = _operands(where, (m, n, sum(sizes)), (dtype, None, out_dtype), (transpose_a, False))
    tensors = (a, w, tensor(_OUT, (len(sizes), *c.shape), c.dtype))
    options: dict[str, AttrValue | None] = {"transpose_a": transpose_a, "group_sizes": sizes}
    return assemble(OpKind.GROUPED_GEMM, (name, phase), tensors, options, attrs)
