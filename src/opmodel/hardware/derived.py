"""Peaks derived from per-cycle rates: ``peak = units x FLOP per cycle per unit x clock_hz``.

A config may give a dense peak directly (``compute.tensor_flops_per_s``), as a per-unit rate
per clock (``compute.tensor_flops_per_cycle_per_unit``), or both. The loader fills every peak
that only has a rate (:func:`with_derived_peaks`), so a datasheet figure is typed once;
:func:`peak_warnings` reports a typed peak that disagrees with its derivation by more than
:data:`PEAK_TOLERANCE` (``opmodel hardware check`` prints them). Units per engine:

========  =========================================  ==========================
kind      tensor engine                              vector engine
========  =========================================  ==========================
``gpu``   ``sm.sm_count`` (SMs; CUs on AMD)          ``sm.sm_count``
``tpu``   ``mxu.tensor_cores x mxu.mxus_per_core``    ``mxu.tensor_cores``
========  =========================================  ==========================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

from opmodel.core.dtypes import DType
from opmodel.core.errors import ConfigError
from opmodel.core.frozen_dict import FrozenDict
from opmodel.hardware.spec import ComputeSpec, HardwareSpec

__all__ = [
    "PEAK_TOLERANCE",
    "derived_peak",
    "engine_units",
    "peak_warnings",
    "with_derived_peaks",
]

PEAK_TOLERANCE = 0.01
"""Relative difference between a typed and a derived peak above which the check warns (1 %:
datasheets round their TFLOP/s figures to three or four digits)."""

_ENGINES = ("tensor", "vector")


def engine_units(compute: ComputeSpec, engine: str) -> int | None:
    """Units that each deliver ``*_flops_per_cycle_per_unit`` of ``engine`` (None: no
    structure to derive from)."""
    if compute.sm is not None:
        return compute.sm.sm_count
    if compute.mxu is not None:
        mxu = compute.mxu
        return mxu.tensor_cores * (mxu.mxus_per_core if engine == "tensor" else 1)
    return None


def _rates(compute: ComputeSpec, engine: str) -> Mapping[DType, float]:
    if engine == "tensor":
        return compute.tensor_flops_per_cycle_per_unit
    return compute.vector_flops_per_cycle_per_unit


def _peaks(compute: ComputeSpec, engine: str) -> Mapping[DType, float]:
    return compute.tensor_flops_per_s if engine == "tensor" else compute.vector_flops_per_s


def derived_peak(compute: ComputeSpec, engine: str, dtype: DType) -> float | None:
    """``units x rate x clock_hz`` for ``engine`` and ``dtype`` (None without a rate)."""
    rate = _rates(compute, engine).get(dtype)
    units = engine_units(compute, engine)
    if rate is None or units is None:
        return None
    return units * rate * compute.clock_hz


def _filled(compute: ComputeSpec, engine: str) -> Mapping[DType, float]:
    peaks = dict(_peaks(compute, engine))
    for dtype in _rates(compute, engine):
        value = derived_peak(compute, engine, dtype)
        if dtype not in peaks and value is not None:
            peaks[dtype] = value
    return FrozenDict(peaks)


def with_derived_peaks(spec: HardwareSpec) -> HardwareSpec:
    """``spec`` with every peak that only has a per-cycle rate filled in (typed peaks kept)."""
    compute = spec.compute
    tensor, vector = _filled(compute, "tensor"), _filled(compute, "vector")
    if len(tensor) == len(compute.tensor_flops_per_s) and len(vector) == len(
        compute.vector_flops_per_s
    ):
        return spec
    compute = dataclasses.replace(compute, tensor_flops_per_s=tensor, vector_flops_per_s=vector)
    return dataclasses.replace(spec, compute=compute)


def peak_warnings(spec: HardwareSpec) -> list[str]:
    """Typed peaks that differ from ``units x rate x clock`` by more than the tolerance."""
    if not isinstance(spec, HardwareSpec):
        raise ConfigError([f"peak_warnings: expected a HardwareSpec (got {type(spec).__name__})"])
    compute = spec.compute
    warnings: list[str] = []
    for engine in _ENGINES:
        units = engine_units(compute, engine)
        for dtype, typed in _peaks(compute, engine).items():
            derived = derived_peak(compute, engine, dtype)
            if derived is None or abs(typed / derived - 1.0) <= PEAK_TOLERANCE:
                continue
            rate = _rates(compute, engine)[dtype]
            warnings.append(
                f"compute.{engine}_flops_per_s.{dtype.value}: typed {typed:.4g} differs from "
                f"{units} units x {rate:g} FLOP/cycle x {compute.clock_hz:.4g} Hz = "
                f"{derived:.4g} by {(typed / derived - 1.0) * 100:+.1f} %"
            )
    return warnings
