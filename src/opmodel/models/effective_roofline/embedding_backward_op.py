"""An embedding's backward pass on GPUs as the kernels PyTorch's ``embedding_dense_backward``
launches (:mod:`opmodel.models.streaming.embedding_backward`), each timed by
:func:`~opmodel.models.streaming.evaluate_streaming` with its fixed overhead, the times added.

Over 3,072 tokens: the gradient's zero fill, ``INDEX_KERNELS`` small kernels over the indices,
``compute_grad_weight`` (dy's rows into fp32 partial sums) and ``sum_and_scatter`` (the partial
sums into the gradient's rows; it reads the partial sums the kernel before it wrote, warm in
L2 as far as they survive). The index kernels run between ``HOST_SYNCS`` reads of a count by
the host, so the host launches each of them after the GPU has drained: each takes at least the
config's ``kernel_launch_overhead_s`` (the host's time per launch), and each sync adds one
more. Up to 3,072 tokens: the zero fill and ``embedding_backward_feature_kernel``. Only ATen's
kernels are modelled (``implementation: pytorch``, the default). Energy as
:mod:`.streaming_op`: the roofline's arithmetic energy (one add per element of dy), DRAM and
L2 bytes x J/byte, static power x the summed latency. docs/models/streaming.md, "Embedding
backward".
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
from opmodel.models.effective_roofline.streaming_cost import streaming_cost, streaming_profile
from opmodel.models.effective_roofline.streaming_op import predict_streaming
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.embedding_backward import (
    FEATURE_KERNEL_MAX_TOKENS,
    HOST_SYNCS,
    INDEX_KERNELS,
    feature_kernel,
    fill_kernel,
    index_kernel,
    partial_sums_kernel,
    scatter_kernel,
    segments,
)
from opmodel.models.streaming.evaluate import StreamingEvaluation

__all__ = [
    "EmbeddingBackwardEvaluation",
    "predict_embedding",
    "predict_embedding_backward",
    "zero_fill",
]

_ACC_BYTES = 4  # the partial sums are fp32 (acc_type) whatever dy's dtype


@value_type
class EmbeddingBackwardEvaluation(FastValue):
    """The kernels of an embedding's backward pass: the gradient's zero ``fill``; over 3,072
    tokens one of the ``index_kernels`` (each of ``INDEX_KERNELS``), ``partial_sums``
    (``compute_grad_weight``) and ``scatter`` (``sum_and_scatter``), else ``feature``
    (``embedding_backward_feature_kernel``); the segments counted (0 on the feature kernel's
    path, which counts none); ``host_s``, the time the
    GPU waits for the host (the syncs and the host-paced index kernels); the summed latency."""

    fill: StreamingEvaluation
    index_kernels: StreamingEvaluation | None
    partial_sums: StreamingEvaluation | None
    scatter: StreamingEvaluation | None
    feature: StreamingEvaluation | None
    distinct_rows: int
    partial_segments: int
    host_s: float
    latency_s: float

    @property
    def limiter(self) -> str:
        """The limiter of the kernel that takes longest."""
        parts = (self.fill, self.partial_sums, self.scatter, self.feature)
        longest = max((p for p in parts if p is not None), key=lambda e: e.latency_s)
        return longest.limiter


def zero_fill(
    elements: int, dtype: DType, hardware: HardwareSpec, dirty_bytes: int = 0
) -> StreamingEvaluation:
    """ATen's fill of ``elements`` elements of ``dtype`` (``at::zeros``, ``zero_``): a
    stream of stores."""
    work = StreamWork(
        read_bytes=0,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=nbytes_of(elements, dtype),
        flops=0,
        vector_flops_per_s=0.0,
        dirty_bytes=dirty_bytes,
    )
    return evaluate_streaming(fill_kernel(elements), hardware, work)


def _check(op: LocalOp) -> EmbeddingBackwardView:
    view = op.view
    assert isinstance(view, EmbeddingBackwardView)
    implementation = op.attrs.get("implementation", "pytorch")
    if implementation != "pytorch":
        raise OpValidationError(
            f"op '{op.name}' (embedding): its backward pass is modelled for implementation "
            f"pytorch only (ATen's embedding_dense_backward; got {implementation})"
        )
    return view


def _sorted_path(
    view: EmbeddingBackwardView, hardware: HardwareSpec
) -> tuple[StreamingEvaluation, StreamingEvaluation, StreamingEvaluation, int, int]:
    """(one index kernel, compute_grad_weight, sum_and_scatter, distinct rows, partial
    segments) of the sorting path."""
    n, hidden, e = view.tokens, view.hidden, view.dy.dtype
    seg = segments(n, view.vocab, view.distinct_indices)
    fp32 = hardware.compute.vector_peak(DType.FP32) or 0.0
    index_bytes = view.indices.nbytes
    index = StreamWork(  # keys and positions, read and written
        read_bytes=2 * index_bytes, shared_read_bytes=0, reread_bytes=0,
        write_bytes=2 * index_bytes, flops=0, vector_flops_per_s=0.0,
    )  # fmt: skip
    partial_bytes = seg.partial * hidden * _ACC_BYTES
    sums = StreamWork(
        read_bytes=view.dy.nbytes + index_bytes,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=partial_bytes,
        flops=n * hidden,
        vector_flops_per_s=fp32,
    )
    scatter = StreamWork(
        read_bytes=partial_bytes,
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=nbytes_of(seg.distinct * hidden, e),
        flops=seg.partial * hidden,
        vector_flops_per_s=fp32,
        warm_read_bytes=partial_bytes,  # compute_grad_weight just wrote them
        producer_bytes=sums.read_bytes + partial_bytes,
    )
    return (
        evaluate_streaming(index_kernel(n), hardware, index),
        evaluate_streaming(partial_sums_kernel(n, hidden, seg.partial), hardware, sums),
        evaluate_streaming(scatter_kernel(hidden, seg.distinct, seg.partial), hardware, scatter),
        seg.distinct,
        seg.partial,
    )


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
    return evaluate_streaming(feature_kernel(view.tokens, view.hidden), hardware, work)


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


def predict_embedding_backward(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of an embedding's backward pass on a GPU (module docstring), at the
    device's boost clock as the other streaming kernels."""
    view = _check(op)
    hardware = boosted(hardware)
    base = roofline_setup(op, hardware)
    dirty = int_attr(op.attrs, "l2_dirty_bytes")
    fill = zero_fill(view.vocab * view.hidden, view.dw.dtype, hardware, dirty)
    if view.tokens <= FEATURE_KERNEL_MAX_TOKENS:
        feature = _feature(view, hardware)
        kernels: tuple[StreamingEvaluation, ...] = (fill, feature)
        counts: tuple[int, ...] = (1, 1)
        parts: tuple[StreamingEvaluation | None, ...] = (None, None, None, feature)
        distinct, partial, host = 0, 0, 0.0
    else:
        index, sums, scatter, distinct, partial = _sorted_path(view, hardware)
        launch = hardware.overhead.kernel_launch_overhead_s
        # each index kernel waits for its launch; each sync for the host's next launch
        host = INDEX_KERNELS * max(0.0, launch - index.latency_s) + HOST_SYNCS * launch
        kernels, counts = (fill, index, sums, scatter), (1, INDEX_KERNELS, 1, 1)
        parts = (index, sums, scatter, None)
    latency, traffic, energy = _cost(base, hardware, (kernels, counts), host)
    evaluation = EmbeddingBackwardEvaluation(
        fill=fill,
        index_kernels=parts[0],
        partial_sums=parts[1],
        scatter=parts[2],
        feature=parts[3],
        distinct_rows=distinct,
        partial_segments=partial,
        host_s=host,
        latency_s=latency,
    )
    return streaming_profile(op, base, (latency, traffic, energy), "pytorch", evaluation)


def predict_embedding(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """An embedding on a GPU: its backward pass (module docstring), or the forward gather's
    streaming kernel (:func:`~.streaming_op.predict_streaming`)."""
    if isinstance(op.view, EmbeddingBackwardView):
        return predict_embedding_backward(op, hardware)
    return predict_streaming(op, hardware)
