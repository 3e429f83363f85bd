"""The streaming kernels of ATen whose launch reads the GPU's SMs: ``reduce_kernel`` for a
reduction (:mod:`~opmodel.models.streaming.aten_reduce`) and ``index_select`` for an
embedding but a ``fused`` one (:mod:`~opmodel.models.streaming.gather`)."""

from __future__ import annotations

from opmodel.core.enums import OpKind
from opmodel.core.op import LocalOp
from opmodel.core.views_reduction import ReductionView
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.streaming.aten_reduce import (
    LAUNCHES,
    REGISTERS,
    ReduceShape,
    aten_reduce_kernel,
    output_vector,
)
from opmodel.models.streaming.counted_reduce import reduce_issue_cycles, reduce_registers
from opmodel.models.streaming.gather import index_select_kernel
from opmodel.models.streaming.structure import StreamKernel

__all__ = ["launch_by_sms", "reduce_issue_cost"]


def launch_by_sms(
    op: LocalOp, rows: int, length: int, element_bytes: int, hardware: HardwareSpec
) -> StreamKernel | None:
    """The kernel of ``op`` (``rows`` x ``length`` elements of ``element_bytes``) when ATen
    sizes its launch by the SMs, else None."""
    sm, view = hardware.compute.sm, op.view
    if sm is None:
        return None
    if isinstance(view, ReductionView):
        # the launch loading v outputs at once (reduce_kernel<512 / v, v>) holds its own count
        per_load = output_vector(view.inner_outputs)  # 1 when the innermost axis is reduced
        counted = reduce_registers(hardware.architecture, view.x.dtype, view.function, per_load)
        shape = ReduceShape(
            rows,
            length,
            element_bytes,
            view.function,
            view.inner_outputs,
            view.reduced_block,
            REGISTERS if counted is None else counted,
        )
        return aten_reduce_kernel(shape, sm)
    if op.kind is OpKind.EMBEDDING and op.attrs.get("implementation") != "fused":
        return index_select_kernel(rows, length, sm.sm_count)
    return None


def reduce_issue_cost(op: LocalOp, kernel: StreamKernel, hardware: HardwareSpec) -> float | None:
    """``I`` of ATen's reduce kernel for a reduction op: its loop's issue cycles per element
    counted from SASS, 0 where uncounted (:func:`~opmodel.models.streaming.counted_reduce.
    reduce_issue_cycles`); ``None`` for any other op or kernel."""
    view = op.view
    if not isinstance(view, ReductionView) or kernel.name not in LAUNCHES:
        return None
    innermost = view.inner_outputs == 1 and view.reduced_block
    per_load = output_vector(view.inner_outputs) if view.reduced_block else 0
    arch, dtype = hardware.architecture, view.x.dtype
    return reduce_issue_cycles(arch, dtype, view.function, innermost, per_load)
