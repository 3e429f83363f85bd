"""Latency of non-GEMM ops (norms, softmax, elementwise, ...) against measured op tables.

Data: CSV op tables under ``--data-dir`` (by default ``data/ops/**`` and the ``ops.csv`` of each
``opmodel measure`` run in ``data/measured/*/``) whose rows describe one op (``name, kind,
phase, tensors, attrs``, docs/sweeps.md) and its measurement: ``time`` [ms] (a non-empty
``kernel_time`` replaces it: ``opmodel measure``'s kernel-scope time), ``hardware`` (an
opmodel config), optional ``clock_mhz``, ``source``, ``implementation`` (else the op's
``implementation`` attr), ``label``, ``timing_scope`` (``kernel`` or ``event``; when
absent, ``event`` for ``opmodel measure``'s event times, else ``kernel``) and
``time_truncation_s`` (the step each timed sample was truncated to: half of it is added,
opmodel.validation.measured_values). ``opmodel measure``
writes ``ops.csv`` in this form; ``scripts/convert_op_data.py`` converts the public Vidur and
Liger-Kernel measurements. One thing is fitted here: per GPU, the offset event-timed rows get
for the span CUDA events add around a kernel (opmodel.validation.timing_scope), on its declared
training rows. Those rows and the ones the shipped calibrations were fitted on (instruction
issue, the streaming kernels' start and drain, the warp softmax's loads in flight and the
block softmax's issue cost) are reported
apart as training rows; every other row is held out.
Malformed rows are skipped and counted by reason.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.core.backward import is_backward, kind_label
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.core.op import LocalOp
from opmodel.core.views import CollectiveView, ElementwiseView, RowView
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.shared.start_drain import start_drain_calibration
from opmodel.models.streaming.aten_softmax import aten_softmax_calibration
from opmodel.models.streaming.issue import issue_calibration, issue_key
from opmodel.validation.hbm_split import is_hbm_fraction_training_row
from opmodel.validation.limiter import limiter_of
from opmodel.validation.metrics import ErrorMetrics, error_metrics
from opmodel.validation.op_rows import OpRow, load_op_rows
from opmodel.validation.repeat_spread import spread_groups
from opmodel.validation.timing_scope import (
    event_training_rows,
    fit_event_offsets,
)

__all__ = [
    "OpLatencyResult",
    "OpRow",
    "is_training_row",
    "load_op_rows",
    "validate_op_latency",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class OpLatencyResult:
    """One model's predictions and metrics by group."""

    model: str
    predicted_s: tuple[float, ...]
    limiter: tuple[str, ...]  # per row: what bounded the kernel (the diagnostics' limiter)
    overall: ErrorMetrics
    by_hardware: dict[str, ErrorMetrics]
    by_kind: dict[str, ErrorMetrics]
    by_function: dict[str, ErrorMetrics]  # elementwise rows by function and hardware
    # by source, implementation and op kind: one benchmark's kernel for one op
    by_source: dict[str, ErrorMetrics]
    by_duration: dict[str, ErrorMetrics]
    # held-out rows with a repeat spread, settled and unsettled (repeat_spread.UNSETTLED_SPREAD);
    # empty when no row is unsettled
    by_spread: dict[str, ErrorMetrics] = field(default_factory=dict)
    # rows the instruction-issue calibration was fitted on (opmodel.models.streaming.issue):
    # left out of every group above and summarised here; None when there are none
    training: ErrorMetrics | None = None
    # per hardware, the offset added to event-timed predictions (timing_scope), the rows it
    # was fitted on (left out of every group above) and each row's split
    event_offset_s: dict[str, float] = field(default_factory=dict)
    event_training: ErrorMetrics | None = None
    split: tuple[str, ...] = ()


def _spec(
    cache: dict[tuple[str, float | None], HardwareSpec], row: OpRow, hardware_dir: Path | None
) -> HardwareSpec:
    """The row's config (from ``hardware_dir/<name>.yaml`` when given, else shipped) at its
    measured clock."""
    key = (row.hardware, row.clock_hz)
    spec = cache.get(key)
    if spec is None:
        spec = load_hardware(row.hardware, directory=hardware_dir)
        spec = cache[key] = spec.at_clock(row.clock_hz) if row.clock_hz else spec
    return spec


def _grouped(
    rows: Sequence[OpRow], predicted: Sequence[float], key: Callable[[OpRow], str]
) -> dict[str, ErrorMetrics]:
    groups: dict[str, tuple[list[float], list[float]]] = defaultdict(lambda: ([], []))
    for row, value in zip(rows, predicted, strict=True):
        pred, meas = groups[key(row)]
        pred.append(value)
        meas.append(row.time_s)
    return {name: error_metrics(*groups[name]) for name in sorted(groups)}


def validate_op_latency(
    rows: Sequence[OpRow],
    model_name: str,
    progress: Callable[[int, int], None] | None = None,
    hardware_dir: Path | None = None,
) -> OpLatencyResult:
    """Predict every row with ``model_name`` (each distinct op and config once) and summarise.

    ``hardware_dir``: a folder of ``<config>.yaml`` files that replaces the shipped configs
    (to try a changed config on the same rows); every row's config must be in it. Event-timed
    rows get their hardware's fitted offset (opmodel.validation.timing_scope)."""
    predicted, limiters = _predict_rows(rows, model_name, progress, hardware_dir)
    fitted = [is_training_row(r) for r in rows]
    predicted, offsets, event_fit = _with_event_offsets(rows, predicted, fitted)
    split = tuple(
        "training" if t else "event-offset training" if i in event_fit else "held-out"
        for i, t in enumerate(fitted)
    )
    return _result(model_name, rows, (predicted, limiters), split, offsets)


def _predict_rows(
    rows: Sequence[OpRow],
    model_name: str,
    progress: Callable[[int, int], None] | None,
    hardware_dir: Path | None,
) -> tuple[list[float], list[str]]:
    """Each row's predicted kernel time and limiter (each distinct op and config once)."""
    model = get_model(model_name)
    specs: dict[tuple[str, float | None], HardwareSpec] = {}
    memo: dict[tuple[LocalOp, str, float | None], tuple[float, str]] = {}
    predicted: list[float] = []
    limiters: list[str] = []
    for index, row in enumerate(rows):
        key = (row.op, row.hardware, row.clock_hz)
        value = memo.get(key)
        if value is None:
            try:
                profile = model.predict(row.op, _spec(specs, row, hardware_dir))
            except OpModelError as exc:
                raise ConfigError([f"{row.label or row.op.name}: {exc}"]) from None
            value = memo[key] = (profile.latency_s, limiter_of(profile.diagnostics))
        predicted.append(value[0])
        limiters.append(value[1])
        if progress is not None:
            progress(index + 1, len(rows))
    return predicted, limiters


def _result(
    model_name: str,
    rows: Sequence[OpRow],
    evaluated: tuple[Sequence[float], Sequence[str]],
    split: tuple[str, ...],
    offsets: dict[str, float],
) -> OpLatencyResult:
    """Metrics of the held-out rows by group, and of each training split apart, from each
    row's ``(predicted seconds, limiter)``."""
    predicted, limiters = evaluated
    held_at = [i for i, s in enumerate(split) if s == "held-out"]
    held, held_s = [rows[i] for i in held_at], [predicted[i] for i in held_at]

    def metrics_of(name: str) -> ErrorMetrics | None:
        chosen = [i for i, s in enumerate(split) if s == name]
        if not chosen:
            return None
        return error_metrics([predicted[i] for i in chosen], [rows[i].time_s for i in chosen])

    return OpLatencyResult(
        model=model_name,
        predicted_s=tuple(predicted),
        limiter=tuple(limiters),
        overall=error_metrics(held_s, [r.time_s for r in held]),
        by_hardware=_grouped(held, held_s, lambda r: r.hardware),
        by_kind=_grouped(held, held_s, lambda r: f"{kind_label(r.op)}:{r.hardware}"),
        by_function=_by_function(held, held_s),
        by_source=_grouped(
            held, held_s, lambda r: f"{r.source}:{r.implementation}:{kind_label(r.op)}"
        ),
        by_duration=_grouped(held, held_s, _duration_class),
        by_spread=_by_spread(held, held_s),
        training=metrics_of("training"),
        event_offset_s=offsets,
        event_training=metrics_of("event-offset training"),
        split=split,
    )


def _by_function(held: Sequence[OpRow], held_s: Sequence[float]) -> dict[str, ErrorMetrics]:
    """The held-out elementwise rows by function and collectives by operation and ranks."""
    chosen = [
        i for i, r in enumerate(held) if isinstance(r.op.view, ElementwiseView | CollectiveView)
    ]
    return _grouped([held[i] for i in chosen], [held_s[i] for i in chosen], _function_key)


def _by_spread(held: Sequence[OpRow], held_s: Sequence[float]) -> dict[str, ErrorMetrics]:
    """The held-out rows that carry a repeat spread, settled and unsettled
    (:func:`~opmodel.validation.repeat_spread.spread_groups`)."""
    groups = spread_groups(held, range(len(held)))
    return {
        name: error_metrics([held_s[i] for i in chosen], [held[i].time_s for i in chosen])
        for name, chosen in groups.items()
    }


def _with_event_offsets(
    rows: Sequence[OpRow], predicted: Sequence[float], fitted: Sequence[bool]
) -> tuple[list[float], dict[str, float], frozenset[int]]:
    """Event-timed predictions plus their hardware's fitted offset, the offsets, and the rows
    they were fitted on (opmodel.validation.timing_scope)."""
    groups = [  # a backward pass's event time also holds autograd's host work: not fitted on
        (r.hardware, r.op.kind.value)
        if r.timing_scope == "event" and not t and not is_backward(r.op)
        else None
        for r, t in zip(rows, fitted, strict=True)
    ]
    measured = [r.time_s for r in rows]
    training = event_training_rows(groups, measured)
    hardware = [r.hardware for r in rows]
    offsets = fit_event_offsets(hardware, predicted, measured, training)
    shifted = [
        p + offsets.get(r.hardware, 0.0) if r.timing_scope == "event" else p
        for r, p in zip(rows, predicted, strict=True)
    ]
    return shifted, offsets, training


def is_training_row(row: OpRow) -> bool:
    """True for a row a calibration was fitted on (reported apart): the instruction-issue
    calibration's, the streaming kernels' start and drain's, a sustained HBM fraction's
    (opmodel.validation.hbm_split), or that of ATen's softmax kernels."""
    if row.clock_hz is None:
        key = (row.hardware, row.source, row.implementation, issue_key(row.op))
        if issue_calibration().is_training_row(*key):
            return True
        if start_drain_calibration().is_training_row(*key):
            return True
    if is_hbm_fraction_training_row(row):
        return True
    view = row.op.view
    return (
        row.op.kind is OpKind.SOFTMAX
        and row.implementation == "pytorch"
        and isinstance(view, RowView)
        and aten_softmax_calibration().is_training_row(
            row.hardware, row.source, view.rows, view.row_length, max(1, view.x.dtype.bits // 8)
        )
    )


def _function_key(row: OpRow) -> str:
    """``elementwise/<function>:<hardware>`` of an elementwise row,
    ``collective/<operation>/ranks<n>:<hardware>`` of a collective's."""
    view = row.op.view
    if isinstance(view, CollectiveView):
        return f"collective/{view.operation}/ranks{view.ranks}:{row.hardware}"
    assert isinstance(view, ElementwiseView)
    return f"elementwise/{view.function or 'unspecified'}:{row.hardware}"


def _duration_class(row: OpRow) -> str:
    """Measured-time class: kernels under 10 us are where launch and start costs dominate."""
    if row.time_s < 10e-6:
        return "measured < 10 us"
    return "measured 10-100 us" if row.time_s < 100e-6 else "measured >= 100 us"
