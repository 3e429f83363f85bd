"""extended_roofline: a hand-derived small GEMM, physical properties, fallbacks and errors."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import strategies as st

from opmodel import (
    DType,
    Engine,
    InvalidKernelError,
    LocalOp,
    TensorSpec,
)
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.extended_roofline import (
    Bottleneck,
    ExtendedRooflineDiagnostics,
    ExtendedRooflineModel,
    StageLimiter,
)
from opmodel.models.extended_roofline.rates import gpu_rates

from ..conftest import gemm as plain_gemm

MODEL = ExtendedRooflineModel()


# The timeline tests below fix the kernel (CUTLASS's default 128x128x32 tile, the documented
# default of every omitted attr); without kernel attrs the model uses automatic selection,
# which test_omitted_kernel_attrs_use_selection covers.
FIXED_KERNEL = {"cta_tile_m": 128, "cta_tile_n": 128}


def gemm(m: int, n: int, k: int, dtype: DType = DType.BF16, **attrs: object) -> LocalOp:
    """A GEMM op with the fixed default kernel unless ``attrs`` override it."""
    return plain_gemm(m, n, k, dtype, **{**FIXED_KERNEL, **attrs})


def _diag(op: LocalOp, hw: HardwareSpec) -> ExtendedRooflineDiagnostics:
    diagnostics = MODEL.predict(op, hw).diagnostics
    assert isinstance(diagnostics, ExtendedRooflineDiagnostics)
    return diagnostics


def test_one_cta_gemm_by_hand(gpu: HardwareSpec) -> None:
    """C[128,128] = A[128,64] @ B[64,128] in bf16 on gpu_generic: one CTA, two K stages."""
    profile = MODEL.predict(gemm(128, 128, 64), gpu)
    d = profile.diagnostics
    assert isinstance(d, ExtendedRooflineDiagnostics)
    assert d.grid.ctas == 1 and d.grid.k_iterations == 2 and d.full_wave is None
    wave = d.tail_wave
    assert wave is not None
    # math: 2*128*128*32 FLOP per stage at 307.2e12 / (100 SMs * 1.5e9) = 2048 FLOP/cycle
    assert wave.math_stage_cycles == pytest.approx(1_048_576 / 2048)
    # smem: fill 16 KiB + fragment reads 2x8 KiB (A) + 2x8 KiB (B) at 128 B/cycle
    assert wave.smem_stage_cycles == pytest.approx(49152 / 128)
    # L2: 32 KiB of operands over 2 CTA-stages at 7.68e12 / 1.5e9 = 5120 B/cycle
    assert wave.l2_stage_cycles == pytest.approx(16384 / 5120)
    # DRAM: everything fits L2, the same 32 KiB once, at 1.6e12 / 1.5e9 B/cycle
    assert wave.dram_stage_cycles == pytest.approx(16384 / (1.6e12 / 1.5e9))
    # single wave: loads wait for DRAM latency, 4e-7 s * 1.5e9 = 600 cycles, over 2 stages in flight
    assert wave.latency_stage_cycles == pytest.approx(300)
    assert wave.stage_limiter is StageLimiter.MATH
    assert wave.prologue_cycles == pytest.approx(600 + 2 * wave.dram_stage_cycles)  # cold start
    assert wave.mainloop_cycles == pytest.approx(2 * 512)
    assert wave.drain_cycles == 32
    # epilogue: 32 KiB of C at the slower of L2 and DRAM, plus the L2 latency (200 cycles)
    assert wave.epilogue_cycles == pytest.approx(32768 / (1.6e12 / 1.5e9) + 1.333e-7 * 1.5e9)
    total = wave.total_cycles + 2000  # fixed device overhead cycles of gpu_generic
    assert d.total_cycles == pytest.approx(total)
    assert profile.latency_s == pytest.approx(total / 1.5e9)
    assert profile.engine is Engine.TENSOR
    assert profile.flops == 2 * 128 * 128 * 64
    # one CTA on a 100-SM device wastes 99 % of it; then the fixed overhead (2000 cycles)
    assert d.primary_bottleneck is Bottleneck.INSUFFICIENT_WAVES
    assert d.secondary_bottleneck is Bottleneck.FIXED_OVERHEAD


def test_large_gemm_is_compute_bound_near_peak(a100: HardwareSpec) -> None:
    profile = MODEL.predict(gemm(8192, 8192, 8192), a100)
    d = profile.diagnostics
    assert isinstance(d, ExtendedRooflineDiagnostics)
    assert d.primary_bottleneck is Bottleneck.COMPUTE
    achieved = profile.flops / profile.latency_s
    # near the tensor peak at the clock it ran: the 250 W board's power limit holds a busy
    # GEMM near 1056 MHz (a100_40gb_pcie_sustained.yaml), 312 TFLOP/s is the 1410 MHz peak
    peak = 312e12 * d.sm_clock_hz / 1.41e9
    assert d.sm_clock_hz < 1.1e9
    assert 0.8 * peak < achieved <= peak
    assert set(profile.traffic) == {"hbm", "l2", "smem"}
    assert d.utilization.math_fraction > 0.8


def test_power_limited_clock_slows_busy_tensor_gemms_only() -> None:
    """A100 SXM ships a 1170 MHz power-limited clock: a large GEMM (tensor activity ~1) runs at
    1170 MHz x u^(-1/3) in 15 MHz bins, slower than without the limit by about the clock ratio;
    an FP32 SIMT GEMM (no tensor work) keeps the 1410 MHz boost and its latency."""
    limited = load_hardware("a100_80gb_sxm")
    free = dataclasses.replace(
        limited, compute=dataclasses.replace(limited.compute, power_limited_clock_hz=None)
    )
    big = plain_gemm(8192, 8192, 8192)
    slow, fast = MODEL.predict(big, limited), MODEL.predict(big, free)
    d_slow, d_fast = slow.diagnostics, fast.diagnostics
    assert isinstance(d_slow, ExtendedRooflineDiagnostics)
    assert isinstance(d_fast, ExtendedRooflineDiagnostics)
    assert d_fast.sm_clock_hz == 1.41e9
    activity = fast.flops / (312e12 * fast.latency_s)  # ~1: no padding on 8192^3
    assert d_slow.sm_clock_hz == pytest.approx(15e6 * ((1.17e9 * activity ** (-1 / 3)) // 15e6))
    assert slow.latency_s / fast.latency_s == pytest.approx(1.41e9 / d_slow.sm_clock_hz, rel=0.02)
    simt = plain_gemm(1024, 1024, 1024, DType.FP32)
    assert MODEL.predict(simt, limited).latency_s == MODEL.predict(simt, free).latency_s


def test_fp32_gemm_runs_simt(a100: HardwareSpec) -> None:
    profile = MODEL.predict(gemm(2048, 2048, 2048, DType.FP32), a100)
    assert profile.engine is Engine.VECTOR
    assert profile.implementation == "extended_roofline/simt/attrs"
    d = profile.diagnostics
    assert isinstance(d, ExtendedRooflineDiagnostics)
    assert (d.kernel.cta_tile_k, d.kernel.mma_m) == (8, 1)
    assert profile.latency_s >= 2 * 2048**3 / 19.5e12


def test_non_gemm_and_tpu_use_the_roofline_estimate(a100: HardwareSpec) -> None:
    op = LocalOp(
        name="s",
        kind="softmax",
        phase="prefill",
        tensors=(TensorSpec("input", (64, 64), "bf16"), TensorSpec("output", (64, 64), "bf16")),
    )
    assert MODEL.predict(op, a100).implementation == "extended_roofline/roofline-vector"
    tpu = load_hardware("tpu_generic")
    assert (
        MODEL.predict(gemm(256, 256, 256), tpu).implementation
        == "extended_roofline/roofline-tensor"
    )


def test_registered_by_name() -> None:
    assert isinstance(get_model("extended_roofline"), ExtendedRooflineModel)


@pytest.fixture(scope="module")
def a10() -> HardwareSpec:
    return load_hardware("a10")


def test_illegal_kernel_is_a_clear_error(a10: HardwareSpec) -> None:
    with pytest.raises(
        InvalidKernelError, match="more than max_shared_memory_per_cta_bytes=101376"
    ):
        MODEL.predict(gemm(4096, 4096, 4096, pipeline_stages=5, cta_tile_k=64, warp_tile_k=64), a10)


_dims = st.integers(1, 6000)


def test_omitted_kernel_attrs_use_selection(a100: HardwareSpec) -> None:
    """No kernel attrs: the catalogue kernel that selection picks, named in the result."""
    profile = MODEL.predict(plain_gemm(4096, 4096, 4096), a100)
    d = profile.diagnostics
    assert isinstance(d, ExtendedRooflineDiagnostics)
    assert d.kernel.name.startswith("sm80_tensorop_16bit_")
    assert profile.implementation == f"extended_roofline/mma_sync/{d.kernel.name}"
    effective = get_model("effective_roofline").predict(plain_gemm(4096, 4096, 4096), a100)
    assert effective.diagnostics.kernel == d.kernel  # both models run the same kernel


def test_profile_memoised_per_op_and_kernel_built_once_per_attrs(gpu: HardwareSpec) -> None:
    """A repeat predict returns the memoised profile; ops of other shapes with the same kernel
    attrs share one built kernel (and its occupancy); a new spec builds its own."""
    from opmodel.models.gemm import GemmProblem
    from opmodel.models.gemm.choice import attrs_kernel_setup

    first, second = gemm(512, 512, 512), gemm(1024, 256, 2048)
    assert MODEL.predict(first, gpu) is MODEL.predict(first, gpu)
    built = attrs_kernel_setup(first, GemmProblem.from_op(first), gpu)
    assert attrs_kernel_setup(second, GemmProblem.from_op(second), gpu) is built
    assert _diag(second, gpu).kernel is built.kernel
    other = dataclasses.replace(gpu, name="gpu_generic_copy")
    assert attrs_kernel_setup(first, GemmProblem.from_op(first), other) is not built


def test_lazy_diagnostics_match_their_definitions(gpu: HardwareSpec) -> None:
    """Utilisation, overlaps and bottlenecks are computed on access from the waves: check them
    against their definitions on a kernel with full and tail waves."""
    d = _diag(gemm(4096, 4096, 1024), gpu)
    full, tail = d.full_wave, d.tail_wave
    assert full is not None and tail is not None
    k, waves = d.grid.k_iterations, d.grid.full_waves
    math = k * (waves * full.math_stage_cycles + tail.math_stage_cycles)
    assert d.utilization.math_fraction == pytest.approx(math / d.total_cycles)
    assert d.total_cycles == pytest.approx(
        waves * full.total_cycles
        + tail.total_cycles
        - d.overlapped_cycles
        + d.fixed_overhead_cycles
    )
    if d.kernel.producer_warps:  # warp-specialised: later waves start under an epilogue
        hidden = (waves - 1) * min(full.prologue_cycles, full.epilogue_cycles)
        hidden += min(tail.prologue_cycles, full.epilogue_cycles)
        assert d.overlapped_cycles == pytest.approx(hidden) and hidden > 0
    else:
        assert d.overlapped_cycles == 0.0
    hidden = min(full.math_stage_cycles, full.dram_stage_cycles) / full.dram_stage_cycles
    assert d.overlaps.math_dram_fraction == pytest.approx(hidden)
    cycles = d.bottleneck_cycles
    ranked = sorted(cycles, key=cycles.__getitem__, reverse=True)
    assert (d.primary_bottleneck, d.secondary_bottleneck) == (ranked[0], ranked[1])
    serialised = MODEL.predict(gemm(4096, 4096, 1024), gpu).to_dict()["diagnostics"]
    assert serialised["primary_bottleneck"] == d.primary_bottleneck.value
    assert set(serialised["utilization"]) == {
        "math_fraction",
        "smem_fraction",
        "l2_fraction",
        "dram_fraction",
    }
    assert "rates" not in serialised


def test_a_flushs_dirty_lines_take_dram_bandwidth() -> None:
    """A GEMV after a write-flush moves its weights and the evicted dirty lines over DRAM; a
    square GEMM hides them behind its math."""
    h200 = load_hardware("h200_sxm").at_clock(1.98e9)
    model = get_model("extended_roofline")
    flush = {"l2_dirty_bytes": 2 * 62914560}
    gemv, gemv_flushed = (model.predict(gemm(16, 14336, 14336, **a), h200) for a in ({}, flush))
    assert gemv_flushed.latency_s > gemv.latency_s
    big, big_flushed = (model.predict(gemm(8192, 8192, 8192, **a), h200) for a in ({}, flush))
    assert big_flushed.latency_s == big.latency_s


def test_warp_specialised_waves_overlap_on_hopper() -> None:
    """16384 x 16384 x 128 bf16 on the H200 (an sm_90 kernel with producer warps, many waves):
    every wave after the first hides min(prologue, epilogue) of the full wave (the kernel
    automatic selection picks, not the fixed mma.sync default)."""
    d = _diag(plain_gemm(16384, 16384, 128), load_hardware("h200_sxm"))
    full, tail = d.full_wave, d.tail_wave
    assert d.kernel.producer_warps > 0 and full is not None
    hidden = (d.grid.full_waves - 1) * min(full.prologue_cycles, full.epilogue_cycles)
    if tail is not None:
        hidden += min(tail.prologue_cycles, full.epilogue_cycles)
    assert hidden > 0 and d.overlapped_cycles == pytest.approx(hidden, rel=1e-12)
    summed = d.grid.full_waves * full.total_cycles + (tail.total_cycles if tail else 0.0)
    assert d.total_cycles == pytest.approx(summed - hidden + d.fixed_overhead_cycles)


def test_mma_sync_kernels_run_at_the_sm90_derated_tensor_rate() -> None:
    """On sm_90 a warp-level mma.sync kernel reaches ``mma_sync_tensor_fraction`` (0.66) of the
    tensor rate, as in effective_roofline's device rates; on the A100 (fraction 1) nothing
    changes."""
    h100, a100 = load_hardware("h100_sxm"), load_hardware("a100_80gb_sxm")
    for hw, fraction in ((h100, 0.66), (a100, 1.0)):
        sm = hw.compute.sm
        assert sm is not None and sm.mma_sync_tensor_fraction == fraction
        full = gpu_rates(hw, sm, DType.BF16, on_tensor=True)
        warp = gpu_rates(hw, sm, DType.BF16, on_tensor=True, mma_sync=True)
        assert warp.math_flops_per_cycle_per_sm == pytest.approx(
            fraction * full.math_flops_per_cycle_per_sm
        )
        simt = gpu_rates(hw, sm, DType.FP32, on_tensor=False, mma_sync=True)
        assert simt == gpu_rates(hw, sm, DType.FP32, on_tensor=False)  # vector engine: no MMA
