"""The per-row records of ``validate-gemm-latency`` (``--output-csv``): each held-out row's
problem, measurement and, per model, its prediction with the fitted overhead, with errors,
cycles, throughput, clock and limiter where asked."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opmodel.hardware import HardwareSpec
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.gemm_split import size_class
from opmodel.validation.limiter import limiter_of

__all__ = ["RunValues", "clock_and_limiter", "per_row_records"]


@dataclass(frozen=True, slots=True)
class RunValues:
    """Every model's uncalibrated seconds and joules per row index, with each row's clock and
    static power."""

    latency_s: Mapping[str, Mapping[int, float]]
    energy_j: Mapping[str, Mapping[int, float]]
    clock_hz: Mapping[int, float]
    static_w: Mapping[int, float]


def clock_and_limiter(diagnostics: object, spec: HardwareSpec) -> tuple[float, str]:
    """The SM clock a model ran the kernel at (its diagnostics' ``sm_clock_hz``, else the
    config's) and what limited it (:func:`~opmodel.validation.limiter.limiter_of`)."""
    return getattr(diagnostics, "sm_clock_hz", spec.compute.clock_hz), limiter_of(diagnostics)


def per_row_records(
    rows: Sequence[GemmRow],
    held: list[int],
    overheads: Mapping[str, Mapping[str, float]],
    run: RunValues,
    details: Mapping[str, Mapping[int, tuple[float, str]]] | None,
) -> list[dict[str, object]]:
    """Measured and predicted seconds and joules per held-out row (the measured energy empty
    where the row has none; the predicted one with the fitted overhead's static energy); with
    ``details``, per model also the signed and absolute errors, cycles at the clock the kernel
    ran at, useful TFLOP/s, that clock and the limiter."""
    base, clocks = run.latency_s, run.clock_hz  # uncalibrated seconds; each row's config clock
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
            "measured_energy_j": row.energy_j,
        }
        for name, overhead in overheads.items():
            overhead_s = overhead.get(row.hardware, 0.0) / clocks[i]
            predicted = base[name][i] + overhead_s
            record[f"{name}_s"] = predicted
            record[f"{name}_ratio"] = predicted / row.time_s
            record[f"{name}_overhead_s"] = overhead_s
            record[f"{name}_energy_j"] = run.energy_j[name][i] + run.static_w[i] * overhead_s
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
