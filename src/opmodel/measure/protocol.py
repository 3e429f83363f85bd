"""The boundary between ``opmodel measure``'s runner and a GPU: the :class:`Backend` protocol
and what it returns (:class:`DeviceInfo`, one :class:`CaseResult` per case);
:class:`~opmodel.measure.backend.TorchBackend` implements it."""

from __future__ import annotations

import statistics
from dataclasses import dataclass
from typing import Protocol

from opmodel.measure.case import Case
from opmodel.measure.grid import MeasureGrid

__all__ = ["Backend", "CaseResult", "DeviceInfo"]


@dataclass(frozen=True, slots=True, kw_only=True)
class DeviceInfo:
    """What ran the measurements."""

    gpu_name: str
    driver_version: str
    cuda_version: str
    torch_version: str
    l2_bytes: int
    sm_count: int


@dataclass(frozen=True, slots=True, kw_only=True)
class CaseResult:
    """The measurement of one case (times in ms, energy in J per run, clocks in MHz)."""

    case: Case
    times_ms: tuple[float, ...]
    energy_j: float | None
    energy_runs: int
    energy_loop_s: float | None
    sm_clock_mhz_before: float
    sm_clock_mhz_under_load: float | None
    sm_clock_mhz_after: float
    mem_clock_mhz: float
    # kernel-scope times (grid kernel_timing; empty when off or unavailable), the kernels'
    # names, and why there are no times
    kernel_times_ms: tuple[float, ...] = ()
    kernel_names: tuple[str, ...] = ()
    kernel_timing_note: str = ""

    @property
    def median_ms(self) -> float:
        """Median of the timed runs."""
        return statistics.median(self.times_ms)

    @property
    def kernel_median_ms(self) -> float | None:
        """Median of the kernel-scope times; None without them."""
        return statistics.median(self.kernel_times_ms) if self.kernel_times_ms else None


class Backend(Protocol):
    """What the runner needs from a GPU."""

    def device_info(self) -> DeviceInfo:
        """Name, driver, CUDA and PyTorch versions, L2 size, SM count."""
        ...

    def lock_sm_clock(self, mhz: float) -> bool:
        """Lock the SM clock; False when not permitted."""
        ...

    def unlock_clocks(self) -> None:
        """Undo :meth:`lock_sm_clock`."""
        ...

    def measure(self, case: Case, grid: MeasureGrid) -> CaseResult:
        """Time (and, with ``grid.energy``, meter) one case."""
        ...
