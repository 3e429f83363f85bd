"""Attention prefill, decode and backward on GPUs with the FlashAttention machinery.

The roofline's setup supplies the op's useful FLOPs and the softmax's vector energy;
:mod:`opmodel.models.attention` supplies the kernel, its latency and traffic per level.
Energy = arithmetic energy (the kernel's issued MMA FLOPs at the tensor J/FLOP, the softmax at
the roofline's vector energy) + DRAM and L2 bytes x J/byte + static power x latency. Ops whose
dtype has no tensor throughput keep the roofline estimate. Under a power-limited clock the
kernel runs at the clock its tensor activity allows
(:func:`~opmodel.hardware.clocking.power_limited_clock_hz`), as GEMMs do.
"""

from __future__ import annotations

from opmodel.core.enums import Engine, OpKind
from opmodel.core.errors import InvalidKernelError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.core.profile import EnergyBreakdown, LevelTraffic, OpProfile
from opmodel.core.views_matmul import AttentionView
from opmodel.formulas.energy import event_energy_j
from opmodel.hardware.clocking import throttled
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.attention import backward_kernel, evaluate_attention, flash_kernel
from opmodel.models.attention.kernels import FlashKernel, kernel_choice_problem
from opmodel.models.shared.level_energy import level_energy_j
from opmodel.models.shared.roofline_estimate import roofline_setup

__all__ = ["predict_attention", "runs_flash_attention"]


def runs_flash_attention(op: LocalOp, hardware: HardwareSpec) -> bool:
    """True on a GPU whose tensor engine runs the op's compute dtype."""
    view = op.view
    return (
        hardware.compute.sm is not None
        and isinstance(view, AttentionView)
        and hardware.compute.tensor_peak(view.compute_dtype) is not None
    )


def _kernel(op: LocalOp, view: AttentionView, hardware: HardwareSpec) -> FlashKernel:
    """The kernel that runs ``op`` on ``hardware``; InvalidKernelError, one line, when attr
    ``attention_kernel`` names one the GPU cannot run."""
    problem = kernel_choice_problem(hardware, view)
    if problem is not None:
        raise InvalidKernelError(
            f"op '{op.name}' ({op.kind.value}): attrs.attention_kernel: {problem}"
        )
    if view.backward:
        return backward_kernel(hardware, view)
    return flash_kernel(hardware, view, decode=op.kind is OpKind.ATTENTION_DECODE)


def predict_attention(op: LocalOp, hardware: HardwareSpec) -> OpProfile:
    """The FlashAttention profile of an attention op on a GPU."""
    view = op.view
    assert isinstance(view, AttentionView)
    kernel = _kernel(op, view, hardware)
    e = evaluate_attention(kernel, view, hardware)
    slow = throttled(hardware, view.compute_dtype, e.issued_mma_flops, e.latency_s)
    if slow is not None:  # the same kernel at the clock its tensor activity allows
        hardware = slow
        e = evaluate_attention(kernel, view, hardware)
    base = roofline_setup(op, hardware)
    traffic = FrozenDict(
        {
            # the op's writes, and another kernel's dirty lines it writes back now
            "hbm": LevelTraffic(
                read_bytes=e.dram_read_bytes,
                write_bytes=e.dram_write_bytes + e.dirty_write_back_bytes,
            ),
            "l2": LevelTraffic(read_bytes=e.l2_read_bytes, write_bytes=e.dram_write_bytes),
        }
    )
    tensor_j = hardware.compute.energy_per_flop(tensor=True, dtype=view.compute_dtype)
    return OpProfile.make(
        latency_s=e.latency_s,
        flops=base.tensor_flops + base.vector_flops,
        engine=Engine.TENSOR,
        footprint=op.footprint,
        traffic=traffic,
        energy=EnergyBreakdown.make(
            tensor_j=e.issued_mma_flops * tensor_j,
            vector_j=event_energy_j(base.vector_flops, base.vector_j_per_flop),
            memory_j=level_energy_j(traffic, hardware),
            static_j=hardware.power.busy_w * e.latency_s,
        ),
        implementation=f"effective_roofline/{kernel.name}/{kernel.instruction.value}",
        diagnostics=e,
    )
