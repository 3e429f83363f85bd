"""TorchBackend against fake torch and NVML modules: kernels, timing, energy, clocks, locking."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from pathlib import Path

import pytest

from opmodel.core.errors import ConfigError
from opmodel.measure import Case, TorchBackend, expand, load_grid
from tests.measure.fakes import FakeNVML, FakeTorch

GRID = """name: b
warmup: 3
repeats: 5
ops:
  - {kind: gemm, sizes: {m: [64], n: [256], k: [512]}, trans: [NT], dtypes: [bf16, tf32]}
  - {kind: softmax, sizes: {rows: [8], length: [128]}}
  - {kind: layernorm, sizes: {rows: [8], length: [128]}}
  - {kind: rmsnorm, sizes: {rows: [8], length: [128]}}
  - {kind: elementwise, sizes: {rows: [8], length: [128]}, functions: [mul, gelu]}
  - {kind: copy, sizes: {rows: [8], length: [128]}, dtypes: [fp32]}
  - {kind: embedding, sizes: {tokens: [16], hidden: [128], vocab: [1000]}}
  - {kind: cross_entropy, sizes: {rows: [16], vocab: [1000]}, dtypes: [fp32]}
  - kind: attention_prefill
    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [256], head_dim: [128]}
  - kind: attention_decode
    sizes: {batch: [2], heads: [8], kv_heads: [8], context: [256], head_dim: [128]}
"""


class _Clock:
    """A wall clock that advances ``step`` seconds at each reading."""

    def __init__(self, step: float) -> None:
        self.now, self.step = 0.0, step

    def __call__(self) -> float:
        self.now += self.step
        return self.now


def _backend(
    tmp_path: Path,
    elapsed: Iterator[float],
    *,
    clock_step: float = 1e-4,
    allow_lock: bool = True,
) -> tuple[TorchBackend, FakeTorch, FakeNVML, list[Case]]:
    path = tmp_path / "b.yaml"
    path.write_text(GRID)
    torch = FakeTorch(elapsed)
    nvml = FakeNVML(torch, mj_per_launch=2.5, allow_lock=allow_lock)
    backend = TorchBackend(torch=torch, nvml=nvml, clock=_Clock(clock_step))
    return backend, torch, nvml, expand(load_grid(path))


def test_median_energy_and_clocks(tmp_path: Path) -> None:
    backend, torch, _nvml, cases = _backend(tmp_path, itertools.cycle([0.5, 0.4, 0.9, 0.3, 0.6]))
    grid = load_grid(tmp_path / "b.yaml")
    result = backend.measure(cases[0], grid)
    assert result.times_ms == (0.5, 0.4, 0.9, 0.3, 0.6)
    assert result.median_ms == 0.5
    # 0.2 s / 0.5 ms = 400 runs in batches of 10 ms / 0.5 ms = 20; the clock allows them all
    assert result.energy_runs == 400
    # 2.5 mJ per launch -> 2.5e-3 J per run
    assert result.energy_j == pytest.approx(2.5e-3)
    # NVML's SM clock cycles 1980 (before), 1755 (under load), 1980 (after)
    assert (result.sm_clock_mhz_before, result.sm_clock_mhz_under_load) == (1980.0, 1755.0)
    assert result.sm_clock_mhz_after == 1980.0 and result.mem_clock_mhz == 3201.0
    # L2 flushed before each timed run (the fake counts zero_() calls)
    assert torch.calls["flush"] == 5
    # warm-up 3 + timed 5 + energy 400 launches
    assert torch.calls["launch"] == 408


def test_energy_loop_stops_when_the_host_is_slower_than_the_kernel(tmp_path: Path) -> None:
    backend, _torch, _nvml, cases = _backend(tmp_path, itertools.repeat(0.5), clock_step=0.15)
    result = backend.measure(cases[0], load_grid(tmp_path / "b.yaml"))
    # the clock reads 0.15 s after the first batch of 20, 0.30 s after the second: stop at 40
    assert result.energy_runs == 40
    assert result.energy_j == pytest.approx(2.5e-3)


def test_each_kind_runs_its_pytorch_kernel(tmp_path: Path) -> None:
    backend, torch, _nvml, cases = _backend(tmp_path, itertools.repeat(1.0))
    names = []
    for case in cases:
        torch.kernels.clear()
        run = backend.kernel(case)
        if case.kind.value in ("embedding", "cross_entropy"):  # ids over the vocabulary, once
            assert torch.kernels == [("randint", ((16,),), {"low": 0, "high": 1000})]
            torch.kernels.clear()
        run()
        ((name, shapes, kwargs),) = torch.kernels
        names.append(name)
        if case.kind.value == "gemm":
            assert shapes == ((64, 512), (512, 256))  # B stored [n, k], transposed view
            tf32 = torch.backends.cuda.matmul.allow_tf32
            assert tf32 is (case.dtype.value == "tf32")
        if case.kind.value == "copy":
            assert shapes == ((8, 128), (8, 128))  # into a second tensor of the same shape
        if case.kind.value == "embedding":
            assert shapes == ((16,), (1000, 128))  # the ids, then the table
        if case.kind.value == "cross_entropy":
            assert shapes == ((16, 1000), (16,))  # the logits, then the targets
        if case.kind.value == "attention_prefill":
            assert kwargs == {"is_causal": True, "enable_gqa": True}
        if case.kind.value == "attention_decode":
            assert kwargs == {"is_causal": False, "enable_gqa": False}
    assert names == [
        "matmul",
        "matmul",
        "softmax",
        "layer_norm",
        "rms_norm",
        "mul",
        "gelu",
        "copy_",
        "embedding",
        "cross_entropy",
        "scaled_dot_product_attention",
        "scaled_dot_product_attention",
    ]


_SMALL_PREFILL = (
    "  - kind: attention_prefill\n"
    "    sizes: {batch: [1], heads: [8], kv_heads: [2], seq: [256], head_dim: [64]}\n"
)


def _cases_on_a_fake(tmp_path: Path, ops: str) -> tuple[FakeTorch, TorchBackend, list[Case]]:
    """A fake device's torch and backend, and the cases of a grid of ``ops`` (YAML entries)."""
    path = tmp_path / "grid.yaml"
    path.write_text(f"name: g\nops:\n{ops}")
    torch = FakeTorch(itertools.repeat(1.0))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    return torch, backend, expand(load_grid(path))


def test_backward_cases_run_the_forward_once_then_time_its_gradients(tmp_path: Path) -> None:
    torch, backend, (layernorm, attention) = _cases_on_a_fake(
        tmp_path,
        "  - {kind: layernorm, sizes: {rows: [8], length: [128]}, backward: [true]}\n"
        + _SMALL_PREFILL
        + "    backward: [true]\n",
    )
    assert layernorm.label == "layernorm bf16 rows=8 length=128 backward"
    run = backend.kernel(layernorm)
    assert [k[0] for k in torch.kernels] == ["layer_norm"]  # the forward, once, untimed
    run()
    run()
    name, shapes, kwargs = torch.kernels[-1]
    # d(output) with respect to x, gamma and beta, the incoming gradient shaped as the output
    assert (name, kwargs) == ("autograd.grad", {"retain_graph": True})
    assert shapes == ((8, 128), (8, 128), (128,), (128,), (8, 128))
    assert [k[0] for k in torch.kernels].count("layer_norm") == 1
    torch.kernels.clear()
    backend.kernel(attention)()
    assert [k[0] for k in torch.kernels] == ["scaled_dot_product_attention", "autograd.grad"]
    q, k = (1, 8, 256, 64), (1, 2, 256, 64)
    assert torch.kernels[-1][1] == (q, q, k, k, q)


def test_clock_lock_and_refusal(tmp_path: Path) -> None:
    backend, _torch, nvml, _cases = _backend(tmp_path, itertools.repeat(1.0))
    assert backend.lock_sm_clock(1500.0) and nvml.locked == (1500, 1500)
    backend.unlock_clocks()
    assert nvml.reset == 1
    refused, _torch, nvml, _cases = _backend(tmp_path, itertools.repeat(1.0), allow_lock=False)
    assert refused.lock_sm_clock(1500.0) is False and nvml.locked is None


def test_device_info(tmp_path: Path) -> None:
    backend, _torch, _nvml, _cases = _backend(tmp_path, itertools.repeat(1.0))
    info = backend.device_info()
    assert (info.gpu_name, info.driver_version, info.cuda_version) == (
        "Fake H200",
        "580.159.04",
        "13.0",
    )
    assert (info.l2_bytes, info.sm_count, info.torch_version) == (60 * 2**20, 132, "2.11.0")


def test_no_cuda_device_is_a_clear_error() -> None:
    torch = FakeTorch(itertools.repeat(1.0), cuda=False)
    nvml = FakeNVML(torch, mj_per_launch=1.0, allow_lock=True)
    with pytest.raises(ConfigError, match="no CUDA device is visible"):
        TorchBackend(torch=torch, nvml=nvml)


@pytest.mark.parametrize(
    ("trans", "shapes", "called"),
    [
        # groups along M: A [10, 64] by B [4, 32, 64] transposed
        ("NT", [(10, 64), (4, 32, 64), (10, 32)], ((10, 64), (4, 64, 32))),
        # the weight gradient: X [10, 64] transposed by dY [10, 32] into [4, 64, 32]
        ("TN", [(10, 64), (10, 32), (4, 64, 32)], ((64, 10), (10, 32))),
    ],
)
def test_grouped_gemm_runs_torch_grouped_mm_with_the_groups_end_rows(
    tmp_path: Path,
    trans: str,
    shapes: list[tuple[int, ...]],
    called: tuple[tuple[int, ...], ...],
) -> None:
    """10 rows over the first 3 of 4 experts (4, 3, 3, 0): one ``torch._grouped_mm`` call with
    the int32 end rows 4, 7, 10, 10 as offsets (along M for NT, along K for TN)."""
    path = tmp_path / "g.yaml"
    path.write_text(
        "name: g\nops:\n  - {kind: grouped_gemm, sizes: {groups: [4], active: [3], rows: [10], "
        f"n: [32], k: [64]}}, trans: [{trans}]}}\n"
    )
    torch = FakeTorch(itertools.repeat(1.0))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    (case,) = expand(load_grid(path))
    assert [t.shape for t in case.op().tensors] == shapes
    backend.kernel(case)()
    ((name, logged, kwargs),) = torch.kernels
    assert (name, logged) == ("_grouped_mm", called)
    assert kwargs["offs"].values == [4, 7, 10, 10] and kwargs["offs"].dtype == "i32"
    del torch._grouped_mm  # PyTorch before 2.8
    with pytest.raises(RuntimeError, match=r"needs torch._grouped_mm \(PyTorch >= 2.8"):
        backend.kernel(case)


def test_fp8_gemm_runs_torch_scaled_mm_on_a_column_major_b(tmp_path: Path) -> None:
    """fp8_e4m3, trans NT: A [48, 64] and B stored [32, 64], drawn in bf16 and converted, then
    ``torch._scaled_mm(A, B^T)`` with unit fp32 scales and a bf16 output; the op says so too.
    A PyTorch without ``_scaled_mm`` fails the case with the reason."""
    path = tmp_path / "f.yaml"
    path.write_text(
        "name: f\nops:\n  - {kind: gemm, sizes: {m: [48], n: [32], k: [64]}, trans: [NT], "
        "dtypes: [fp8_e4m3]}\n"
    )
    torch = FakeTorch(itertools.repeat(1.0))
    backend = TorchBackend(torch=torch, nvml=FakeNVML(torch, mj_per_launch=1.0, allow_lock=True))
    (case,) = expand(load_grid(path))
    assert case.label == "gemm fp8_e4m3 m=48 n=32 k=64 NT"
    assert [t.dtype.value for t in case.op().tensors] == ["fp8_e4m3", "fp8_e4m3", "bf16"]
    backend.kernel(case)()
    ((name, shapes, kwargs),) = torch.kernels
    assert (name, shapes) == ("_scaled_mm", ((48, 64), (64, 32)))
    assert kwargs["out_dtype"] == "bf16"
    assert kwargs["scale_a"].dtype == kwargs["scale_b"].dtype == "fp32"
    del torch._scaled_mm
    with pytest.raises(RuntimeError, match=r"fp8_e4m3 needs torch._scaled_mm"):
        backend.kernel(case)


def test_flash_cases_run_sdpa_inside_the_flash_backend(tmp_path: Path) -> None:
    """A ``flash`` attention case calls SDPA inside ``sdpa_kernel(FLASH_ATTENTION)``; its
    default twin calls it bare."""
    torch, backend, (default, flash) = _cases_on_a_fake(
        tmp_path, _SMALL_PREFILL + "    sdpa_backends: [default, flash]\n"
    )
    assert (default.sdpa_backend, flash.sdpa_backend) == ("default", "flash")
    backend.kernel(default)()
    assert torch.sdpa_backends == []
    backend.kernel(flash)()
    assert torch.sdpa_backends == ["flash_attention"]
    name, _, kwargs = torch.kernels[-1]
    assert (name, kwargs) == (
        "scaled_dot_product_attention",
        {"is_causal": True, "enable_gqa": True},
    )


def test_flush_idle_waits_after_each_flush(tmp_path: Path) -> None:
    """``flush_idle_us: 50``: after each flush a spin kernel of 50 µs at the GPU's highest SM
    clock (the fake's 1,980 MHz: 99,000 cycles); none without it."""
    backend, torch, _nvml, cases = _backend(tmp_path, itertools.repeat(0.5))
    idle = tmp_path / "idle.yaml"
    idle.write_text(GRID.replace("repeats: 5\n", "repeats: 5\nflush_idle_us: 50\n"))
    backend.measure(cases[0], load_grid(idle))
    assert torch.calls["flush"] == 5 and torch.sleep_cycles == [99000] * 5
    backend.measure(cases[0], load_grid(tmp_path / "b.yaml"))
    assert torch.calls["flush"] == 10 and torch.calls["sleep"] == 5


def test_an_embedding_backward_case_times_the_tables_gradient(tmp_path: Path) -> None:
    """The gather run once, untimed; each timed run is the table's gradient (backward_of)."""
    torch, backend, (case,) = _cases_on_a_fake(
        tmp_path,
        "  - {kind: embedding, sizes: {tokens: [16], hidden: [128], vocab: [1000]},"
        " backward: [true]}\n",
    )
    assert case.label == "embedding bf16 tokens=16 hidden=128 vocab=1000 backward"
    run = backend.kernel(case)
    run()
    name, shapes, kwargs = torch.kernels[-1]
    assert (name, kwargs) == ("autograd.grad", {"retain_graph": True})
    # the output, then the one leaf: the table (the fake's gather keeps the ids' shape)
    assert len(shapes) == 3 and shapes[1] == (1000, 128)
    op = case.op(flush_bytes=1000)
    assert [t.role.value for t in op.tensors] == ["input", "grad", "output"]
    assert dict(op.attrs) == {"l2_dirty_bytes": 1000}
