"""effective_roofline: hand-derived GPU and TPU examples, selection, physical properties."""

from __future__ import annotations

import dataclasses
import math

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import (
    DType,
    Engine,
)
from opmodel.hardware import HardwareSpec, load_hardware, shipped_hardware_names
from opmodel.hardware.clocking import power_limited
from opmodel.models import get_model
from opmodel.models.effective_roofline import (
    EffectiveRooflineDiagnostics,
    EffectiveRooflineModel,
    Resource,
)
from opmodel.models.gemm import GemmProblem
from tests.hypothesis_budget import examples

from ..conftest import gemm

MODEL = EffectiveRooflineModel()


KERNEL_128 = {"cta_tile_m": 128, "cta_tile_n": 128, "cta_tile_k": 32}


GPUS = [load_hardware(n) for n in shipped_hardware_names() if load_hardware(n).compute.sm]


def _diag(profile: object) -> EffectiveRooflineDiagnostics:
    d = getattr(profile, "diagnostics", None)
    assert isinstance(d, EffectiveRooflineDiagnostics)
    return d


def test_one_cta_gemm_by_hand(gpu: HardwareSpec) -> None:
    """C[128,128] = A[128,64] @ B[64,128] bf16 on gpu_generic with a 128x128x32 kernel.

    One CTA of 4 warps (64x64 warp tiles), 2 K stages, a 2-stage window.
    Tensor: 2*128*128*32 / 4 = 262,144 FLOP per warp per stage; one warp per SMSP; in flight
      2*64*64*16 = 131,072 FLOP / 32 cycles >> 512 FLOP/cycle/SMSP peak -> 512 cycles.
    SMEM: fill 16 KiB + reads 2*8 KiB + 2*8 KiB = 48 KiB at 128 B/cycle -> 384 cycles.
    L2 and DRAM: 16 KiB per stage; cold wave, every load waits 600 cycles of DRAM latency;
      2 stages in flight = 32 KiB / 600 = 54.6 B/cycle unloaded, q = 54.6 / peak of each level
      (5120 and 1066.7 B/cycle) and the loaded rate 54.6 x 2 / ((1 + q) + sqrt(1 + q^2)):
      54.3 from L2, 53.2 from DRAM. The slower (DRAM) sets the memory stage, 16 KiB / 53.2 =
      308 cycles, so the first window takes 616 cycles and there is no memory body. Body =
      2 * 512. Epilogue: 32 KiB of C, posted: max(200 cycles of L2 latency, 32 KiB / 5120,
      32 KiB / 1066.7) = 200.
    Total = 616 + 1024 + 200 + 2000 fixed = 3840 cycles at 1.5 GHz.
    """
    profile = MODEL.predict(gemm(128, 128, 64, **KERNEL_128), gpu)
    d = _diag(profile)
    wave = d.phases.first_wave
    assert d.grid.ctas == 1 and d.phases.steady_wave is None and d.phases.tail_wave is None
    assert (wave.busiest_smsp_warps, wave.active_smsps, wave.window_stages) == (1, 4, 2)
    assert wave.tensor_stage_cycles == pytest.approx(512)
    assert wave.smem_stage_cycles == pytest.approx(384)
    unloaded = 32768 / 600

    def loaded(peak: float) -> float:
        q = unloaded / peak
        return unloaded * 2 / ((1 + q) + math.sqrt(1 + q * q))

    assert wave.rates.l2_bytes_per_cycle == pytest.approx(loaded(5120))
    assert wave.rates.dram_bytes_per_cycle == pytest.approx(loaded(1.6e12 / 1.5e9))
    assert wave.rates.dram_bytes_per_cycle == pytest.approx(53.22, abs=0.01)
    prologue = 2 * 16384 / loaded(1.6e12 / 1.5e9)
    assert wave.prologue_cycles == pytest.approx(prologue)
    assert prologue == pytest.approx(615.7, abs=0.1)
    assert wave.body_cycles == pytest.approx(1024)
    assert wave.epilogue_cycles == pytest.approx(1.333e-7 * 1.5e9)
    assert d.total_cycles == pytest.approx(prologue + 1024 + 199.95 + 2000)
    assert profile.latency_s == pytest.approx(d.total_cycles / 1.5e9)
    assert d.selection is None and d.kernel.name == "attrs"
    assert d.limiting_resources == (Resource.FIXED_OVERHEAD,)


def test_skinny_gemm_is_weight_read_bound(a100: HardwareSpec) -> None:
    """m=1: reading B (128 MiB) dominates; many CTAs keep enough loads in flight for the peak,
    so the kernel ends within 15 % of B's bytes over the DRAM peak (plus fixed overhead)."""
    profile = MODEL.predict(gemm(1, 8192, 8192), a100)
    d = _diag(profile)
    assert d.limiting_resources[0] is Resource.DRAM
    floor_s = 8192 * 8192 * 2 / a100.hbm.bandwidth_bytes_per_s
    assert floor_s < profile.latency_s < 1.15 * floor_s + 2000 / a100.compute.clock_hz


def test_small_skinny_gemm_is_latency_dominated(a100: HardwareSpec) -> None:
    """m=1, n=k=1024: 2 MiB of B would take 1.35 us at the DRAM peak; the cold first window,
    the epilogue and the fixed overhead make the kernel more than twice that (the gap of
    roofline tools on skinny GEMMs), and a skinny (16-row) kernel is the one chosen."""
    profile = MODEL.predict(gemm(1, 1024, 1024), a100)
    d = _diag(profile)
    assert d.kernel.cta_tile_m == 16
    assert profile.latency_s > 2 * 1024 * 1024 * 2 / a100.hbm.bandwidth_bytes_per_s
    c = d.resource_cycles
    assert c.prologue_cycles + c.epilogue_cycles + c.fixed_overhead_cycles > c.dram_cycles


_dims = st.integers(1, 6000)


@settings(max_examples=examples(60), deadline=None)
@given(m=_dims, n=_dims, k=_dims, index=st.integers(0, len(GPUS) - 1))
def test_rates_never_exceed_peaks_and_work_is_conserved(m: int, n: int, k: int, index: int) -> None:
    hw = GPUS[index]
    op = gemm(m, n, k)
    profile = MODEL.predict(op, hw)
    d = _diag(profile)
    g = d.grid
    assert g.full_waves * g.ctas_per_wave + g.tail_ctas == g.ctas
    assert d.issued_flops >= profile.flops and 0 < d.tile_efficiency <= 1
    waves = [d.phases.first_wave, d.phases.steady_wave, d.phases.tail_wave]
    for wave in (w for w in waves if w is not None):
        r = wave.rates
        assert 0 < r.tensor_flops_per_cycle_per_smsp <= r.tensor_raw_flops_per_cycle_per_smsp
        assert 0 < r.smem_bytes_per_cycle_per_sm <= r.smem_raw_bytes_per_cycle_per_sm
        assert 0 < r.l2_bytes_per_cycle <= r.l2_raw_bytes_per_cycle
        assert 0 < r.dram_bytes_per_cycle <= r.dram_raw_bytes_per_cycle
        assert sum(c.sms * c.ctas_per_sm for c in wave.classes) == wave.ctas
    ran = power_limited(hw, d.sm_clock_hz)  # the clock the kernel ran at, and its voltage
    assert profile.energy.tensor_j == pytest.approx(
        d.issued_flops * ran.compute.energy_per_flop(tensor=True, dtype=DType.BF16)
    )


def test_engine_and_registry() -> None:
    assert isinstance(get_model("effective_roofline"), EffectiveRooflineModel)
    profile = MODEL.predict(gemm(64, 64, 64, DType.FP32), load_hardware("a100_40gb_pcie"))
    assert profile.engine is Engine.VECTOR
    assert profile.implementation.startswith("effective_roofline/simt/")


@settings(max_examples=examples(40), deadline=None)
@given(
    m=_dims,
    n=_dims,
    k=_dims,
    index=st.integers(0, len(GPUS) - 1),
    dirty=st.sampled_from([0, 1 << 20, 1 << 28]),
)
def test_lean_cycles_equal_the_typed_phases(m: int, n: int, k: int, index: int, dirty: int) -> None:
    """The ranking path (kernel_cycles) and the explained path (typed waves) agree, also
    with another kernel's dirty lines to write back."""
    d = _diag(MODEL.predict(gemm(m, n, k, l2_dirty_bytes=dirty), GPUS[index]))
    assert d.phases.total_cycles == pytest.approx(d.total_cycles, rel=1e-12)


def test_a_flushs_dirty_lines_slow_a_gemv_not_a_compute_bound_gemm() -> None:
    """H200 after a 120 MiB write-flush: the L2 holds its 30 MiB shared capacity of the
    flush's lines and a kernel's DRAM traffic evicts ``1 - exp(-x)`` of them. A 16 x 14336 x
    14336 GEMV (411 MB of weights) evicts them all and is DRAM-bound: it takes longer, by at
    most their transfer at the peak. A 8192^3 GEMM hides the writes behind its math."""
    h200 = load_hardware("h200_sxm").at_clock(1.98e9)
    shared = int(h200.level("l2").shared_capacity_bytes)
    flush = 2 * 62914560
    peak = h200.hbm.bandwidth_bytes_per_s
    gemv, gemv_flushed = (
        MODEL.predict(gemm(16, 14336, 14336, **attrs), h200)
        for attrs in ({}, {"l2_dirty_bytes": flush})
    )
    t = _diag(gemv_flushed).traffic
    x = (t.dram_read_bytes + t.dram_write_bytes) / shared
    assert t.dirty_write_back_bytes == round(shared * -math.expm1(-x))
    assert t.dirty_write_back_bytes == pytest.approx(shared, rel=1e-5)  # x is about 13
    assert 0 < gemv_flushed.latency_s - gemv.latency_s <= shared / peak * (1 + 1e-9)
    hbm = gemv_flushed.traffic["hbm"]
    assert hbm.write_bytes == gemv.traffic["hbm"].write_bytes + t.dirty_write_back_bytes
    big, big_flushed = (
        MODEL.predict(gemm(8192, 8192, 8192, **attrs), h200)
        for attrs in ({}, {"l2_dirty_bytes": flush})
    )
    assert big_flushed.latency_s == big.latency_s
    assert big_flushed.energy_j > big.energy_j  # the written-back lines cost DRAM energy


def test_power_limited_clock_slows_compute_bound_gemms_only() -> None:
    """A100 SXM with a 1065 MHz power-limited clock: a 4096 x 8192 x 8192 GEMM keeps the tensor
    cores busy (activity u near 1) and runs at f = 1065 MHz x u^(-1/3), in 15 MHz bins, never
    faster than at 1410 MHz; a GEMV (activity near 0) stays at 1410 MHz and is unchanged."""
    shipped = load_hardware("a100_80gb_sxm")
    base, limited = (
        dataclasses.replace(
            shipped, compute=dataclasses.replace(shipped.compute, power_limited_clock_hz=clock)
        )
        for clock in (None, 1.065e9)
    )
    model = get_model("effective_roofline")
    big = gemm(4096, 8192, 8192)
    fast, slow = model.predict(big, base), model.predict(big, limited)
    d = _diag(slow)
    expected = 1.065e9 * d.tensor_activity ** (-1 / 3)
    assert d.sm_clock_hz == pytest.approx(15e6 * (expected // 15e6))
    assert 1.065e9 <= d.sm_clock_hz < 1.41e9
    assert _diag(fast).sm_clock_hz == 1.41e9
    assert slow.latency_s > fast.latency_s
    gemv = gemm(1, 8192, 8192)
    assert model.predict(gemv, limited).latency_s == model.predict(gemv, base).latency_s
    assert _diag(model.predict(gemv, limited)).sm_clock_hz == 1.41e9


def test_power_limited_clock_keeps_the_kernel_selected_at_the_config_clock() -> None:
    """A100 SXM ships a 1305 MHz power-limited clock: a large bf16 GEMM with automatic selection
    runs below 1410 MHz, with the kernel selection picked at 1410 MHz (the chosen name in the
    diagnostics is the kernel evaluated), and is slower than the same kernel at 1410 MHz."""
    limited = load_hardware("a100_80gb_sxm")
    free = dataclasses.replace(
        limited, compute=dataclasses.replace(limited.compute, power_limited_clock_hz=None)
    )
    op = gemm(8192, 8192, 8192)
    slow, fast = _diag(MODEL.predict(op, limited)), _diag(MODEL.predict(op, free))
    assert slow.sm_clock_hz < 1.41e9 == fast.sm_clock_hz
    assert slow.selection is not None and fast.selection is not None
    assert slow.kernel == fast.kernel
    assert slow.selection.chosen.name == slow.kernel.name == fast.selection.chosen.name
    assert slow.total_cycles / slow.sm_clock_hz > fast.total_cycles / fast.sm_clock_hz


def test_memos_keep_dtypes_apart(a100: HardwareSpec) -> None:
    """The evaluation and selection memos key on ``GemmProblem.sizes`` plus the dtypes: the
    same sizes in another dtype are evaluated afresh, and a repeat of a shape in a new op
    object reuses the memoised evaluation."""
    problem = GemmProblem.from_op(gemm(512, 768, 1024, DType.FP16))
    assert problem.sizes == (1, 512, 768, 1024, False, False, False, True, 0, (0, 0))
    for attrs in ({}, {"cta_tile_m": 128, "cta_tile_n": 128}):  # selection, explicit kernel
        bf16 = MODEL.predict(gemm(512, 768, 1024, DType.BF16, **attrs), a100)
        fp32 = MODEL.predict(gemm(512, 768, 1024, DType.FP32, **attrs), a100)
        again = MODEL.predict(gemm(512, 768, 1024, DType.BF16, **attrs), a100)
        assert fp32.latency_s > bf16.latency_s  # tf32 or SIMT against the bf16 tensor rate
        assert again.diagnostics.evaluation is bf16.diagnostics.evaluation


def test_warp_specialised_waves_hide_the_next_prologue_under_the_epilogue() -> None:
    """A 16384 x 16384 x 128 bf16 GEMM on the H200 runs an sm_90 kernel with producer warps in
    many waves: from the second wave on, each wave's prologue runs under the previous wave's
    epilogue, min(prologue, epilogue) cycles per wave, less what would push the prologue's
    loads and the epilogue's stores through DRAM faster than its peak (``hidden_cycles``); the
    A100's mma.sync kernels overlap nothing."""
    d = _diag(MODEL.predict(gemm(16384, 16384, 128), load_hardware("h200_sxm")))
    assert d.kernel.producer_warps > 0
    phases = d.phases
    first, steady, tail = phases.first_wave, phases.steady_wave, phases.tail_wave
    assert steady is not None and phases.steady_waves > 0
    t, g = d.traffic, d.grid
    window = min(d.kernel.pipeline_stages - 1, g.k_iterations)
    loads = window * (t.dram_read_bytes - t.c_read_bytes) / (g.ctas * g.k_iterations)
    stores = g.ctas_per_wave * t.dram_write_bytes / g.ctas  # a full wave's epilogue
    peak = first.rates.dram_raw_bytes_per_cycle

    def hidden_by_hand(prologue: float, ctas: int) -> float:
        joint = (ctas * loads + stores) / peak
        return max(
            0.0, min(prologue, first.epilogue_cycles, prologue + first.epilogue_cycles - joint)
        )

    hidden = phases.steady_waves * hidden_by_hand(steady.prologue_cycles, g.ctas_per_wave)
    if tail is not None:
        hidden += hidden_by_hand(tail.prologue_cycles, g.tail_ctas)
    assert phases.overlapped_cycles == pytest.approx(hidden, rel=1e-12) and hidden > 0
    # the DRAM bound binds here: less is hidden than the shorter phase
    assert hidden < phases.steady_waves * min(steady.prologue_cycles, first.epilogue_cycles)
    summed = first.total_cycles + phases.steady_waves * steady.total_cycles
    summed += tail.total_cycles if tail is not None else 0.0
    assert d.total_cycles == pytest.approx(summed - hidden + phases.fixed_overhead_cycles)
    a100 = _diag(MODEL.predict(gemm(16384, 16384, 128), load_hardware("a100_80gb_sxm")))
    assert a100.kernel.producer_warps == 0 and a100.phases.overlapped_cycles == 0.0
