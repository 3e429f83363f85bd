"""The sorting path of an embedding's backward pass (over 3,072 tokens): its kernels, each
timed by :func:`~opmodel.models.streaming.evaluate_streaming`, in launch order
(:mod:`opmodel.models.streaming.embedding_backward` describes them).

Both segment kernels' grids are sized for the most segments the indices could make; the CTAs
past the real counts load the count and exit, in waves after the real ones (``empty_s``).
Two-pass: ``INDEX_KERNELS`` index kernels, ``compute_grad_weight`` (dy's rows into fp32
partial sums, written out) and ``sum_and_scatter`` (the partial sums read back, warm in L2 as
far as they survive the partial sums' kernel, and the segments' rows stored). Atomic (a
vocabulary of a few rows): one more index kernel, for a 16-bit gradient the zero fill of an fp32
copy, the atomic partial sums (whose adds meet in L2: each row of the copy is written back once)
and the cast copy of the fp32 rows into the gradient (fp32 and fp64, their own opmath types:
the adds go to the gradient).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.views import EmbeddingBackwardView
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.shared.sass_code import is_rocm
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.embedding_backward import (
    INDEX_KERNELS,
    NROWS_PER_THREAD,
    EmbeddingSegments,
    SortedGrid,
    atomic_sums_kernel,
    cast_kernel,
    fill_kernel,
    index_kernel,
    partial_sums_kernel,
    runs_atomic_path,
    scatter_kernel,
    segments,
    sorted_grid,
)
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["SortedPath", "empty_ctas_s", "sorted_path", "zero_fill"]

_ACC = DType.FP32  # the partial sums and the atomic path's copy: fp32 (acc_type, opmath_type)
_SIXTEEN_BIT = (DType.FP16, DType.BF16)  # whose opmath_type is fp32: the atomic path's copy


@dataclass(frozen=True, slots=True)
class SortedPath:
    """The sorting path's kernels after the gradient's fill: ``index`` (one of ``index_count``),
    ``before`` (kernels between the index kernels and the sums: the atomic path's fill of its
    fp32 copy), ``sums`` (``compute_grad_weight`` or its atomic form), ``after``
    (``sum_and_scatter``, or the atomic path's cast copy), the segments, and ``atomic``."""

    index: StreamingEvaluation
    index_count: int
    before: StreamingEvaluation | None
    sums: StreamingEvaluation
    after: StreamingEvaluation | None
    seg: EmbeddingSegments
    atomic: bool
    empty_s: float  # the sums' and scatter's CTAs past the real counts


def empty_ctas_s(ctas: int, resident_per_sm: int, hardware: HardwareSpec) -> float:
    """The time of ``ctas`` CTAs of a kernel that each load one value from L2 and exit (a grid
    sized past its work), ``resident_per_sm`` of them at a time on each SM: a wave per
    ``resident x SMs`` CTAs, each an L2 round trip (DRAM without an L2) and a CTA turnaround
    (``cta_turnaround_cycles``), as the streaming chain prices them."""
    sm = hardware.compute.sm
    if ctas <= 0 or sm is None:
        return 0.0
    l2 = hardware.levels_by_name.get("l2")
    trip = l2.latency_s if l2 is not None else hardware.hbm.latency_s
    waves = math.ceil(ctas / (max(1, resident_per_sm) * sm.sm_count))
    return waves * (trip + sm.cta_turnaround_cycles / hardware.compute.clock_hz)


def _grid_ctas(rows: int, grid: SortedGrid) -> int:
    return math.ceil(rows * grid.columns / grid.block)


def _empty_ctas_s(
    view: EmbeddingBackwardView,
    grid: SortedGrid,
    seg: EmbeddingSegments,
    kernels: tuple[StreamingEvaluation, StreamingEvaluation | None],
    hardware: HardwareSpec,
) -> float:
    """The time of the CTAs past the real counts of the partial sums' grid (over ``tokens //
    10 + min(tokens, vocab)`` partial segments) and the scatter's (``min(tokens, vocab)``
    segments), each at its kernel's residency (``kernels``: the two evaluations; the atomic
    path has no scatter)."""
    most = min(view.tokens, view.vocab)
    sums, scatter = kernels
    partials = _grid_ctas(view.tokens // NROWS_PER_THREAD + most, grid)
    out = empty_ctas_s(
        partials - _grid_ctas(seg.partial, grid), sums.resident_ctas_per_sm, hardware
    )
    if scatter is not None:
        extra = _grid_ctas(most, grid) - _grid_ctas(seg.distinct, grid)
        out += empty_ctas_s(extra, scatter.resident_ctas_per_sm, hardware)
    return out


def zero_fill(
    elements: int, dtype: DType, hardware: HardwareSpec, dirty_bytes: int = 0
) -> StreamingEvaluation:
    """ATen's fill of ``elements`` elements of ``dtype`` (``at::zeros``, ``zero_``): a
    stream of stores."""
    return _stream(fill_kernel(elements), hardware, (0, nbytes_of(elements, dtype)), dirty_bytes)


def _stream(
    kernel: StreamKernel, hardware: HardwareSpec, read_write: tuple[int, int], dirty_bytes: int = 0
) -> StreamingEvaluation:
    """``kernel`` reading and writing ``read_write`` bytes, no arithmetic."""
    read, write = read_write
    work = StreamWork(
        read_bytes=read, shared_read_bytes=0, reread_bytes=0, write_bytes=write, flops=0,
        vector_flops_per_s=0.0, dirty_bytes=dirty_bytes,
    )  # fmt: skip
    return evaluate_streaming(kernel, hardware, work)


def _sums_work(view: EmbeddingBackwardView, written: int, fp32: float) -> StreamWork:
    """dy's rows and their positions read, ``written`` bytes stored, one add per element."""
    return StreamWork(
        read_bytes=view.dy.nbytes + view.indices.nbytes, shared_read_bytes=0, reread_bytes=0,
        write_bytes=written, flops=view.tokens * view.hidden, vector_flops_per_s=fp32,
    )  # fmt: skip


def _two_pass(
    view: EmbeddingBackwardView, grid: SortedGrid, seg: EmbeddingSegments, hardware: HardwareSpec
) -> tuple[StreamingEvaluation, StreamingEvaluation]:
    """``compute_grad_weight`` and ``sum_and_scatter``."""
    fp32 = hardware.compute.vector_peak(DType.FP32) or 0.0
    partials = nbytes_of(seg.partial * view.hidden, _ACC)
    sums = _sums_work(view, partials, fp32)
    scatter = StreamWork(
        read_bytes=partials, shared_read_bytes=0, reread_bytes=0,
        write_bytes=nbytes_of(seg.distinct * view.hidden, view.dw.dtype),
        flops=seg.partial * view.hidden, vector_flops_per_s=fp32,
        warm_read_bytes=partials,  # compute_grad_weight just wrote them
        producer_bytes=sums.read_bytes + partials,
    )  # fmt: skip
    return (
        evaluate_streaming(partial_sums_kernel(view.tokens, seg.partial, grid), hardware, sums),
        evaluate_streaming(scatter_kernel(seg.distinct, seg.partial, grid), hardware, scatter),
    )


def sorted_path(view: EmbeddingBackwardView, hardware: HardwareSpec) -> SortedPath:
    """The sorting path's kernels on ``hardware`` (module docstring)."""
    sm = hardware.compute.sm
    assert sm is not None  # GPUs only
    rocm = is_rocm(hardware.architecture)
    grid = sorted_grid(view.hidden, sm.warp_size, rocm, hardware.architecture)
    seg = segments(view.tokens, view.vocab, view.distinct_indices)
    index_bytes = 2 * view.indices.nbytes  # keys and positions, read and written
    index = _stream(index_kernel(view.tokens), hardware, (index_bytes, index_bytes))
    if not runs_atomic_path(view.tokens, view.vocab, grid, sm.sm_count):
        sums, scatter = _two_pass(view, grid, seg, hardware)
        empty = _empty_ctas_s(view, grid, seg, (sums, scatter), hardware)
        return SortedPath(index, INDEX_KERNELS, None, sums, scatter, seg, False, empty)
    elements = view.vocab * view.hidden
    copied = view.dw.dtype in _SIXTEEN_BIT  # opmath is fp32: fp32 and fp64 add into dw itself
    before = zero_fill(elements, _ACC, hardware) if copied else None
    rows = nbytes_of(seg.distinct * view.hidden, _ACC if copied else view.dw.dtype)
    fp32 = hardware.compute.vector_peak(DType.FP32) or 0.0
    kernel = atomic_sums_kernel(view.tokens, seg.partial, grid)
    sums = evaluate_streaming(kernel, hardware, _sums_work(view, rows, fp32))
    cast = (nbytes_of(elements, _ACC), view.dw.nbytes)
    after = _stream(cast_kernel(elements), hardware, cast) if copied else None
    empty = _empty_ctas_s(view, grid, seg, (sums, None), hardware)
    return SortedPath(index, INDEX_KERNELS + 1, before, sums, after, seg, True, empty)
