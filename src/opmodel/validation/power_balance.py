"""The power-limited SM clock that a config's own energy model implies.

An unlocked board holds its average power at ``power.tdp_w``: when a kernel would draw more at
the clock it asks for, GPU Boost lowers the clock (and with it the core voltage) until it does
not. ``compute.power_limited_clock_hz`` is the clock a fully busy tensor kernel settles at
(docs/models/effective_roofline.md, "Power-limited clock"). Where no measurement gives it, the
config's energy model can: predict a large bf16 GEMM on the device locked at each clock bin
(:meth:`~opmodel.hardware.HardwareSpec.at_clock` carries the energy terms there with the core
voltage table and takes the idle power from the idle table) and take the highest bin at which
its average power ``energy_j / latency_s`` is at most the TDP. That GEMM keeps the tensor cores
busy a fraction ``u`` of the time, and the clock law ``f = f_pl u^(-1/3)`` gives it ``f`` at
``f_pl``, so the value returned is ``f u^(1/3)``: with it, the law puts the GEMM back on the
bin where its power meets the TDP.

The reference GEMM is the contract's example, ``[4096, 8192] x [8192, 32768]`` in bf16
(2.2 TFLOP): large enough that waves, edges and start-up do not decide its time. The answer is
only as good as the energy terms: it is meant for configs whose terms were measured or
calibrated and carried to other clocks by a measured voltage table.
"""

from __future__ import annotations

import math

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware.clocking import CLOCK_STEP_HZ, tensor_activity
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model

__all__ = ["REFERENCE_GEMM", "balance_clock_hz", "power_at_clock_w"]

REFERENCE_GEMM = LocalOp(
    name="reference_gemm",
    kind=OpKind.GEMM,
    phase=Phase.TRAIN_FWD,
    tensors=(
        TensorSpec(TensorRole.INPUT, (4096, 8192), DType.BF16),
        TensorSpec(TensorRole.WEIGHT, (8192, 32768), DType.BF16),
        TensorSpec(TensorRole.OUTPUT, (4096, 32768), DType.BF16),
    ),
)
_MODEL = "effective_roofline"


def _at_clock(spec: HardwareSpec, clock_hz: float, op: LocalOp) -> tuple[float, float]:
    """``op``'s average power and bf16 tensor activity on ``spec`` locked at ``clock_hz``."""
    locked = spec.at_clock(clock_hz)
    profile = get_model(_MODEL).predict(op, locked)
    activity = tensor_activity(locked, DType.BF16, profile.flops, profile.latency_s)
    return profile.energy_j / profile.latency_s, activity


def power_at_clock_w(spec: HardwareSpec, clock_hz: float, op: LocalOp = REFERENCE_GEMM) -> float:
    """Average power of ``op`` predicted on ``spec`` locked at ``clock_hz``."""
    return _at_clock(spec, clock_hz, op)[0]


def balance_clock_hz(spec: HardwareSpec, op: LocalOp = REFERENCE_GEMM) -> float | None:
    """``f_pl`` as the module docstring derives it from ``spec``'s energy model, or None when
    ``op`` stays within the TDP at the config's clock (no power limit to model)."""
    if not isinstance(spec, HardwareSpec) or not isinstance(op, LocalOp):
        msg = f"balance_clock_hz: expected a HardwareSpec and a LocalOp (got {type(spec).__name__})"
        raise TypeError(msg)
    if spec.compute.tensor_peak(DType.BF16) is None:
        msg = f"{spec.name}: balance_clock_hz needs a bf16 tensor peak"
        raise ValueError(msg)
    top, tdp = spec.compute.clock_hz, spec.power.tdp_w
    if power_at_clock_w(spec, top, op) <= tdp:
        return None
    lowest = CLOCK_STEP_HZ * math.ceil(0.3 * top / CLOCK_STEP_HZ)
    clock = CLOCK_STEP_HZ * math.floor(top / CLOCK_STEP_HZ)
    power, activity = _at_clock(spec, clock, op)
    while clock > lowest and power > tdp:
        clock -= CLOCK_STEP_HZ
        power, activity = _at_clock(spec, clock, op)
    return float(clock * activity ** (1.0 / 3.0))
