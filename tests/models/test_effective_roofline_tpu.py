"""effective_roofline on TPUs: the systolic-array GEMM by hand, its row splits and blocks,
fp32 on the vector roofline."""

from __future__ import annotations

import pytest

from opmodel import (
    DType,
    OpModelError,
)
from opmodel.hardware import load_hardware
from opmodel.models.effective_roofline import (
    EffectiveRooflineModel,
    SystolicDiagnostics,
)

from ..conftest import gemm

MODEL = EffectiveRooflineModel()


def test_tpu_gemm_by_hand() -> None:
    """C[1024,1024] = A @ B bf16 on tpu_generic (8 MXUs of 128x128, 1.05 GHz).

    64 weight tiles over 8 MXUs: 8 passes of 1024 rows at 128 x 128 = 16,384 MACs per cycle per
    MXU (the config's 32768 FLOP/cycle/MXU) -> 1024 cycles each, + 256 fill/drain = 8448.
    HBM moves 1.2e12 / 1.05e9 B/cycle with a 525-cycle latency. Two VMEM blockings fit 16 MiB
    per core (K block 512):
    - 1024 x 1024: A and B read once, C written (6 MiB, 5505 cycles, under the compute);
      prologue and epilogue move 2 MiB each at the peak (1835 cycles each): 12118 cycles.
    - 512 x 512: A and B read twice, C once (10 MiB, 9175 cycles: HBM-bound); the prologue
      moves 1 MiB at the peak (917.5 cycles), the epilogue's 0.5 MiB waits out the latency
      (525 cycles): 10617.5 cycles. The faster one is the tiling.
    """
    hw = load_hardware("tpu_generic")
    profile = MODEL.predict(gemm(1024, 1024, 1024), hw)
    d = profile.diagnostics
    assert isinstance(d, SystolicDiagnostics)
    macs = 128 * 128
    assert (d.weight_tiles, d.passes, d.row_split) == (64, 8, 1)
    assert d.compute_cycles == pytest.approx(8 * 1024 * 16384 / macs + 256)
    assert (d.block_m, d.block_n, d.block_k) == (512, 512, 512)
    rate = 1.2e12 / 1.05e9
    assert d.memory_cycles == pytest.approx(10 * 2**20 / rate)
    assert d.prologue_cycles == pytest.approx(2**20 / rate)
    assert d.epilogue_cycles == pytest.approx(525.0)
    assert d.limiting == "hbm" and d.mxu_efficiency == 1.0
    total = d.prologue_cycles + d.memory_cycles + d.epilogue_cycles + 1000
    assert profile.latency_s == pytest.approx(total / 1.05e9)
    assert total < 2 * 2 * 2**20 / rate + d.compute_cycles + 1000  # the 1024 x 1024 blocking
    assert profile.implementation == "effective_roofline/systolic"


def test_tpu_splits_rows_when_tiles_are_few() -> None:
    """K = N = 128: one weight tile, so 4096 rows split over min(8, 4096 / 128) = 8 MXUs."""
    d = MODEL.predict(gemm(4096, 128, 128), load_hardware("tpu_generic")).diagnostics
    assert isinstance(d, SystolicDiagnostics)
    assert (d.weight_tiles, d.row_split, d.passes) == (1, 8, 1)


def test_tpu_block_is_the_fastest_that_fits_and_longer_k_is_never_faster() -> None:
    """The conformance property test found a 3 x 513 x 1665 GEMM with K 259 faster than with
    K 129 on tpu_generic: the larger K dropped the largest fitting output block (1792 x 1664
    at K 129) to 1024 x 1024, whose shorter epilogue outweighed the extra tiles. The block is
    now the fitting one with the least time: 512 x 512 for both, the smaller K faster."""
    hw = load_hardware("tpu_generic")
    short, long = (MODEL.predict(gemm(3 * 513, 1665, k), hw) for k in (129, 259))
    d_short, d_long = short.diagnostics, long.diagnostics
    assert isinstance(d_short, SystolicDiagnostics) and isinstance(d_long, SystolicDiagnostics)
    assert (d_short.block_m, d_short.block_n) == (d_long.block_m, d_long.block_n) == (512, 512)
    assert (d_short.block_k, d_long.block_k) == (256, 384)
    assert long.latency_s > short.latency_s


def test_tpu_fp32_gemm_uses_the_vector_roofline() -> None:
    profile = MODEL.predict(gemm(256, 256, 256, DType.FP32), load_hardware("tpu_generic"))
    assert profile.implementation == "effective_roofline/roofline-vector"


def test_tpu_v6e_256_wide_arrays_by_hand() -> None:
    """tpu_v6e: 4 MXUs of 256 x 256 at 1.751 GHz (65,536 MACs per cycle each).

    4096^3 bf16: (4096 / 256)^2 = 256 weight tiles over 4 MXUs, 64 passes of 4096 rows ->
    64 x 4096 + 512 fill/drain = 262,656 cycles. With 100 rows each pass still takes the 256
    cycles that load its weight tile: 64 x 256 + 512 = 16,896 cycles. K = N = 4224 (33 x 128)
    fills tpu_v5e's 128-wide arrays exactly but pads to 17 x 256 = 4352 here: (4224 / 4352)^2
    of the issued MACs are useful.
    """
    hw = load_hardware("tpu_v6e")
    big = MODEL.predict(gemm(4096, 4096, 4096), hw).diagnostics
    assert isinstance(big, SystolicDiagnostics)
    assert (big.mxu_rows, big.mxu_cols, big.mxus) == (256, 256, 4)
    assert (big.weight_tiles, big.passes, big.row_split) == (256, 64, 1)
    assert big.compute_cycles == pytest.approx(64 * 4096 + 512)
    assert big.mxu_efficiency == 1.0
    skinny = MODEL.predict(gemm(100, 4096, 4096), hw).diagnostics
    assert isinstance(skinny, SystolicDiagnostics)
    assert skinny.compute_cycles == pytest.approx(64 * 256 + 512)
    padded = MODEL.predict(gemm(4096, 4224, 4224), hw).diagnostics
    assert isinstance(padded, SystolicDiagnostics)
    assert padded.weight_tiles == 17 * 17
    assert padded.mxu_efficiency == pytest.approx((4224 / 4352) ** 2)
    v5e = MODEL.predict(gemm(4096, 4224, 4224), load_hardware("tpu_v5e")).diagnostics
    assert isinstance(v5e, SystolicDiagnostics)
    assert v5e.mxu_efficiency == 1.0


def test_tpu7x_is_one_tensor_core_and_fp8_doubles_the_mxu_rate() -> None:
    """tpu7x models one TensorCore (the JAX device; no megacore): 4 MXUs of 256 x 256 at
    2.203 GHz. An fp8 4096^3 GEMM streams the same 256 tiles in 64 passes at twice the bf16
    MACs per cycle: 64 x 4096 x 65536 / 131072 + 512 = 131,584 cycles, against 262,656 in
    bf16 (the datasheet config, without its sustained calibration); int8, which TPU7x
    lacks, is refused. The shipped config's sustained MXU share, 0.825, runs the MXUs at that
    share of their MACs per cycle: 64 x 4096 / 0.825 + 512 = 318,262 cycles in bf16."""
    hw = load_hardware("tpu7x", overrides={"sustained_calibration": None})
    assert hw.compute.mxu is not None and hw.compute.mxu.tensor_cores == 1
    bf16 = MODEL.predict(gemm(4096, 4096, 4096), hw).diagnostics
    fp8 = MODEL.predict(gemm(4096, 4096, 4096, DType.FP8), hw).diagnostics
    assert isinstance(bf16, SystolicDiagnostics) and isinstance(fp8, SystolicDiagnostics)
    assert bf16.compute_cycles == pytest.approx(64 * 4096 + 512)
    assert fp8.compute_cycles == pytest.approx(64 * 4096 / 2 + 512)
    shipped = MODEL.predict(gemm(4096, 4096, 4096), load_hardware("tpu7x")).diagnostics
    assert isinstance(shipped, SystolicDiagnostics)
    assert shipped.compute_cycles == pytest.approx(64 * 4096 / 0.825 + 512)
    with pytest.raises(OpModelError, match="int8"):
        MODEL.predict(gemm(4096, 4096, 4096, DType.INT8), hw)
