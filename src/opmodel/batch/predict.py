"""Predict many ops at once: :func:`predict_many` and the result columns of a sweep."""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import Any

from opmodel.batch.gc_pause import paused_gc
from opmodel.core.errors import OpModelError, OpValidationError, UnsupportedOpError, located
from opmodel.core.model import OpModel
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.report import summarize

__all__ = [
    "RESULT_COLUMNS",
    "SUMMARY_COLUMNS",
    "predict_many",
    "resolve",
    "result_row",
    "summary_row",
]

RESULT_COLUMNS = (
    "latency_s",
    "energy_j",
    "flops",
    "hbm_bytes",
    "footprint_bytes",
    "engine",
    "implementation",
)
"""Columns a sweep appends to each op row (``hbm_bytes`` is empty when the model does not
represent that level)."""

SUMMARY_COLUMNS = (
    "limiter",
    "sm_clock_hz",
    "achieved_flops_per_s",
    "compute_fraction",
    "hbm_bytes_per_s",
    "hbm_fraction",
    "average_power_w",
    "validated_mape",
    "validated_rows",
)
"""Columns ``opmodel sweep --summary-columns`` appends after :data:`RESULT_COLUMNS`: what
:func:`opmodel.report.summarize` derives from each profile (empty where it gives nothing);
``validated_mape`` and ``validated_rows``: the held-out error measured for the op's kind on
the config (the kernel-level models; 0 rows and an empty MAPE where none was measured)."""


def resolve(
    hardware: HardwareSpec | str | Path, model: OpModel | str
) -> tuple[HardwareSpec, OpModel]:
    """The spec and model that names, paths or objects refer to (one-line errors otherwise)."""
    spec = hardware if isinstance(hardware, HardwareSpec) else load_hardware(hardware)
    if isinstance(model, str):
        return spec, get_model(model)
    if not isinstance(model, OpModel):
        msg = f"predict_many: model must be a model name or an OpModel (got {model!r})"
        raise OpValidationError(msg)
    return spec, model


def predict_many(
    ops: Iterable[LocalOp],
    hardware: HardwareSpec | str | Path,
    model: OpModel | str = "effective_roofline",
) -> list[OpProfile]:
    """Profiles of ``ops`` on ``hardware``, in order.

    ``hardware`` is a spec, a shipped config name or a YAML path; ``model`` a registered name or
    an :class:`~opmodel.core.model.OpModel`. Equal ops (same kind, phase, tensors and attrs, any
    name) are predicted once and share the profile object, so sweeps over repeated layers cost
    one prediction per distinct shape. Runs in this process; ``opmodel sweep`` (or
    :func:`opmodel.batch.run_sweep`) spreads a table over cores or a Ray / Dask cluster.
    """
    if isinstance(ops, str | bytes | Mapping) or not isinstance(ops, Iterable):
        msg = f"predict_many: ops must be an iterable of LocalOp (got {type(ops).__name__})"
        raise OpValidationError(msg)
    spec, op_model = resolve(hardware, model)
    with paused_gc():  # the loop creates no reference cycles (opmodel.batch.gc_pause)
        return _predict_each(ops, spec, op_model)


def _predict_each(ops: Iterable[LocalOp], spec: HardwareSpec, op_model: OpModel) -> list[OpProfile]:
    """:func:`predict_many`'s loop: each distinct op predicted once, in order."""
    seen: dict[tuple[Any, ...], OpProfile] = {}
    profiles: list[OpProfile] = []
    for index, op in enumerate(ops):
        if not isinstance(op, LocalOp):
            msg = f"predict_many: ops[{index}] is not a LocalOp (got {type(op).__name__})"
            raise OpValidationError(msg)
        key = (op.kind, op.phase, op.tensors, op.attrs)
        profile = seen.get(key)
        if profile is None:
            if not op_model.supports(op):
                kinds = ", ".join(sorted(op_model.supported_kinds))
                msg = (
                    f"predict_many: ops[{index}] ('{op.name}'): model '{op_model.name}' does "
                    f"not support {op.kind} (supports: {kinds})"
                )
                raise UnsupportedOpError(msg)
            try:
                profile = seen[key] = op_model.predict(op, spec)
            except OpModelError as exc:
                raise located(f"predict_many: ops[{index}] ('{op.name}')", exc) from None
        profiles.append(profile)
    return profiles


def result_row(profile: OpProfile) -> tuple[object, ...]:
    """The values of :data:`RESULT_COLUMNS` for ``profile``."""
    hbm = profile.traffic.get("hbm")
    return (
        profile.latency_s,
        profile.energy_j,
        profile.flops,
        hbm.total_bytes if hbm is not None else None,
        profile.footprint.total_bytes,
        profile.engine.value,
        profile.implementation,
    )


def summary_row(op: LocalOp, profile: OpProfile, hardware: HardwareSpec) -> tuple[object, ...]:
    """The values of :data:`SUMMARY_COLUMNS` for ``profile``, the prediction of ``op``."""
    s = summarize(op, profile, hardware)
    return (
        s.limiter,
        s.sm_clock_hz,
        s.achieved_flops_per_s,
        s.compute_fraction,
        s.achieved_hbm_bytes_per_s,
        s.hbm_fraction,
        s.average_power_w,
        None if s.validated is None else s.validated.mape,
        None if s.validated is None else s.validated.rows,
    )
