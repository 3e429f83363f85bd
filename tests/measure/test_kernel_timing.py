"""Kernel-scope timing (grid ``kernel_timing``): the profiler's device activities per repeat,
the flush's told apart by count, the reasons when there are none, and the datasets, estimate
and validators that carry the times."""

from __future__ import annotations

import csv
import itertools
import json
from pathlib import Path

import pytest

from opmodel.hardware import load_hardware
from opmodel.measure import MeasureRequest, TorchBackend, expand, load_grid, plan, run_measurements
from opmodel.measure.kernel_timing import KernelTiming, kernel_times_ms
from opmodel.measure.plan import PROFILER_SESSION_S, TIMED_RUN_OVERHEAD_S
from opmodel.measure.rebuild import rebuild_dataset
from opmodel.models import get_model
from opmodel.validation.gemm_data import load_gemm_rows
from opmodel.validation.op_latency import load_op_rows
from tests.measure.fakes import FakeBackend, FakeNVML, FakeTorch

GRID = """name: k
warmup: 2
repeats: 3
energy: false
kernel_timing: true
ops:
  - {kind: gemm, sizes: {m: [64], n: [256], k: [512]}}
  - {kind: rmsnorm, sizes: {rows: [8], length: [4096]}}
  - {kind: copy, sizes: {rows: [8], length: [4096]}}
"""


def _grid(tmp_path: Path, text: str = GRID) -> Path:
    path = tmp_path / "k.yaml"
    path.write_text(text)
    return path


def test_backend_sums_each_repeats_kernels_without_the_flush(tmp_path: Path) -> None:
    """Three repeats of one kernel of 2, 3 and 4 µs, each after a 40 µs flush: 2, 3, 4 µs;
    the event times are left as they were."""
    torch = FakeTorch(itertools.repeat(0.5), kernel_us=iter([2.0, 3.0, 4.0]))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    grid = load_grid(_grid(tmp_path))
    result = backend.measure(expand(grid)[1], grid)
    assert result.times_ms == (0.5, 0.5, 0.5)
    assert result.kernel_times_ms == pytest.approx((0.002, 0.003, 0.004))
    assert result.kernel_median_ms == pytest.approx(0.003) and result.kernel_timing_note == ""
    assert result.kernel_names == ("rms_norm",)  # the flush's activity is not the op's
    # 3 event-timed flushes, 2 alone to count the flush's activities, 3 in the profiled repeats
    assert torch.calls["flush"] == 8


def test_off_by_default_and_without_a_flush(tmp_path: Path) -> None:
    torch = FakeTorch(itertools.repeat(0.5))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    plain = load_grid(_grid(tmp_path, GRID.replace("kernel_timing: true\n", "")))
    result = backend.measure(expand(plain)[1], plain)
    assert result.kernel_times_ms == () and result.kernel_median_ms is None
    assert not torch.sessions and torch.calls["flush"] == 3
    unflushed = load_grid(_grid(tmp_path, GRID.replace("energy: false", "flush_l2: false")))
    result = backend.measure(expand(unflushed)[1], unflushed)
    assert result.kernel_times_ms == pytest.approx((0.002, 0.002, 0.002))


def _read(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def test_the_reasons_when_there_are_no_kernel_times() -> None:
    class Silent(FakeTorch):
        def activity(self, name: str, duration_us: object) -> None:  # records nothing
            pass

    silent = Silent(itertools.repeat(0.1))
    x = silent.randn((2, 2), "bf16", "cuda")
    assert kernel_times_ms(silent, lambda: silent.matmul(x, x), None, 3) == KernelTiming(
        note="the profiler recorded no device activity"
    )
    failing = FakeTorch(itertools.repeat(0.1))
    failing.profiler_error = "CUPTI_ERROR_NOT_INITIALIZED\nmore"
    assert kernel_times_ms(failing, lambda: None, None, 3) == KernelTiming(
        note="profiler failed (RuntimeError: CUPTI_ERROR_NOT_INITIALIZED)"
    )
    # a run that launches one kernel in some repeats and two in others does not split
    torch = FakeTorch(itertools.repeat(0.1))
    counter = itertools.count()

    y = torch.randn((2, 2), "bf16", "cuda")

    def uneven() -> None:
        torch.matmul(y, y)
        if next(counter) == 0:
            torch.matmul(y, y)

    uneven_timing = kernel_times_ms(torch, uneven, None, 3)
    assert uneven_timing.times_ms == () and uneven_timing.names == ()
    assert uneven_timing.note.startswith("4 device activities do not split into 3 repeats")


def test_dataset_column_run_json_source_and_rebuild(tmp_path: Path) -> None:
    grid = _grid(tmp_path)
    out = tmp_path / "out"
    run_measurements(
        MeasureRequest(grid=str(grid), hardware="h200_sxm", output_dir=str(out)), FakeBackend()
    )
    ops = _read(out / "ops.csv")
    gemm = _read(out / "gemm.csv")
    assert list(gemm[0])[list(gemm[0]).index("time") + 1] == "kernel_time"
    assert float(gemm[0]["kernel_time"]) == pytest.approx(0.8 * float(gemm[0]["time"]))
    norm, copy = ops
    assert float(norm["kernel_time"]) == pytest.approx(0.8 * float(norm["time"]))
    assert copy["kernel_time"] == ""
    run = json.loads((out / "run.json").read_text())
    assert run["grid"]["kernel_timing"] is True
    assert run["cases"][2]["kernel_timing_note"] == "no activity"
    assert "2 of 3 cases have it" in (out / "SOURCE.md").read_text()
    again = tmp_path / "again"
    rebuild_dataset(out / "run.json", again, str(grid))
    for name in ("gemm.csv", "ops.csv", "SOURCE.md"):
        assert (again / name).read_text() == (out / name).read_text()
    # the validators read the kernel time where there is one, the event time elsewhere
    rows = {r.label: r.time_s for r in load_op_rows(out)[0]}
    assert rows[norm["label"]] == pytest.approx(float(norm["kernel_time"]) / 1e3)
    assert rows[copy["label"]] == pytest.approx(float(copy["time"]) / 1e3)
    # `time` is event-scoped (the column says so); a kernel time makes the row kernel-scoped
    assert norm["timing_scope"] == copy["timing_scope"] == "event"
    scopes = {r.label: r.timing_scope for r in load_op_rows(out)[0]}
    assert scopes == {norm["label"]: "kernel", copy["label"]: "event"}
    (gemm_row,) = load_gemm_rows(out).rows
    assert gemm_row.time_s == pytest.approx(float(gemm[0]["kernel_time"]) / 1e3)


def test_without_kernel_timing_the_files_have_no_column(tmp_path: Path) -> None:
    grid = _grid(tmp_path, GRID.replace("kernel_timing: true\n", ""))
    out = tmp_path / "out"
    run_measurements(
        MeasureRequest(grid=str(grid), hardware="h200_sxm", output_dir=str(out)), FakeBackend()
    )
    assert "kernel_time" not in (out / "ops.csv").read_text()
    assert "kernel_time" not in (out / "run.json").read_text()


def test_estimate_adds_the_profiled_repeats(tmp_path: Path) -> None:
    """Per case: the repeats again (run, flush and event overhead each) plus two flushes alone
    and one profiler session."""
    h200, model = load_hardware("h200_sxm"), get_model("roofline")
    on = plan(load_grid(_grid(tmp_path)), h200, model)
    off = plan(load_grid(_grid(tmp_path, GRID.replace("kernel_timing: true\n", ""))), h200, model)
    launch = h200.overhead.kernel_launch_overhead_s
    flush = 2 * h200.levels_by_name["l2"].size_bytes / h200.hbm.bandwidth_bytes_per_s + launch
    for kernel_s, with_k, without in zip(on.kernel_s, on.case_s, off.case_s, strict=True):
        repeats = 3 * (kernel_s + launch + flush + TIMED_RUN_OVERHEAD_S)
        assert with_k - without == pytest.approx(repeats + 2 * flush + PROFILER_SESSION_S)
