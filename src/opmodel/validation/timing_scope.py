"""What a measured op time spans, and the event-scope offset ``validate-ops`` fits.

The models predict a kernel's own duration: what a profiler reports per kernel (CUPTI through
``torch.profiler``, Nsight Compute). That is a row's ``kernel`` timing scope. A time taken with
CUDA events recorded around one launch (``opmodel measure``'s ``time``, Triton's ``do_bench``)
also spans the GPU front end's work between the start event and the kernel's first CTA, and
between its last CTA and the end event: the ``event`` scope. That span is a property of the
measurement, not of the kernel, so it is fitted like the GEMM fixed overhead: per hardware, one
offset ``c`` added to every event-timed prediction, by closed-form least squares of relative
errors, ``c = sum((m_i - p_i) / m_i^2) / sum(1 / m_i^2)`` clipped at zero, on a declared training
split: the ``EVENT_TRAINING_PER_KIND`` event-timed rows of each (hardware, op kind) with the
smallest measured time (where the span is the largest share; ties by row order). Every other
row is held out. The split depends on the measurements only, so every model shares it.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping, Sequence

from opmodel.validation.nnls import relative_offset

__all__ = [
    "EVENT_TRAINING_PER_KIND",
    "SCOPES",
    "event_training_rows",
    "fit_event_offsets",
    "timing_scope",
]

SCOPES = ("kernel", "event")
EVENT_TRAINING_PER_KIND = 2
_EVENT_TIMED_SOURCES = frozenset({"opmodel-measure"})  # `time`: CUDA events around one launch


def timing_scope(record: Mapping[str, str | None]) -> str:
    """The scope of a table row's time: ``kernel`` when its ``kernel_time`` is given, else its
    ``timing_scope`` column, else ``event`` for ``opmodel measure``'s tables (source
    ``opmodel-measure``) and ``kernel`` for any other. ValueError for an unknown scope."""
    if (record.get("kernel_time") or "").strip():
        return "kernel"
    given = (record.get("timing_scope") or "").strip()
    if given:
        if given not in SCOPES:
            msg = f"timing_scope must be one of {', '.join(SCOPES)} (got {given!r})"
            raise ValueError(msg)
        return given
    return "event" if (record.get("source") or "").strip() in _EVENT_TIMED_SOURCES else "kernel"


def event_training_rows(
    groups: Sequence[tuple[str, str] | None], measured_s: Sequence[float]
) -> frozenset[int]:
    """Indices of the training rows: per ``(hardware, kind)`` group, the
    ``EVENT_TRAINING_PER_KIND`` smallest measured times (``None`` marks a row that takes no
    part: kernel-timed, or fitted by another calibration)."""
    members: dict[tuple[str, str], list[int]] = defaultdict(list)
    for index, group in enumerate(groups):
        if group is not None:
            members[group].append(index)
    chosen: list[int] = []
    for indices in members.values():
        ranked = sorted(indices, key=lambda i: (measured_s[i], i))
        chosen.extend(ranked[:EVENT_TRAINING_PER_KIND])
    return frozenset(chosen)


def fit_event_offsets(
    hardware: Sequence[str],
    predicted_s: Sequence[float],
    measured_s: Sequence[float],
    training: frozenset[int],
) -> dict[str, float]:
    """Per hardware, the non-negative offset [s] minimising the training rows' squared relative
    errors of ``predicted + offset`` (closed form, module docstring:
    :func:`~opmodel.validation.nnls.relative_offset` in seconds)."""
    members: dict[str, list[int]] = defaultdict(list)
    for i in sorted(training):
        members[hardware[i]].append(i)
    return {
        hw: relative_offset(
            [predicted_s[i] for i in rows], [measured_s[i] for i in rows], [1.0] * len(rows)
        )
        for hw, rows in sorted(members.items())
    }
