"""``validate-gemm-latency``: predicted versus measured GEMM latency, with one fitted constant.

Per model and hardware the fixed device overhead (cycles) is fitted, by non-negative least
squares on relative errors over a deterministic training split of ``small`` and
``vector_like`` rows. Opt-in (``calibrate_power_clock``, CLI ``--fit-power-clock``): per
hardware whose rows were measured unlocked (no ``clock_mhz``), that clock is fitted first on a
deterministic split of ``large`` rows (:mod:`opmodel.validation.power_clock_fit`) and applied to
every unlocked row of that hardware, in place of a config's sourced ``power_limited_clock_hz``;
those rows are then held out too. Every other usable row is held out and reported overall, by
hardware and by size class. Rows whose kernel cannot run, or whose hardware has no
config, are skipped and counted by reason.
"""

from __future__ import annotations

import dataclasses
from collections import Counter, defaultdict
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.errors import ConfigError, OpModelError
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.limiter import limiter_of
from opmodel.validation.metrics import ErrorMetrics, error_metrics
from opmodel.validation.nnls import relative_offset
from opmodel.validation.power_clock_fit import (
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

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

SMALL_FLOPS = 1e9  # under ~10 us on an A100: launch and tail dominate
LARGE_FLOPS = 1e11  # over ~0.3 ms on an A100: throughput dominates
VECTOR_DIM = 16  # M or N at most 16: GEMV-like
SKINNY_DIM = 128  # M or N at most one CTA tile


class SizeClass(StrEnum):
    """GEMM size classes (thresholds above, documented in docs/validation.md)."""

    VECTOR_LIKE = "vector_like"
    SMALL = "small"
    SKINNY = "skinny"
    REGULAR = "regular"
    LARGE = "large"


def size_class(row: GemmRow) -> SizeClass:
    """vector_like (min(M, N) <= 16), small (< 1 GFLOP), skinny (min(M, N) <= 128), large
    (>= 100 GFLOP), else regular; tested in that order."""
    flops = 2 * row.batch * row.m * row.n * row.k
    if min(row.m, row.n) <= VECTOR_DIM:
        return SizeClass.VECTOR_LIKE
    if flops < SMALL_FLOPS:
        return SizeClass.SMALL
    if min(row.m, row.n) <= SKINNY_DIM:
        return SizeClass.SKINNY
    return SizeClass.LARGE if flops >= LARGE_FLOPS else SizeClass.REGULAR


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


@dataclass(frozen=True, slots=True, kw_only=True)
class LatencyReport:
    """Everything ``validate-gemm-latency`` prints."""

    rows_used: int
    skipped: dict[str, int]
    models: list[ModelResult]
    per_row: list[dict[str, object]]
    power_limited_clock_hz: dict[str, float]  # fitted per hardware ("name:burst": burst rows)
    power_clock_training_rows: dict[str, int]


def row_op(row: GemmRow) -> LocalOp:
    """The GEMM (or batched GEMM) op a measured row describes, its kernel columns as attrs."""
    batched = row.batch > 1
    a = (row.k, row.m) if row.transpose_a else (row.m, row.k)
    b = (row.n, row.k) if row.transpose_b else (row.k, row.n)
    lead = (row.batch,) if batched else ()
    attrs: dict[str, object] = {
        "transpose_a": row.transpose_a,
        "transpose_b": row.transpose_b,
        **row.kernel,
    }
    if row.compute_dtype is not None:
        attrs["compute_dtype"] = row.compute_dtype.value
    if row.l2_dirty_bytes:
        attrs["l2_dirty_bytes"] = row.l2_dirty_bytes
    out = DType.FP32 if row.dtype is DType.FP32 else row.dtype
    return LocalOp(
        name=row.label or "gemm",
        kind=OpKind.BATCHED_GEMM if batched else OpKind.GEMM,
        phase=Phase.INFERENCE,
        attrs=attrs,  # type: ignore[arg-type]
        tensors=(
            TensorSpec(TensorRole.INPUT, (*lead, *a), row.dtype),
            TensorSpec(TensorRole.WEIGHT, (*lead, *b), row.dtype),
            TensorSpec(TensorRole.OUTPUT, (*lead, row.m, row.n), out),
        ),
    )


def _clock_key(name: str, burst: bool) -> str:
    """The key of a fitted power-limited clock: per hardware and power state."""
    return f"{name}:burst" if burst else name


class _Hardware:
    """Configs at each row's clock, with the fixed device overhead set to zero (or kept)."""

    def __init__(self, directory: Path | None, *, zero_overhead: bool) -> None:
        self._directory, self._zero = directory, zero_overhead
        self._cache: dict[tuple[str, float | None, bool], HardwareSpec] = {}
        # fitted; applied to unlocked rows of that hardware and power state (_clock_key)
        self.power_clock: dict[str, float] = {}

    def set_power_clock(self, name: str, clock_hz: float, *, burst: bool = False) -> None:
        """Run unlocked rows of ``name`` in that power state under the power-limited
        ``clock_hz`` from now on."""
        self.power_clock[_clock_key(name, burst)] = clock_hz
        self._cache.pop((name, None, burst), None)

    def for_row(self, row: GemmRow) -> HardwareSpec:
        """The config a row ran on: at its locked clock, else power-limited as it ran (a
        ``burst`` row at the config's burst clock, :meth:`HardwareSpec.in_burst`)."""
        return self.get(row.hardware, row.clock_hz, burst=row.power_state == "burst")

    def get(self, name: str, clock_hz: float | None, *, burst: bool = False) -> HardwareSpec:
        burst = burst and not clock_hz  # a locked clock holds in any power state
        key = (name, clock_hz, burst)
        spec = self._cache.get(key)
        if spec is None:
            spec = load_hardware(name, directory=self._directory)
            spec = spec.at_clock(clock_hz) if clock_hz else spec
            fitted = None if clock_hz else self.power_clock.get(_clock_key(name, burst))
            if fitted is not None:
                spec = with_power_limited_clock(spec, fitted)
            elif burst:
                spec = spec.in_burst()
            if self._zero:
                spec = dataclasses.replace(
                    spec,
                    overhead=dataclasses.replace(spec.overhead, fixed_device_overhead_cycles=0),
                )
            self._cache[key] = spec
        return spec


_OVERHEAD_CLASSES = (SizeClass.SMALL, SizeClass.VECTOR_LIKE)


def _training_rows(
    rows: Sequence[GemmRow],
    per_class: int,
    classes: tuple[SizeClass, ...] = _OVERHEAD_CLASSES,
    *,
    unlocked_only: bool = False,
) -> set[int]:
    """Indices of up to ``per_class`` evenly spaced rows of each of ``classes`` per hardware
    (with ``unlocked_only``: per hardware and power state, of rows measured without a locked
    clock)."""
    chosen: set[int] = set()
    groups: dict[tuple[str, str, SizeClass], list[int]] = defaultdict(list)
    for index, row in enumerate(rows):
        cls = size_class(row)
        if cls in classes and not (unlocked_only and row.clock_hz):
            state = row.power_state if unlocked_only else ""  # the power fit is per state
            groups[(row.hardware, state, cls)].append(index)
    for members in groups.values():
        members.sort(
            key=lambda i: (
                rows[i].batch * rows[i].m * rows[i].n * rows[i].k,
                rows[i].m,
                rows[i].n,
                rows[i].k,
                rows[i].label,
            )
        )
        step = max(1, len(members) // per_class)
        chosen.update(members[::step][:per_class])
    return chosen


def fit_overhead_cycles(
    base_s: Sequence[float], measured_s: Sequence[float], clock_hz: Sequence[float]
) -> float:
    """Non-negative least squares of relative errors for one overhead ``x`` in cycles.

    Minimises ``sum(((p + x / f - m) / m)^2)`` over predictions ``p``, measurements ``m`` and
    clocks ``f`` (:func:`~opmodel.validation.nnls.relative_offset`).
    """
    return relative_offset(base_s, measured_s, clock_hz)


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
    hardware = _Hardware(options.hardware_dir, zero_overhead=options.calibrate)
    power_training = (
        _fit_power_clocks(rows, hardware, options.training_per_class)
        if options.calibrate_power_clock
        else {}
    )
    skipped: Counter[str] = Counter()
    base: dict[str, dict[int, float]] = {name: {} for name in model_names}
    energy: dict[str, dict[int, float]] = {name: {} for name in model_names}
    models = [get_model(name) for name in model_names]
    clocks: dict[int, float] = {}
    static_w: dict[int, float] = {}
    details: dict[str, dict[int, tuple[float, str]]] = {name: {} for name in model_names}
    for index, row in enumerate(rows):
        options.progress(index, len(rows))
        try:
            spec = hardware.for_row(row)
            op = row_op(row)
            profiles = [model.predict(op, spec) for model in models]
        except OpModelError as exc:
            skipped[f"{type(exc).__name__}: {str(exc).split(':')[0]}"] += 1
            continue
        clocks[index], static_w[index] = spec.compute.clock_hz, spec.power.static_w
        for name, profile in zip(model_names, profiles, strict=True):
            base[name][index] = profile.latency_s
            energy[name][index] = profile.energy_j
            if options.row_details:
                details[name][index] = _clock_and_limiter(profile.diagnostics, spec)
    if not clocks:
        reasons = "; ".join(f"{n} x {why}" for why, n in skipped.items())
        raise ConfigError([f"validate-gemm-latency: no row could be predicted ({reasons})"])
    training = _training_rows(rows, options.training_per_class) & set(clocks)
    if not options.calibrate:
        training = set()
    fitted = {i for members in power_training.values() for i in members}
    results = [
        _evaluate(
            name, rows, _Predictions(base[name], energy[name], clocks, static_w), training, fitted
        )
        for name in model_names
    ]
    held = sorted(set(clocks) - training - fitted)
    return LatencyReport(
        rows_used=len(held),
        skipped=dict(skipped),
        models=results,
        per_row=_per_row(
            rows, held, results, (base, clocks), details if options.row_details else None
        ),
        power_limited_clock_hz=dict(hardware.power_clock),
        power_clock_training_rows={hw: len(v) for hw, v in power_training.items()},
    )


def _fit_power_clocks(
    rows: Sequence[GemmRow], hardware: _Hardware, per_class: int
) -> dict[str, list[int]]:
    """Fit each unlocked hardware's power-limited clock, per power state, on its large training
    rows (replacing a config's sourced value for the run); returns the training rows used per
    fitted clock (keys ``name`` for sustained rows, ``name:burst`` for burst rows)."""
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i in sorted(_training_rows(rows, per_class, (SizeClass.LARGE,), unlocked_only=True)):
        groups[(rows[i].hardware, rows[i].power_state == "burst")].append(i)
    used: dict[str, list[int]] = {}
    for (name, burst), members in sorted(groups.items()):
        try:
            spec = hardware.get(name, None)
        except OpModelError:
            continue  # counted as skipped when its rows are predicted
        if spec.compute.sm is None:
            continue
        ops = [row_op(rows[i]) for i in members]
        clock = fit_power_limited_clock_hz(spec, ops, [rows[i].time_s for i in members])
        hardware.set_power_clock(name, clock, burst=burst)
        used[_clock_key(name, burst)] = members
    return used


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
    energy = (
        error_metrics(
            [p.energy_j[i] + p.static_w[i] * extra_s[i] for i in with_energy],
            [rows[i].energy_j or 0.0 for i in with_energy],
        )
        if with_energy
        else None
    )

    def metrics(indices: list[int]) -> ErrorMetrics:
        return error_metrics([pred[i] for i in indices], [rows[i].time_s for i in indices])

    by_hw: dict[str, list[int]] = defaultdict(list)
    by_cls: dict[str, list[int]] = defaultdict(list)
    by_src: dict[str, list[int]] = defaultdict(list)
    for i in held:
        by_hw[rows[i].hardware].append(i)
        by_cls[size_class(rows[i]).value].append(i)
        by_src[f"{rows[i].source}:{rows[i].hardware}"].append(i)
    return ModelResult(
        model=name,
        overhead_cycles=overhead,
        training_rows=counts,
        overall=metrics(held),
        by_hardware={k: metrics(v) for k, v in sorted(by_hw.items())},
        by_class={k: metrics(v) for k, v in sorted(by_cls.items())},
        by_source={k: metrics(v) for k, v in sorted(by_src.items())},
        energy=energy,
    )


def _clock_and_limiter(diagnostics: object, spec: HardwareSpec) -> tuple[float, str]:
    """The SM clock a model ran the kernel at (its diagnostics' ``sm_clock_hz``, else the
    config's) and what limited it (:func:`~opmodel.validation.limiter.limiter_of`)."""
    return getattr(diagnostics, "sm_clock_hz", spec.compute.clock_hz), limiter_of(diagnostics)


def _per_row(
    rows: Sequence[GemmRow],
    held: list[int],
    results: list[ModelResult],
    predictions: tuple[dict[str, dict[int, float]], dict[int, float]],
    details: dict[str, dict[int, tuple[float, str]]] | None,
) -> list[dict[str, object]]:
    """Measured and predicted seconds per held-out row; with ``details``, per model also the
    signed and absolute errors, cycles at the clock the kernel ran at, useful TFLOP/s, that
    clock and the limiter."""
    base, clocks = predictions  # uncalibrated seconds per model; each row's config clock
    out = []
    for i in held:
        row = rows[i]
        record: dict[str, object] = {
            "source": row.source,
            "label": row.label,
            "hardware": row.hardware,
            "class": size_class(row).value,
            "batch": row.batch,
            "m": row.m,
            "n": row.n,
            "k": row.k,
            "dtype": row.dtype.value,
            "measured_s": row.time_s,
        }
        for result in results:
            name = result.model
            overhead_s = result.overhead_cycles.get(row.hardware, 0.0) / clocks[i]
            predicted = base[name][i] + overhead_s
            record[f"{name}_s"] = predicted
            record[f"{name}_ratio"] = predicted / row.time_s
            record[f"{name}_overhead_s"] = overhead_s
            if details:
                record.update(_row_details(name, row, predicted, *details[name][i]))
        out.append(record)
    return out


def _row_details(
    name: str, row: GemmRow, predicted_s: float, clock_hz: float, limiter: str
) -> dict[str, object]:
    """Model ``name``'s error, cycles, throughput, clock and limiter columns for ``row``."""
    flops = 2 * row.batch * row.m * row.n * row.k
    return {
        f"{name}_error_s": predicted_s - row.time_s,
        f"{name}_ape": abs(predicted_s / row.time_s - 1),
        f"{name}_cycles": predicted_s * clock_hz,
        f"{name}_tflops": flops / predicted_s / 1e12,
        f"{name}_sm_clock_hz": clock_hz,
        f"{name}_bottleneck": limiter,
    }
