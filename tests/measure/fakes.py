"""Stand-ins for the GPU boundary: a fake backend for the runner and fake torch/NVML modules.

The fake torch records every call by name so tests check which kernel a case runs; its CUDA
events return scripted elapsed times; its profiler records one device activity per launch and
per flush (``kernel_us`` and ``flush_us`` long, laid end to end); the fake NVML counts energy per
kernel launch.
"""

from __future__ import annotations

import contextlib
import itertools
from collections import Counter
from collections.abc import Iterator
from types import SimpleNamespace
from typing import Any

from opmodel.measure import Case, CaseResult, DeviceInfo, MeasureGrid
from tests.measure.fake_nvml import FakeNVML, NVMLError

__all__ = ["DEVICE", "FakeBackend", "FakeNVML", "FakeTensor", "FakeTorch", "NVMLError"]

DEVICE = DeviceInfo(
    gpu_name="Fake H200",
    driver_version="580.0",
    cuda_version="13.0",
    torch_version="2.11.0",
    l2_bytes=60 * 2**20,
    sm_count=132,
)


class FakeBackend:
    """Backend whose 'measurement' of a case is a fixed function of its label."""

    def __init__(self, *, allow_lock: bool = True) -> None:
        self.allow_lock = allow_lock
        self.locked_mhz: float | None = None
        self.unlocked = False
        self.measured: list[str] = []

    def device_info(self) -> DeviceInfo:
        return DEVICE

    def lock_sm_clock(self, mhz: float) -> bool:
        if self.allow_lock:
            self.locked_mhz = mhz
        return self.allow_lock

    def unlock_clocks(self) -> None:
        self.unlocked = True

    def measure(self, case: Case, grid: MeasureGrid) -> CaseResult:
        self.measured.append(case.label)
        base = 0.01 * (1 + len(self.measured))  # ms, distinct per case
        return CaseResult(
            case=case,
            times_ms=tuple(base * (1 + 0.01 * i) for i in range(grid.repeats)),
            energy_j=base * 0.7 if grid.energy else None,
            energy_runs=100 if grid.energy else 0,
            energy_loop_s=0.2 if grid.energy else None,
            sm_clock_mhz_before=1980.0,
            sm_clock_mhz_under_load=1755.0 if grid.energy else None,
            sm_clock_mhz_after=1980.0,
            mem_clock_mhz=3201.0,
            # kernel-scope times 0.8 of the event times; none for copies (a reason instead)
            kernel_times_ms=tuple(0.8 * base * (1 + 0.01 * i) for i in range(grid.repeats))
            if grid.kernel_timing and case.kind.value != "copy"
            else (),
            kernel_timing_note="no activity"
            if grid.kernel_timing and case.kind.value == "copy"
            else "",
        )


class FakeTensor:
    """Shape-carrying tensor; operations return new tensors and are logged on the fake torch."""

    def __init__(self, torch: FakeTorch, shape: tuple[int, ...], dtype: str) -> None:
        self.torch, self.shape, self.dtype = torch, tuple(shape), dtype
        self.values: list[int] = []  # what torch.tensor was given
        self.base_shape: tuple[int, ...] | None = None  # a view's (narrow) buffer

    def transpose(self, a: int, b: int) -> FakeTensor:
        dims = list(self.shape)
        dims[a], dims[b] = dims[b], dims[a]
        return FakeTensor(self.torch, tuple(dims), self.dtype)

    def copy_(self, source: FakeTensor) -> FakeTensor:
        self.torch.kernels.append(("copy_", (source.shape, self.shape), {}))
        self.torch.calls["launch"] += 1
        self.torch.activity("copy_", self.torch.kernel_us)
        return self

    def to(self, dtype: str) -> FakeTensor:
        return FakeTensor(self.torch, self.shape, dtype)

    def narrow(self, dim: int, start: int, length: int) -> FakeTensor:
        """A view of ``length`` along ``dim``; it remembers the shape it was cut from."""
        dims = list(self.shape)
        dims[dim] = length
        view = FakeTensor(self.torch, tuple(dims), self.dtype)
        view.base_shape = self.shape
        self.torch.views.append((self.shape, view.shape))
        return view

    def __gt__(self, other: object) -> FakeTensor:
        """A comparison, outside any timed call: a bool tensor of the shape, not logged."""
        return FakeTensor(self.torch, self.shape, "bool")

    def requires_grad_(self, flag: bool) -> FakeTensor:
        self.requires_grad = flag
        return self

    def zero_(self) -> FakeTensor:
        self.torch.calls["flush"] += 1
        self.torch.activity("flush", self.torch.flush_us)
        return self


class FakeRange:
    def __init__(self, start: float, end: float) -> None:
        self.start, self.end = start, end

    def elapsed_us(self) -> float:
        return self.end - self.start


class FakeSession:
    """``torch.profiler.profile``: collects the fake torch's activities while open."""

    def __init__(self, torch: FakeTorch, activities: list[str]) -> None:
        self.torch, self.activities = torch, activities
        self.records: list[SimpleNamespace] = []

    def __enter__(self) -> FakeSession:
        if self.torch.profiler_error:
            raise RuntimeError(self.torch.profiler_error)
        self.torch.sessions.append(self)
        return self

    def __exit__(self, *_exc: object) -> None:
        self.torch.sessions.remove(self)

    def events(self) -> list[SimpleNamespace]:
        host = SimpleNamespace(name="aten::op", device_type="cpu", time_range=FakeRange(0, 1))
        return [host, *self.records]


class FakeEvent:
    def __init__(self, torch: FakeTorch) -> None:
        self.torch = torch

    def record(self) -> None:
        self.torch.calls["record"] += 1

    def synchronize(self) -> None:
        pass

    def elapsed_time(self, _other: FakeEvent) -> float:
        return next(self.torch.elapsed_ms)


class FakeTorch:
    """The parts of ``torch`` the backend uses."""

    bfloat16, float16, float32, uint8, int32 = "bf16", "fp16", "fp32", "u8", "i32"
    float8_e4m3fn = "fp8_e4m3"
    __version__ = "2.11.0"

    def __init__(
        self,
        elapsed_ms: Iterator[float],
        *,
        cuda: bool = True,
        kernel_us: Iterator[float] | None = None,
        flush_us: float = 40.0,
    ) -> None:
        self.elapsed_ms = elapsed_ms
        self.kernel_us = kernel_us if kernel_us is not None else itertools.repeat(2.0)
        self.flush_us = flush_us
        self.sessions: list[FakeSession] = []
        self.profiler_error = ""
        self.clock_us = 0.0
        self.profiler = SimpleNamespace(
            profile=lambda activities: FakeSession(self, activities),
            ProfilerActivity=SimpleNamespace(CUDA="cuda"),
        )
        self.autograd = SimpleNamespace(DeviceType=SimpleNamespace(CUDA="device"), grad=self._grad)
        self.calls: Counter[str] = Counter()
        self.views: list[tuple[tuple[int, ...], tuple[int, ...]]] = []  # narrow: (buffer, view)
        self.kernels: list[tuple[str, tuple[tuple[int, ...], ...], dict[str, Any]]] = []
        props = SimpleNamespace(L2_cache_size=60 * 2**20, multi_processor_count=132)
        self.cuda = SimpleNamespace(
            is_available=lambda: cuda,
            set_device=lambda _i: None,
            get_device_properties=lambda _i: props,
            get_device_name=lambda _i: "Fake H200",
            synchronize=lambda: None,
            Event=lambda enable_timing: FakeEvent(self),
            _sleep=self._sleep,
        )
        self.sleep_cycles: list[int] = []
        self.version = SimpleNamespace(cuda="13.0")
        self.backends = SimpleNamespace(cuda=SimpleNamespace(matmul=SimpleNamespace()))
        names = [
            "layer_norm",
            "rms_norm",
            "silu",
            "gelu",
            "scaled_dot_product_attention",
            "embedding",
            "cross_entropy",
        ]
        self.sdpa_backends: list[str] = []  # the backend each sdpa_kernel block named
        backends = SimpleNamespace(FLASH_ATTENTION="flash_attention")
        attention = SimpleNamespace(SDPBackend=backends, sdpa_kernel=self._sdpa_kernel)
        functional = SimpleNamespace(**{n: self._op(n) for n in names})
        self.nn = SimpleNamespace(functional=functional, attention=attention)
        for name in ("matmul", "softmax", "relu", "exp", "tanh", "sigmoid", "add", "mul", "div"):
            setattr(self, name, self._op(name))
        self.where = self._op("where")
        self._grouped_mm = self._op("_grouped_mm")
        self._scaled_mm = self._op("_scaled_mm")

    def _sleep(self, cycles: int) -> None:
        """``torch.cuda._sleep``: a spin kernel of ``cycles`` SM cycles."""
        self.calls["sleep"] += 1
        self.sleep_cycles.append(cycles)

    @contextlib.contextmanager
    def _sdpa_kernel(self, backend: str) -> Iterator[None]:
        """``torch.nn.attention.sdpa_kernel``: records the backend, then the block's calls."""
        self.sdpa_backends.append(backend)
        yield

    def _op(self, name: str) -> Any:
        def run(*args: Any, **kwargs: Any) -> FakeTensor:
            shapes = tuple(a.shape for a in args if isinstance(a, FakeTensor))
            self.kernels.append((name, shapes, kwargs))
            self.calls["launch"] += 1
            self.activity(name, self.kernel_us)
            return FakeTensor(self, shapes[0], "out")

        return run

    def activity(self, name: str, duration_us: float | Iterator[float]) -> None:
        """A device activity of ``duration_us``, recorded by every open profiler session
        (a 1 µs gap after the one before it)."""
        if not self.sessions:
            return
        length = duration_us if isinstance(duration_us, float) else next(duration_us)
        start = self.clock_us + 1.0
        self.clock_us = start + length
        record = SimpleNamespace(
            name=name, device_type="device", time_range=FakeRange(start, self.clock_us)
        )
        for session in self.sessions:
            session.records.append(record)

    def empty(self, size: int, dtype: str, device: str) -> FakeTensor:
        return FakeTensor(self, (size,), dtype)

    def empty_like(self, tensor: FakeTensor) -> FakeTensor:
        return FakeTensor(self, tensor.shape, tensor.dtype)

    def _grad(
        self, output: FakeTensor, inputs: list[FakeTensor], grad: FakeTensor, retain_graph: bool
    ) -> tuple[FakeTensor, ...]:
        """``torch.autograd.grad``: one backward launch, logged with the leaves' shapes."""
        shapes = (output.shape, *(t.shape for t in inputs), grad.shape)
        self.kernels.append(("autograd.grad", shapes, {"retain_graph": retain_graph}))
        self.calls["launch"] += 1
        self.activity("backward", self.kernel_us)
        return tuple(FakeTensor(self, t.shape, t.dtype) for t in inputs)

    def ones(self, shape: tuple[int, ...], dtype: str, device: str) -> FakeTensor:
        return FakeTensor(self, shape, dtype)

    def randn_like(self, tensor: FakeTensor) -> FakeTensor:
        return FakeTensor(self, tensor.shape, tensor.dtype)

    def randn(self, shape: tuple[int, ...], dtype: str, device: str) -> FakeTensor:
        return FakeTensor(self, shape, dtype)

    def tensor(self, data: list[int], dtype: str, device: str) -> FakeTensor:
        """A tensor holding ``data`` (kept as ``values`` for the tests to read)."""
        made = FakeTensor(self, (len(data),), dtype)
        made.values = list(data)
        return made

    def randint(self, low: int, high: int, shape: tuple[int, ...], device: str) -> FakeTensor:
        self.kernels.append(("randint", (shape,), {"low": low, "high": high}))
        return FakeTensor(self, shape, "i64")
