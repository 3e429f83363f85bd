"""The GPU side of ``opmodel measure``: PyTorch kernels, CUDA-event timing, NVML energy and clocks.

:class:`Backend` is the boundary the runner talks to; :class:`TorchBackend` implements it with
PyTorch (the kernels, CUDA events, the L2 flush) and NVML (``nvidia-ml-py``: total-energy counter,
clocks, clock locking). Both modules are passed in or imported on construction, so tests drive
the real code with stand-ins for them.

Timing of one case: ``warmup`` untimed runs; then ``repeats`` runs, each after overwriting a
buffer of twice the L2 size (``flush_l2``) and bracketed by two CUDA events, synchronised; the
median is reported. With ``kernel_timing`` the repeats run again under the PyTorch profiler
for the kernels' own durations (:mod:`~opmodel.measure.kernel_timing`). Energy: the kernel is
enqueued back to back for about ``energy_loop_s`` (``ceil(loop / median)`` runs, fewer when
the host cannot launch that fast) between two reads of NVML's total-energy counter (mJ,
updated about every 10 ms); energy per run is the difference over the run count. It is board
energy, idle power included, as EnergAIzer measures it. SM and memory clocks are read before
the case, while the energy loop runs (the clock under load) and after it.
"""

from __future__ import annotations

import contextlib
import dataclasses
import math
import statistics
import time
from collections.abc import Callable
from typing import Any

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind
from opmodel.core.errors import ConfigError
from opmodel.core.views import STRIDED
from opmodel.measure.case import Case
from opmodel.measure.grid import FLUSH_L2_MULTIPLE, MEASURED_DTYPES, MeasureGrid
from opmodel.measure.kernel_timing import KernelTiming, kernel_times_ms
from opmodel.measure.protocol import CaseResult, DeviceInfo
from opmodel.measure.torch_calls import (
    grouped_call,
    indexed_call,
    optimizer_call,
    row_call,
    scaled_gemm_call,
    stream_call,
)

__all__ = ["TorchBackend"]

_BATCH_S = 0.01  # GPU work enqueued between two looks at the wall clock
_MAX_BATCH = 1000


def _import_modules() -> tuple[Any, Any]:
    try:
        import pynvml  # noqa: PLC0415 - optional dependency (nvidia-ml-py)
        import torch  # noqa: PLC0415 - optional dependency
    except ImportError:
        msg = "opmodel measure needs PyTorch and nvidia-ml-py: pip install 'opmodel[measure]'"
        raise ConfigError([msg]) from None
    return torch, pynvml


class TorchBackend:
    """:class:`Backend` on a CUDA GPU through PyTorch and NVML."""

    def __init__(
        self,
        device: int = 0,
        *,
        torch: Any = None,
        nvml: Any = None,
        clock: Callable[[], float] = time.perf_counter,
    ) -> None:
        if torch is None or nvml is None:
            torch, nvml = _import_modules()
        if not torch.cuda.is_available():
            msg = (
                "no CUDA device is visible to PyTorch (plan without one: opmodel measure --dry-run)"
            )
            raise ConfigError([msg])
        self._torch, self._nvml, self._device, self._clock = torch, nvml, device, clock
        nvml.nvmlInit()
        self._handle = nvml.nvmlDeviceGetHandleByIndex(device)
        torch.cuda.set_device(device)
        props = torch.cuda.get_device_properties(device)
        self._l2_bytes = int(getattr(props, "L2_cache_size", 0)) or 50 * 2**20
        self._sm_count = int(props.multi_processor_count)
        self._flush = torch.empty(
            FLUSH_L2_MULTIPLE * self._l2_bytes, dtype=torch.uint8, device="cuda"
        )

    def device_info(self) -> DeviceInfo:
        """See :class:`Backend`."""
        torch, nvml = self._torch, self._nvml
        driver = nvml.nvmlSystemGetDriverVersion()
        return DeviceInfo(
            gpu_name=str(torch.cuda.get_device_name(self._device)),
            driver_version=driver.decode() if isinstance(driver, bytes) else str(driver),
            cuda_version=str(torch.version.cuda),
            torch_version=str(torch.__version__),
            l2_bytes=self._l2_bytes,
            sm_count=self._sm_count,
        )

    def lock_sm_clock(self, mhz: float) -> bool:
        """See :class:`Backend`."""
        try:
            self._nvml.nvmlDeviceSetGpuLockedClocks(self._handle, int(mhz), int(mhz))
        except self._nvml.NVMLError:
            return False
        return True

    def unlock_clocks(self) -> None:
        """See :class:`Backend`."""
        with contextlib.suppress(self._nvml.NVMLError):
            self._nvml.nvmlDeviceResetGpuLockedClocks(self._handle)

    def _clocks(self) -> tuple[float, float]:
        nvml = self._nvml
        sm = nvml.nvmlDeviceGetClockInfo(self._handle, nvml.NVML_CLOCK_SM)
        mem = nvml.nvmlDeviceGetClockInfo(self._handle, nvml.NVML_CLOCK_MEM)
        return float(sm), float(mem)

    def _dtype(self, dtype: DType) -> Any:
        torch = self._torch
        torch.backends.cuda.matmul.allow_tf32 = dtype is DType.TF32
        table = {
            DType.BF16: torch.bfloat16,
            DType.FP16: torch.float16,
            DType.FP32: torch.float32,
            DType.TF32: torch.float32,
        }
        if dtype not in table:
            accepted = ", ".join(d.value for d in MEASURED_DTYPES)
            raise ConfigError([f"dtype {dtype.value}: not measurable (measurable: {accepted})"])
        return table[dtype]

    def kernel(self, case: Case) -> Callable[[], Any]:
        """A callable that runs the case's op once on tensors allocated here: for a backward
        case, the gradients of the forward's output with respect to its inputs and weights
        (the forward runs once here, untimed; ``retain_graph`` keeps its saved tensors)."""
        if case.dtype is DType.FP8_E4M3:  # forward GEMMs only (grid rules): torch._scaled_mm
            return scaled_gemm_call(self._torch, case)
        if case.kind is OpKind.OPTIMIZER:  # torch.optim's step (no backward: grid rules)
            return optimizer_call(self._torch, case, self._dtype(case.dtype))
        if not case.backward:
            return self._forward(case)
        torch = self._torch
        leaves: list[Any] = []
        forward = self._forward(case, leaves)
        output = forward()
        grad = torch.randn_like(output)
        return lambda: torch.autograd.grad(output, leaves, grad, retain_graph=True)

    def _forward(self, case: Case, leaves: list[Any] | None = None) -> Callable[[], Any]:
        """The case's forward op; with ``leaves``, its inputs and weights require gradients
        and are appended there."""
        torch, op = self._torch, dataclasses.replace(case, backward=False).op()
        dtype = self._dtype(case.dtype)

        def make(shape: tuple[int, ...], layout: str | None = None) -> Any:
            if layout == STRIDED:  # one half of a buffer twice as wide, as torch.chunk gives
                wide = torch.randn((*shape[:-1], 2 * shape[-1]), dtype=dtype, device="cuda")
                return wide.narrow(-1, 0, shape[-1])
            tensor = torch.randn(shape, dtype=dtype, device="cuda")
            if leaves is not None:
                tensor.requires_grad_(True)
                leaves.append(tensor)
            return tensor

        if case.kind in (OpKind.EMBEDDING, OpKind.CROSS_ENTROPY):
            return indexed_call(torch, case, make)
        inputs = [
            make(t.shape, t.layout) for t in op.tensors if t.role.value in ("input", "weight")
        ]
        if case.kind in (OpKind.GEMM, OpKind.BATCHED_GEMM):
            a, b = inputs
            a = a.transpose(-1, -2) if case.trans[0] == "T" else a
            b = b.transpose(-1, -2) if case.trans[1] == "T" else b
            return lambda: torch.matmul(a, b)
        if case.kind is OpKind.GROUPED_GEMM:
            return grouped_call(self._torch, case, inputs)
        if case.kind in (OpKind.SOFTMAX, OpKind.LAYERNORM, OpKind.RMSNORM):
            return row_call(self._torch, case, inputs)
        if case.kind in (OpKind.ELEMENTWISE, OpKind.COPY):
            return stream_call(self._torch, case, inputs)
        return self._sdpa(case, inputs)

    def _sdpa(self, case: Case, inputs: list[Any]) -> Callable[[], Any]:
        """SDPA on ``inputs`` (Q, K, V): as PyTorch picks, or inside
        ``sdpa_kernel(SDPBackend.FLASH_ATTENTION)`` (its FlashAttention-2) for a ``flash`` case."""
        q, k, v = inputs
        gqa, causal = q.shape[1] != k.shape[1], case.causal
        sdpa = self._torch.nn.functional.scaled_dot_product_attention
        if case.sdpa_backend != "flash":
            return lambda: sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)
        attention = self._torch.nn.attention

        def flash() -> Any:
            with attention.sdpa_kernel(attention.SDPBackend.FLASH_ATTENTION):
                return sdpa(q, k, v, is_causal=causal, enable_gqa=gqa)

        return flash

    def _flusher(self, grid: MeasureGrid) -> Callable[[], Any] | None:
        """What runs before each timed run: the L2 flush (``flush_l2``), then with
        ``flush_idle_us`` a one-thread spin kernel (``torch.cuda._sleep``) of that many
        microseconds at the GPU's highest SM clock, at least that long at any clock, while
        the DRAM idles."""
        if not grid.flush_l2:
            return None
        torch, buffer, nvml = self._torch, self._flush, self._nvml
        zero: Callable[[], Any] = buffer.zero_
        if grid.flush_idle_us <= 0:
            return zero
        max_mhz = float(nvml.nvmlDeviceGetMaxClockInfo(self._handle, nvml.NVML_CLOCK_SM))
        cycles = max(1, round(grid.flush_idle_us * max_mhz))

        def flush_and_wait() -> None:
            zero()
            torch.cuda._sleep(cycles)

        return flush_and_wait

    def _time(
        self, run: Callable[[], Any], grid: MeasureGrid, flush: Callable[[], Any] | None
    ) -> list[float]:
        torch = self._torch
        for _ in range(grid.warmup):
            run()
        torch.cuda.synchronize()
        start = torch.cuda.Event(enable_timing=True)
        end = torch.cuda.Event(enable_timing=True)
        times: list[float] = []
        for _ in range(grid.repeats):
            if flush is not None:
                flush()
            start.record()
            run()
            end.record()
            end.synchronize()
            times.append(float(start.elapsed_time(end)))
        return times

    def _energy(
        self, run: Callable[[], Any], median_ms: float, loop_s: float
    ) -> tuple[float, int, float, float]:
        """(J per run, runs, loop wall seconds, SM clock under load).

        ``ceil(loop_s / median)`` runs are enqueued back to back, in batches of about 10 ms of
        GPU work; enqueueing also stops once ``loop_s`` of wall time has passed, so a kernel
        shorter than the host's launch time is not repeated for longer than asked (its energy
        then includes the idle gaps between launches, as in eager PyTorch).
        """
        torch, nvml, clock = self._torch, self._nvml, self._clock
        median_s = max(median_ms / 1e3, 1e-9)
        target = math.ceil(loop_s / median_s)
        batch = max(1, min(_MAX_BATCH, math.ceil(_BATCH_S / median_s)))
        torch.cuda.synchronize()
        before = nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        started, runs = clock(), 0
        while runs < target and (runs == 0 or clock() - started < loop_s):
            count = min(batch, target - runs)
            for _ in range(count):
                run()
            runs += count
        sm_under_load, _ = self._clocks()  # read while the queued runs execute
        torch.cuda.synchronize()
        wall = clock() - started
        after = nvml.nvmlDeviceGetTotalEnergyConsumption(self._handle)
        return (after - before) / 1e3 / runs, runs, wall, sm_under_load

    def measure(self, case: Case, grid: MeasureGrid) -> CaseResult:
        """See :class:`Backend`."""
        run = self.kernel(case)
        sm_before, mem = self._clocks()
        flush = self._flusher(grid)
        times = self._time(run, grid, flush)
        kernel = KernelTiming()
        if grid.kernel_timing:
            kernel = kernel_times_ms(self._torch, run, flush, grid.repeats)
        energy: tuple[float, int, float, float] | None = None
        if grid.energy:
            energy = self._energy(run, statistics.median(times), grid.energy_loop_s)
        sm_after, _ = self._clocks()
        return CaseResult(
            case=case,
            times_ms=tuple(times),
            energy_j=energy[0] if energy else None,
            energy_runs=energy[1] if energy else 0,
            energy_loop_s=energy[2] if energy else None,
            sm_clock_mhz_before=sm_before,
            sm_clock_mhz_under_load=energy[3] if energy else None,
            sm_clock_mhz_after=sm_after,
            mem_clock_mhz=mem,
            kernel_times_ms=kernel.times_ms,
            kernel_names=kernel.names,
            kernel_timing_note=kernel.note,
        )
