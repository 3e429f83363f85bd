"""The rows of ``validate-gemm-latency``: their size classes, the op each describes, and the
deterministic training splits (the fixed overhead's ``small`` and ``vector_like`` rows; the
power-limited clock's ``large`` unlocked rows), with the overhead's one-constant fit."""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from enum import StrEnum

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.nnls import relative_offset

__all__ = [
    "OVERHEAD_CLASSES",
    "SizeClass",
    "fit_overhead_cycles",
    "row_key",
    "row_op",
    "size_class",
    "training_rows",
]

SMALL_FLOPS = 1e9  # under ~10 us on an A100: launch and tail dominate
LARGE_FLOPS = 1e11  # over ~0.3 ms on an A100: throughput dominates
VECTOR_DIM = 16  # M or N at most 16: GEMV-like
SKINNY_DIM = 128  # M or N at most one CTA tile


class SizeClass(StrEnum):
    """GEMM size classes (thresholds above, documented in docs/validation.md)."""

    VECTOR_LIKE = "vector_like"
    SMALL = "small"
    SKINNY = "skinny"
    REGULAR = "regular"
    LARGE = "large"


def size_class(row: GemmRow) -> SizeClass:
    """vector_like (min(M, N) <= 16), small (< 1 GFLOP), skinny (min(M, N) <= 128), large
    (>= 100 GFLOP), else regular; tested in that order."""
    flops = 2 * row.batch * row.m * row.n * row.k
    if min(row.m, row.n) <= VECTOR_DIM:
        return SizeClass.VECTOR_LIKE
    if flops < SMALL_FLOPS:
        return SizeClass.SMALL
    if min(row.m, row.n) <= SKINNY_DIM:
        return SizeClass.SKINNY
    return SizeClass.LARGE if flops >= LARGE_FLOPS else SizeClass.REGULAR


def row_op(row: GemmRow) -> LocalOp:
    """The GEMM (or batched GEMM) op a measured row describes, its kernel columns as attrs."""
    batched = row.batch > 1
    a = (row.k, row.m) if row.transpose_a else (row.m, row.k)
    b = (row.n, row.k) if row.transpose_b else (row.k, row.n)
    lead = (row.batch,) if batched else ()
    attrs: dict[str, object] = {
        "transpose_a": row.transpose_a,
        "transpose_b": row.transpose_b,
        **row.kernel,
    }
    if row.compute_dtype is not None:
        attrs["compute_dtype"] = row.compute_dtype.value
    if row.l2_dirty_bytes:
        attrs["l2_dirty_bytes"] = row.l2_dirty_bytes
    # an FP8 GEMM writes bf16 (torch._scaled_mm's out_dtype in opmodel measure; cuBLASLt)
    out = DType.BF16 if row.dtype.family is DType.FP8 else row.dtype
    return LocalOp(
        name=row.label or "gemm",
        kind=OpKind.BATCHED_GEMM if batched else OpKind.GEMM,
        phase=Phase.INFERENCE,
        attrs=attrs,  # type: ignore[arg-type]
        tensors=(
            TensorSpec(TensorRole.INPUT, (*lead, *a), row.dtype),
            TensorSpec(TensorRole.WEIGHT, (*lead, *b), row.dtype),
            TensorSpec(TensorRole.OUTPUT, (*lead, row.m, row.n), out),
        ),
    )


OVERHEAD_CLASSES = (SizeClass.SMALL, SizeClass.VECTOR_LIKE)


def training_rows(
    rows: Sequence[GemmRow],
    per_class: int,
    classes: tuple[SizeClass, ...] = OVERHEAD_CLASSES,
    *,
    unlocked_only: bool = False,
) -> set[int]:
    """Indices of up to ``per_class`` evenly spaced rows of each of ``classes`` per hardware
    (with ``unlocked_only``: per hardware and power state, of rows measured without a locked
    clock)."""
    chosen: set[int] = set()
    groups: dict[tuple[str, str, SizeClass], list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        cls = size_class(row)
        if cls in classes and not (unlocked_only and row.clock_hz):
            state = row.power_state if unlocked_only else ""  # the power fit is per state
            groups[(row.hardware, state, cls)].append(index)
    for members in groups.values():
        members.sort(
            key=lambda i: (
                rows[i].batch * rows[i].m * rows[i].n * rows[i].k,
                rows[i].m,
                rows[i].n,
                rows[i].k,
                rows[i].label,
            )
        )
        step = max(1, len(members) // per_class)
        chosen.update(members[::step][:per_class])
    return chosen


def fit_overhead_cycles(
    base_s: Sequence[float], measured_s: Sequence[float], clock_hz: Sequence[float]
) -> float:
    """Non-negative least squares of relative errors for one overhead ``x`` in cycles.

    Minimises ``sum(((p + x / f - m) / m)^2)`` over predictions ``p``, measurements ``m`` and
    clocks ``f`` (:func:`~opmodel.validation.nnls.relative_offset`).
    """
    return relative_offset(base_s, measured_s, clock_hz)


def row_key(row: GemmRow) -> str:
    """A row's identity in a calibration file's list of training rows: source, hardware, locked
    clock, ``batch x m x n x k``, dtype and transposes (rows of the same shape and source, e.g.
    one GEMM of two LLMs, share a key)."""
    clock = f"@{row.clock_hz / 1e6:.0f}MHz" if row.clock_hz else ""
    ta, tb = ("T" if t else "N" for t in (row.transpose_a, row.transpose_b))
    shape = f"{row.batch}x{row.m}x{row.n}x{row.k}"
    return f"{row.source} {row.hardware}{clock} {shape} {row.dtype.value} {ta}{tb}"
