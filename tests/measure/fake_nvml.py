"""A stand-in for ``pynvml``: clocks, a clock lock, and an energy counter that grows by a fixed
amount per kernel launch of the fake torch it watches."""

from __future__ import annotations

import itertools
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.measure.fakes import FakeTorch


class NVMLError(Exception):
    pass


class FakeNVML:
    """The parts of ``pynvml`` the backend uses; energy grows by ``mj_per_launch``."""

    NVML_CLOCK_SM, NVML_CLOCK_MEM = 0, 1
    NVMLError = NVMLError

    def __init__(self, torch: FakeTorch, *, mj_per_launch: float, allow_lock: bool) -> None:
        self.torch, self.mj_per_launch, self.allow_lock = torch, mj_per_launch, allow_lock
        self.locked: tuple[int, int] | None = None
        self.reset = 0
        self.sm_clocks = itertools.cycle([1980.0, 1755.0, 1980.0])

    def nvmlInit(self) -> None:
        pass

    def nvmlDeviceGetHandleByIndex(self, index: int) -> str:
        return f"gpu{index}"

    def nvmlSystemGetDriverVersion(self) -> bytes:
        return b"580.159.04"

    def nvmlDeviceGetClockInfo(self, _handle: str, which: int) -> float:
        return next(self.sm_clocks) if which == self.NVML_CLOCK_SM else 3201.0

    def nvmlDeviceGetMaxClockInfo(self, _handle: str, which: int) -> float:
        return 1980.0 if which == self.NVML_CLOCK_SM else 3201.0

    def nvmlDeviceGetTotalEnergyConsumption(self, _handle: str) -> float:
        return 1e6 + self.mj_per_launch * self.torch.calls["launch"]

    def nvmlDeviceSetGpuLockedClocks(self, _handle: str, low: int, high: int) -> None:
        if not self.allow_lock:
            raise NVMLError("insufficient permissions")
        self.locked = (low, high)

    def nvmlDeviceResetGpuLockedClocks(self, _handle: str) -> None:
        self.reset += 1
