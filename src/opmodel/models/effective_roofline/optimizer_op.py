"""An optimizer step on GPUs as the multi-tensor-apply kernels its implementation launches.

Each pass of :func:`~opmodel.formulas.optimizer.optimizer_passes` (one for a fused step, a
chain of ``torch._foreach_*`` kernels for a foreach one) runs as
:func:`~opmodel.formulas.optimizer.multi_tensor_launches` launches; each launch is a streaming
kernel of 512-thread CTAs, one 64 Ki-element chunk each, walked in serial iterations of 4
elements per thread (ATen's MultiTensorApply.cuh), timed by
:func:`~opmodel.models.streaming.evaluate_streaming` with its waves, occupancy, latency chain
and fixed overhead, and the launches' times are added. At the device's boost clock, as the
other streaming kernels. Registers per thread: counted per pass and architecture from PyTorch
2.14.1's cubins (:mod:`~opmodel.models.streaming.multi_tensor`: fused Adam(W) 64, fused SGD
39-62, the foreach kernels 27-40). Energy: the roofline's arithmetic energy, DRAM and L2
bytes x J/byte, static power x the summed latency. docs/models/streaming.md, "Optimizer step".
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opmodel.core.dtypes import nbytes_of
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.core.values import FastValue, value_type
from opmodel.core.views import OptimizerView
from opmodel.formulas.optimizer import (
    MTA_ILP,
    MTA_THREADS,
    OptimizerPass,
    multi_tensor_chunks,
    multi_tensor_launches,
    optimizer_passes,
)
from opmodel.hardware.clocking import boosted
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.effective_roofline.streaming_cost import streaming_cost, streaming_profile
from opmodel.models.shared.roofline_estimate import RooflineSetup, roofline_setup
from opmodel.models.streaming import StreamWork, evaluate_streaming
from opmodel.models.streaming.evaluate import StreamingEvaluation
from opmodel.models.streaming.multi_tensor import mta_registers
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["OptimizerEvaluation", "PassEvaluation", "predict_optimizer"]


@value_type
class PassEvaluation(FastValue):
    """One pass: its launches (those of ``ctas`` CTAs and those of one more), the slower
    launch's evaluation, and the pass's summed latency."""

    name: str
    launches: int
    ctas: int  # CTAs of the smaller launches (the others hold one more)
    larger_launches: int
    largest: StreamingEvaluation
    latency_s: float


@value_type
class OptimizerEvaluation(FastValue):
    """The passes of an optimizer step, in order, and their summed latency; ``kernel`` and
    ``limiter`` are those of the pass that takes longest."""

    algorithm: str
    implementation: str
    elements: int
    tensors: int
    launches: int  # of every pass together
    kernel: str
    limiter: str
    passes: tuple[PassEvaluation, ...]
    latency_s: float


def _bytes_per_letter(view: OptimizerView) -> dict[str, int]:
    """Bytes of one element of each tensor, by formulas.optimizer's letters."""
    params, states = view.params.dtype, view.states
    dtypes = {
        "p": params,
        "g": view.grads.dtype,
        "m": states[0].dtype if states else params,
        "v": states[-1].dtype if states else params,
        "d": states[-1].dtype if states else params,
    }
    return {letter: nbytes_of(1, dtype) for letter, dtype in dtypes.items()}


@dataclass(frozen=True, slots=True)
class _Context:
    """What every launch of one step shares: the device, the roofline's rates, the chunk
    geometry, the bytes per element of each tensor, and the launches evaluated so far (the
    foreach chain's passes that move the same bytes in the same launches, ``mul_`` of the
    parameters and of a moment, are evaluated once)."""

    hardware: HardwareSpec
    base: RooflineSetup
    chunk: int  # elements of a full chunk: the longest CTA's
    chunks: int
    sizes: dict[str, int]
    evaluated: dict[tuple[StreamKernel, StreamWork], StreamingEvaluation]


def _launch(
    view: OptimizerView, step: OptimizerPass, ctas: int, context: _Context
) -> StreamingEvaluation:
    """One launch of ``ctas`` CTAs of ``step``'s kernel."""
    chunk, sizes = context.chunk, context.sizes
    kernel = StreamKernel(
        implementation="multi_tensor_apply",
        ctas=ctas,
        threads_per_cta=MTA_THREADS,
        registers_per_thread=mta_registers(step.name, step.depth, context.hardware.architecture),
        elements_per_cta=chunk,
        serial_loads=math.ceil(chunk / (MTA_THREADS * MTA_ILP)),
        global_passes=1,
        reductions=0,
        name="multi_tensor_apply_kernel",
    )
    elements = ctas * view.elements / context.chunks  # the launch's share of the elements
    work = StreamWork(
        read_bytes=math.ceil(elements * sum(sizes[letter] for letter in step.reads)),
        shared_read_bytes=0,
        reread_bytes=0,
        write_bytes=math.ceil(elements * sum(sizes[letter] for letter in step.writes)),
        flops=math.ceil(elements * step.flops),
        vector_flops_per_s=context.base.vector_flops_per_s,
        sfu_ops=math.ceil(elements * step.sfu),
    )
    found = context.evaluated.get((kernel, work))
    if found is None:
        found = evaluate_streaming(kernel, context.hardware, work)
        context.evaluated[kernel, work] = found
    return found


def _pass(
    view: OptimizerView, step: OptimizerPass, context: _Context
) -> tuple[PassEvaluation, list[tuple[StreamingEvaluation, int]]]:
    (smaller, ctas), (larger, more) = multi_tensor_launches(
        view.elements, view.tensors, step, view.max_blocks_per_launch
    )
    runs = [(_launch(view, step, ctas, context), smaller)] if smaller else []
    if larger:
        runs.append((_launch(view, step, more, context), larger))
    latency = sum(e.latency_s * n for e, n in runs)
    evaluation = PassEvaluation(
        name=step.name,
        launches=smaller + larger,
        ctas=ctas,
        larger_launches=larger,
        largest=runs[-1][0],
        latency_s=latency,
    )
    return evaluation, runs


def predict_optimizer(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The profile of an optimizer step on a GPU (module docstring)."""
    hardware = boosted(hardware)
    view = op.view
    assert isinstance(view, OptimizerView)
    base = roofline_setup(op, hardware)
    passes: list[PassEvaluation] = []
    runs: list[tuple[StreamingEvaluation, int]] = []
    chunk, chunks = multi_tensor_chunks(view.elements, view.tensors)
    context = _Context(hardware, base, chunk, chunks, _bytes_per_letter(view), {})
    for step in optimizer_passes(view.algorithm, view.implementation):
        evaluation, launched = _pass(view, step, context)
        passes.append(evaluation)
        runs += launched
    kernels, counts = [e for e, _ in runs], [n for _, n in runs]
    written = sum(e.dram_write_bytes * n for e, n in runs)
    traffic, energy = streaming_cost(base, hardware, kernels, math.ceil(written), counts)
    latency = sum(p.latency_s for p in passes)
    longest = max(passes, key=lambda p: p.latency_s)
    diagnostics = OptimizerEvaluation(
        algorithm=view.algorithm,
        implementation=view.implementation,
        elements=view.elements,
        tensors=view.tensors,
        launches=sum(p.launches for p in passes),
        kernel=f"multi_tensor_apply_kernel ({longest.name}), {longest.launches} launches",
        limiter=f"{longest.name}: {longest.largest.limiter}",
        passes=tuple(passes),
        latency_s=latency,
    )
    implementation = f"multi_tensor_apply/{view.implementation}"
    return streaming_profile(op, base, (latency, traffic, energy), implementation, diagnostics)
