"""An embedding's backward pass on GPUs as the kernels PyTorch's ``embedding_dense_backward``
launches (:mod:`opmodel.models.streaming.embedding_backward`), each timed by
:func:`~opmodel.models.streaming.evaluate_streaming` with its fixed overhead, the times added.

Up to 3,072 tokens: the gradient's zero fill and ``embedding_backward_feature_kernel``. Over
3,072: the zero fill, ``INDEX_KERNELS`` small kernels over the indices, then the two-pass
or the atomic partial sums (:mod:`.embedding_sorted`). No count goes to the host, so the host
enqueues the kernels as fast as it launches them: while the fill runs it queues the index
kernels; what the GPU has not yet been given when it finishes them waits for the host, at the
config's ``kernel_launch_overhead_s`` per launch: ``max(0, (k + 1) L - (fill + the k small
kernels' time))`` before the partial sums (``host_s``; the board idles at its static power
meanwhile). Only ATen's kernels are modelled (``implementation: pytorch``, the default).
Energy as :mod:`.streaming_op`: the roofline's arithmetic energy (one add per element of dy),
DRAM and L2 bytes x J/byte, static power x the summed latency. docs/models/streaming.md,
"Embedding backward".
"""

from __future__ import annotations

from collections.abc import Mapping

from opmodel.core.attrs import int_attr
from opmodel.core.dtypes import DType, nbytes_of
from opmodel.core.errors import OpValidationError
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import EmbeddingBackwardView
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.embedding_sorted import SortedPath, sorted_path, zero_fill
from opmodel.models.effective_roofline.streaming_cost import streaming_cost, streaming_profile
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.shared.sass_code import is_rocm
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.embedding_backward import FEATURE_KERNEL_MAX_TOKENS, feature_kernel
from opmodel.models.streaming.evaluate import StreamingEvaluation

# AT_DISPATCH_FLOATING_TYPES_AND2(Half, BFloat16) in Embedding.cu and EmbeddingBackwardKernel.cu
_ATEN_DTYPES = (DType.FP64, DType.FP32, DType.FP16, DType.BF16)

__all__ = [
    "EmbeddingBackwardEvaluation",
    "predict_embedding",
    "predict_embedding_backward",
    "zero_fill",
]


@value_type
class EmbeddingBackwardEvaluation(FastValue):
    """The kernels of an embedding's backward pass: ``path`` (``feature``, ``two_pass`` or
    ``atomic``), the gradient's zero ``fill``; on the sorting path one of the
    ``index_kernels`` (each of ``index_count``), the atomic path's ``accumulator_fill`` (its
    fp32 copy zeroed, for a 16-bit gradient), ``partial_sums`` (``compute_grad_weight`` or its
    atomic form) and ``scatter`` (``sum_and_scatter``, or the atomic path's cast copy), else
    ``feature`` (``embedding_backward_feature_kernel``); the segments counted (0 on the
    feature kernel's path, which counts none); ``host_s``, the time the GPU waits for the
    host's launches; ``empty_ctas_s``, the segment kernels' CTAs past the real counts (their
    grids are sized for the most segments); the summed latency."""

    path: str
    fill: StreamingEvaluation
    index_kernels: StreamingEvaluation | None
    index_count: int
    accumulator_fill: StreamingEvaluation | None
    partial_sums: StreamingEvaluation | None
    scatter: StreamingEvaluation | None
    feature: StreamingEvaluation | None
    distinct_rows: int
    partial_segments: int
    host_s: float
    empty_ctas_s: float
    latency_s: float

    @property
    def limiter(self) -> str:
        """The limiter of the kernel that takes longest."""
        parts = (self.fill, self.accumulator_fill, self.partial_sums, self.scatter, self.feature)
        longest = max((p for p in parts if p is not None), key=lambda e: e.latency_s)
        return longest.limiter


def _check(op: LocalOp) -> EmbeddingBackwardView:
    view = op.view
    assert isinstance(view, EmbeddingBackwardView)
    implementation = op.attrs.get("implementation", "pytorch")
    if implementation != "pytorch":
        raise OpValidationError(
            f"op '{op.name}' (embedding): its backward pass is modelled for implementation "
            f"pytorch only (ATen's embedding_dense_backward; got {implementation})"
        )
    if view.dy.dtype not in _ATEN_DTYPES:
        accepted = ", ".join(d.value for d in _ATEN_DTYPES)
        raise OpValidationError(
            f"op '{op.name}' (embedding): ATen's embedding backward takes dy in {accepted} "
            f"(got {view.dy.dtype.value})"
        )
    return view


def _feature(view: EmbeddingBackwardView, hardware: HardwareSpec) -> StreamingEvaluation:
    """The feature kernel: dy and the gradient rows it adds to read, those rows written."""
    rows = nbytes_of(view.tokens * view.hidden, view.dy.dtype)
    work = StreamWork(
        read_bytes=view.indices.nbytes + 2 * rows,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=rows,
        flops=view.tokens * view.hidden,
        vector_flops_per_s=hardware.compute.vector_peak(DType.FP32) or 0.0,
    )
    sm = hardware.compute.sm
    assert sm is not None  # GPUs only
    rocm, arch = is_rocm(hardware.architecture), hardware.architecture
    kernel = feature_kernel(view.tokens, view.hidden, sm.warp_size, rocm, arch)
    return evaluate_streaming(kernel, hardware, work)


def _cost(
    base: RooflineSetup,
    hardware: HardwareSpec,
    run: tuple[tuple[StreamingEvaluation, ...], tuple[int, ...]],
    host_s: float,
) -> tuple[float, Mapping[str, LevelTraffic], EnergyBreakdown]:
    """(latency, traffic, energy) of the kernels ``run`` lists (each with how often it runs)
    and the host's gaps, during which the board idles at its static power."""
    kernels, counts = run
    latency = sum(n * k.latency_s for n, k in zip(counts, kernels, strict=True)) + host_s
    # every kernel's stores pass through the L2: the fill, the partial sums, the rows, ...
    written = round(sum(n * k.dram_write_bytes for n, k in zip(counts, kernels, strict=True)))
    traffic, energy = streaming_cost(base, hardware, kernels, written, counts)
    energy = EnergyBreakdown.make(
        tensor_j=energy.tensor_j,
        vector_j=energy.vector_j,
        memory_j=energy.memory_j,
        static_j=energy.static_j + hardware.power.static_w * host_s,
    )
    return latency, traffic, energy


def _host_s(path: SortedPath, fill: StreamingEvaluation, launch_s: float) -> float:
    """The GPU's wait for the host before the partial sums (module docstring): the host
    launches the index kernels, the atomic path's fill and the sums one ``launch_s`` apart
    from the gradient's fill on, while the GPU runs the fill and those kernels."""
    small = path.index_count + (path.before is not None)
    busy = fill.latency_s + path.index_count * path.index.latency_s
    busy += path.before.latency_s if path.before is not None else 0.0
    return max(0.0, (small + 1) * launch_s - busy)


def _evaluation(
    fill: StreamingEvaluation, path: SortedPath | StreamingEvaluation, host_s: float, total: float
) -> EmbeddingBackwardEvaluation:
    """The diagnostics of either path (``path``: the sorting path, or the feature kernel)."""
    if isinstance(path, StreamingEvaluation):
        return EmbeddingBackwardEvaluation(
            path="feature", fill=fill, index_kernels=None, index_count=0, accumulator_fill=None,
            partial_sums=None, scatter=None, feature=path, distinct_rows=0, partial_segments=0,
            host_s=host_s, empty_ctas_s=0.0, latency_s=total,
        )  # fmt: skip
    return EmbeddingBackwardEvaluation(
        path="atomic" if path.atomic else "two_pass", fill=fill, index_kernels=path.index,
        index_count=path.index_count, accumulator_fill=path.before, partial_sums=path.sums,
        scatter=path.after, feature=None, distinct_rows=path.seg.distinct,
        partial_segments=path.seg.partial, host_s=host_s, empty_ctas_s=path.empty_s,
        latency_s=total,
    )  # fmt: skip


def predict_embedding_backward(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of an embedding's backward pass on a GPU (module docstring), at the
    device's boost clock as the other streaming kernels."""
    view = _check(op)
    hardware = boosted(hardware)
    base = roofline_setup(op, hardware)
    dirty = int_attr(op.attrs, "l2_dirty_bytes")
    fill = zero_fill(view.vocab * view.hidden, view.dw.dtype, hardware, dirty)
    path: SortedPath | StreamingEvaluation
    if view.tokens <= FEATURE_KERNEL_MAX_TOKENS:
        path = _feature(view, hardware)
        run: tuple[tuple[StreamingEvaluation, ...], tuple[int, ...]] = ((fill, path), (1, 1))
        host = 0.0
    else:
        path = sorted_path(view, hardware)
        rest = tuple(k for k in (path.before, path.sums, path.after) if k is not None)
        run = ((fill, path.index, *rest), (1, path.index_count, *(1 for _ in rest)))
        host = _host_s(path, fill, hardware.overhead.kernel_launch_overhead_s)
    latency, traffic, energy = _cost(base, hardware, run, host)
    if isinstance(path, SortedPath) and path.empty_s:  # busy SMs, no bytes: static energy only
        latency += path.empty_s
        energy = EnergyBreakdown.make(
            tensor_j=energy.tensor_j, vector_j=energy.vector_j, memory_j=energy.memory_j,
            static_j=energy.static_j + hardware.power.busy_w * path.empty_s,
        )  # fmt: skip
    evaluation = _evaluation(fill, path, host, latency)
    return streaming_profile(op, base, (latency, traffic, energy), "pytorch", evaluation)


def predict_embedding(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """An embedding on a GPU: its backward pass (module docstring), or the forward gather's
    streaming kernel (:func:`~.streaming_op.predict_streaming`)."""
    if isinstance(op.view, EmbeddingBackwardView):
        return predict_embedding_backward(op, hardware)
    return predict_streaming(op, hardware)
