"""The hardware configs of ``validate-gemm-latency``'s rows: each row's config at its locked
clock, or power-limited as it ran unlocked (a sourced clock, or one fitted on the run's
``large`` training rows, :mod:`opmodel.validation.power_clock_fit`), with the fixed device
overhead zeroed while it is being fitted: the config's estimate and the GEMM models' own value
(``overhead.gemm_fixed_overhead_cycles`` = 0, which wins over their shipped calibration)."""

from __future__ import annotations

import dataclasses
from collections import defaultdict
from collections.abc import Sequence
from pathlib import Path

from opmodel.core.errors import OpModelError
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.gemm_split import SizeClass, row_op, training_rows
from opmodel.validation.power_clock_fit import (
    fit_power_limited_clock_hz,
    with_power_limited_clock,
)

__all__ = ["RowHardware", "fit_power_clocks"]


def _clock_key(name: str, burst: bool) -> str:
    """The key of a fitted power-limited clock: per hardware and power state."""
    return f"{name}:burst" if burst else name


class RowHardware:
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
        """Config ``name`` at the locked ``clock_hz``, else unlocked: at the fitted
        power-limited clock of its power state when there is one, else as the config gives it
        (``burst``: its burst clock); the fixed overhead zeroed while it is fitted. Cached."""
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
                    overhead=dataclasses.replace(
                        spec.overhead, fixed_device_overhead_cycles=0, gemm_fixed_overhead_cycles=0
                    ),
                )
            self._cache[key] = spec
        return spec


def fit_power_clocks(
    rows: Sequence[GemmRow], hardware: RowHardware, per_class: int
) -> dict[str, list[int]]:
    """Fit each unlocked hardware's power-limited clock, per power state, on its large training
    rows (replacing a config's sourced value for the run); returns the training rows used per
    fitted clock (keys ``name`` for sustained rows, ``name:burst`` for burst rows)."""
    groups: dict[tuple[str, bool], list[int]] = defaultdict(list)
    for i in sorted(training_rows(rows, per_class, (SizeClass.LARGE,), unlocked_only=True)):
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
