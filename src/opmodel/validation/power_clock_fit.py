"""Fit the power-limited SM clock of an unlocked GPU on measured GEMMs.

A device that is not clock-locked runs dense tensor work below its boost clock once the
board reaches its power limit; ``compute.power_limited_clock_hz`` is the clock it holds for a
fully busy kernel (docs/models/effective_roofline.md, "Power-limited clock"). No datasheet
gives it and it depends on the board's power limit and cooling, so ``validate-gemm-latency``
fits it per hardware on a declared training split of ``large`` rows (compute-bound GEMMs,
where the clock decides the time) and reports every other row held out.

The fit is a search over the clock bins (:data:`~opmodel.hardware.clocking.CLOCK_STEP_HZ`)
from half the config's clock up to the config's clock (which means no throttling), minimising
the sum of squared relative errors of ``effective_roofline`` on the training rows; ties go to
the higher clock. A grid of at most ~70 bins keeps it deterministic and cheap.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

from opmodel.core.dtypes import DType
from opmodel.core.frozen_dict import FrozenDict
from opmodel.core.op import LocalOp
from opmodel.hardware.clocking import CLOCK_STEP_HZ
from opmodel.hardware.spec import HardwareSpec
from opmodel.models import get_model

__all__ = [
    "FIT_MODEL",
    "fit_block_clock_hz",
    "fit_power_limited_clock_hz",
    "with_power_limited_clock",
]

FIT_MODEL = "effective_roofline"  # the model the fit runs (both GEMM models apply the clock)


def with_power_limited_clock(
    spec: HardwareSpec, clock_hz: float, dtype: DType | None = None
) -> HardwareSpec:
    """``spec`` with ``compute.power_limited_clock_hz = clock_hz`` (at most its clock), or with
    that clock for ``dtype``'s tensor work only."""
    if not 0 < clock_hz <= spec.compute.clock_hz:
        msg = (
            f"{spec.name}: power_limited_clock_hz must be in (0, {spec.compute.clock_hz:g}] Hz "
            f"(got {clock_hz!r})"
        )
        raise ValueError(msg)
    if dtype is None:
        compute = dataclasses.replace(spec.compute, power_limited_clock_hz=float(clock_hz))
    else:
        by_dtype = {**spec.compute.power_limited_clock_hz_by_dtype, dtype: float(clock_hz)}
        compute = dataclasses.replace(
            spec.compute, power_limited_clock_hz_by_dtype=FrozenDict(by_dtype)
        )
    return dataclasses.replace(spec, compute=compute)


def fit_power_limited_clock_hz(
    spec: HardwareSpec,
    ops: Sequence[LocalOp],
    measured_s: Sequence[float],
    dtype: DType | None = None,
) -> float:
    """The clock bin that best explains ``measured_s`` for ``ops`` on unlocked ``spec`` (the
    clock of ``dtype``'s tensor work when given, else the general one).

    Returns ``spec.compute.clock_hz`` (no throttling) when that fits best or ``ops`` is empty.
    """
    if len(ops) != len(measured_s):
        msg = f"fit_power_limited_clock_hz: {len(ops)} ops but {len(measured_s)} measurements"
        raise ValueError(msg)
    return fit_block_clock_hz(spec, [(op,) for op in ops], measured_s, dtype)


def fit_block_clock_hz(
    spec: HardwareSpec,
    blocks: Sequence[Sequence[LocalOp]],
    measured_s: Sequence[float],
    dtype: DType | None = None,
) -> float:
    """:func:`fit_power_limited_clock_hz` where each measurement times a sequence of kernels
    run back to back (a block of a model: its predicted time is the sum of theirs)."""
    if len(blocks) != len(measured_s):
        msg = f"fit_block_clock_hz: {len(blocks)} blocks but {len(measured_s)} measurements"
        raise ValueError(msg)
    if any(not m > 0 for m in measured_s):
        raise ValueError("fit_power_limited_clock_hz: measured times must be positive")
    top = spec.compute.clock_hz
    if not blocks:
        return top
    model = get_model(FIT_MODEL)
    lowest = CLOCK_STEP_HZ * math.ceil(0.5 * top / CLOCK_STEP_HZ)
    candidates = [top]
    candidates += [lowest + CLOCK_STEP_HZ * i for i in range(int((top - lowest) // CLOCK_STEP_HZ))]
    best, best_error = top, math.inf
    for clock_hz in sorted(set(candidates), reverse=True):
        trial = with_power_limited_clock(spec, clock_hz, dtype)
        error = sum(
            ((sum(model.predict(op, trial).latency_s for op in block) - m) / m) ** 2
            for block, m in zip(blocks, measured_s, strict=True)
        )
        if error < best_error:
            best, best_error = clock_hz, error
    return best
