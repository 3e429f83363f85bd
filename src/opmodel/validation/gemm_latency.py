"""``validate-gemm-latency``: predicted versus measured GEMM latency, with one fitted constant.

Per model and hardware the fixed device overhead (cycles) is fitted, by non-negative least
squares on relative errors over a deterministic training split of ``small`` and
``vector_like`` rows. Opt-in (``calibrate_power_clock``, CLI ``--fit-power-clock``): per
hardware whose rows were measured unlocked (no ``clock_mhz``), that clock is fitted first on a
deterministic split of ``large`` rows (:mod:`opmodel.validation.power_clock_fit`) and applied to
every unlocked row of that hardware, in place of a config's sourced ``power_limited_clock_hz``;
those rows are then held out too. Every other usable row is held out and reported overall, by
hardware and by size class. Rows whose kernel cannot run, or whose hardware has no
config, are skipped and counted by reason. Where rows carry the fastest of their timed repeats
(``time_min``), those whose median is more than
:data:`~opmodel.validation.repeat_spread.UNSETTLED_SPREAD` times it are reported
apart as well (``by_spread``): a measurement that did not settle, kept in every other figure.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from opmodel.core.errors import ConfigError, OpModelError
from opmodel.models import get_model
from opmodel.models.gemm.overhead import overhead_calibration
from opmodel.validation.clock_split import clock_training_rows
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.gemm_groups import held_groups
from opmodel.validation.gemm_latency_hardware import RowHardware, fit_power_clocks
from opmodel.validation.gemm_per_row import RunValues, clock_and_limiter, per_row_records
from opmodel.validation.gemm_split import (
    SizeClass,
    fit_overhead_cycles,
    row_key,
    row_op,
    size_class,
    training_rows,
)
from opmodel.validation.metrics import ErrorMetrics, error_metrics
from opmodel.validation.repeat_spread import spread_groups

__all__ = [
    "LatencyReport",
    "ModelResult",
    "SizeClass",
    "ValidationOptions",
    "fit_overhead_cycles",
    "row_op",
    "size_class",
    "validate_gemm_latency",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class ModelResult:
    """One model's fitted overheads and held-out errors."""

    model: str
    overhead_cycles: dict[str, float]
    training_rows: dict[str, int]
    overall: ErrorMetrics
    by_hardware: dict[str, ErrorMetrics]
    by_class: dict[str, ErrorMetrics]
    by_source: dict[str, ErrorMetrics]
    energy: ErrorMetrics | None  # held-out rows that carry a measured energy
    energy_by_hardware: dict[str, ErrorMetrics] = field(default_factory=dict)
    energy_by_class: dict[str, ErrorMetrics] = field(default_factory=dict)
    # held-out rows with a repeat spread, settled and unsettled (repeat_spread.UNSETTLED_SPREAD);
    # empty unless some are unsettled
    by_spread: dict[str, ErrorMetrics] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyReport:
    """Everything ``validate-gemm-latency`` prints."""

    rows_used: int
    skipped: dict[str, int]
    models: list[ModelResult]
    per_row: list[dict[str, object]]
    power_limited_clock_hz: dict[str, float]  # fitted per hardware ("name:burst": burst rows)
    power_clock_training_rows: dict[str, int]
    # held out everywhere: the rows a shipped power-limited clock was fitted on (clock_split)
    shipped_clock_training_rows: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class ValidationOptions:
    """Knobs of :func:`validate_gemm_latency`."""

    calibrate: bool = True
    calibrate_power_clock: bool = False  # opt-in: the protocol fits only the overhead
    training_per_class: int = 8
    hardware_dir: Path | None = None
    row_details: bool = False  # per-row bottlenecks in ``per_row`` (for --output-csv)
    progress: Callable[[int, int], None] = lambda done, total: None


def validate_gemm_latency(
    rows: Sequence[GemmRow], model_names: Sequence[str], *, options: ValidationOptions
) -> LatencyReport:
    """Predict every row with every model, fit overheads on the training split, report."""
    # fitting: no overhead at all (RowHardware's zeroed configs set the GEMM models' own value
    # to 0, which wins over their shipped calibration)
    hardware = RowHardware(options.hardware_dir, zero_overhead=options.calibrate)
    power_training = (
        fit_power_clocks(rows, hardware, options.training_per_class)
        if options.calibrate_power_clock
        else {}
    )
    run = _predict_rows(rows, model_names, hardware, options)
    clocks, shipped_clock = run.clock_hz, clock_training_rows(rows)
    training, fitted = _fitted_rows(rows, set(clocks), options, power_training | shipped_clock)
    results = [
        _evaluate(
            name,
            rows,
            _Predictions(run.latency_s[name], run.energy_j[name], clocks, run.static_w),
            training,
            fitted,
        )
        for name in model_names
    ]
    held = sorted(set(clocks) - training - fitted)
    return LatencyReport(
        rows_used=len(held),
        skipped=dict(run.skipped),
        models=results,
        per_row=per_row_records(
            rows,
            held,
            {r.model: r.overhead_cycles for r in results},
            RunValues(run.latency_s, run.energy_j, run.clock_hz, run.static_w),
            run.details if options.row_details else None,
        ),
        power_limited_clock_hz=dict(hardware.power_clock),
        power_clock_training_rows={hw: len(v) for hw, v in power_training.items()},
        shipped_clock_training_rows={hw: len(v) for hw, v in shipped_clock.items()},
    )


def _fitted_rows(
    rows: Sequence[GemmRow],
    usable: set[int],
    options: ValidationOptions,
    power_training: dict[str, list[int]],
) -> tuple[set[int], set[int]]:
    """The rows the overhead is fitted on here (the training split; none as shipped) and the
    other rows fitted on, held out as well: the power-limited clocks' (fitted here or shipped,
    ``power_training``) and, as shipped, those the shipped GEMM overheads were fitted on
    (their calibration's ``fitted_on.rows``)."""
    fitted = {i for members in power_training.values() for i in members}
    if options.calibrate:
        return training_rows(rows, options.training_per_class) & usable, fitted
    shipped = overhead_calibration().rows
    return set(), fitted | {i for i in usable if row_key(rows[i]) in shipped}


@dataclass(slots=True)
class _Run:
    """Every model's uncalibrated predictions per usable row index, each row's clock and static
    power, per-row clock and limiter (``row_details``) and the skipped rows by reason."""

    latency_s: dict[str, dict[int, float]]
    energy_j: dict[str, dict[int, float]]
    details: dict[str, dict[int, tuple[float, str]]]
    clock_hz: dict[int, float] = field(default_factory=dict)
    static_w: dict[int, float] = field(default_factory=dict)
    skipped: Counter[str] = field(default_factory=Counter)


def _predict_rows(
    rows: Sequence[GemmRow],
    model_names: Sequence[str],
    hardware: RowHardware,
    options: ValidationOptions,
) -> _Run:
    """Predict every row with every model (uncalibrated); a row no model can run is skipped
    and counted by its error's type and first field. No usable row at all is an error."""
    run = _Run(
        {n: {} for n in model_names}, {n: {} for n in model_names}, {n: {} for n in model_names}
    )
    models = [get_model(name) for name in model_names]
    for index, row in enumerate(rows):
        options.progress(index, len(rows))
        try:
            spec = hardware.for_row(row)
            op = row_op(row)
            profiles = [model.predict(op, spec) for model in models]
        except OpModelError as exc:
            run.skipped[f"{type(exc).__name__}: {str(exc).split(':')[0]}"] += 1
            continue
        run.clock_hz[index], run.static_w[index] = spec.compute.clock_hz, spec.power.static_w
        for name, profile in zip(model_names, profiles, strict=True):
            run.latency_s[name][index] = profile.latency_s
            run.energy_j[name][index] = profile.energy_j
            if options.row_details:
                run.details[name][index] = clock_and_limiter(profile.diagnostics, spec)
    if not run.clock_hz:
        reasons = "; ".join(f"{n} x {why}" for why, n in run.skipped.items())
        raise ConfigError([f"validate-gemm-latency: no row could be predicted ({reasons})"])
    return run


@dataclass(frozen=True, slots=True)
class _Predictions:
    """One model's uncalibrated latency and energy per usable row, with each row's clock and
    static power (to charge the fitted overhead)."""

    latency_s: dict[int, float]
    energy_j: dict[int, float]
    clock_hz: dict[int, float]
    static_w: dict[int, float]


def _evaluate(
    name: str, rows: Sequence[GemmRow], p: _Predictions, training: set[int], fitted: set[int]
) -> ModelResult:
    """One model's overheads fitted on ``training`` and its errors on the rows in neither
    ``training`` nor ``fitted`` (held out but not fitted here)."""
    base, clocks = p.latency_s, p.clock_hz
    overhead: dict[str, float] = {}
    counts: dict[str, int] = {}
    for hw in sorted({rows[i].hardware for i in training}):
        idx = [i for i in sorted(training) if rows[i].hardware == hw]
        overhead[hw] = fit_overhead_cycles(
            [base[i] for i in idx], [rows[i].time_s for i in idx], [clocks[i] for i in idx]
        )
        counts[hw] = len(idx)
    held = sorted(set(base) - training - fitted)
    extra_s = {i: overhead.get(rows[i].hardware, 0.0) / clocks[i] for i in held}
    pred = {i: base[i] + extra_s[i] for i in held}
    with_energy = [i for i in held if rows[i].energy_j is not None]
    energy_pred = {i: p.energy_j[i] + p.static_w[i] * extra_s[i] for i in with_energy}
    groups, energy_groups = held_groups(rows, held), held_groups(rows, with_energy)
    return ModelResult(
        model=name,
        overhead_cycles=overhead,
        training_rows=counts,
        overall=_metrics(rows, pred, held),
        by_hardware={k: _metrics(rows, pred, v) for k, v in groups[0].items()},
        by_class={k: _metrics(rows, pred, v) for k, v in groups[1].items()},
        by_source={k: _metrics(rows, pred, v) for k, v in groups[2].items()},
        energy=_energy_metrics(rows, energy_pred, with_energy) if with_energy else None,
        energy_by_hardware={
            k: _energy_metrics(rows, energy_pred, v) for k, v in energy_groups[0].items()
        },
        energy_by_class={
            k: _energy_metrics(rows, energy_pred, v) for k, v in energy_groups[1].items()
        },
        by_spread={k: _metrics(rows, pred, v) for k, v in spread_groups(rows, held).items()},
    )


def _energy_metrics(
    rows: Sequence[GemmRow], pred: dict[int, float], indices: list[int]
) -> ErrorMetrics:
    """Errors of the energy predictions ``pred`` (fitted overhead's static energy included)."""
    return error_metrics([pred[i] for i in indices], [rows[i].energy_j or 0.0 for i in indices])


def _metrics(rows: Sequence[GemmRow], pred: dict[int, float], indices: list[int]) -> ErrorMetrics:
    """Errors of the calibrated predictions ``pred`` on the rows ``indices``."""
    return error_metrics([pred[i] for i in indices], [rows[i].time_s for i in indices])
