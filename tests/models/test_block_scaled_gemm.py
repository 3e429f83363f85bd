"""GEMMs in block-scaled and FP4 types: rates by config, bytes with their scales, the kernel
families that run them, and the configs that refuse them in one line."""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import DType, ops
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.kernel import mma_shape_for
from opmodel.report import format_summary, summarize
from tests.conformance.invariants import assert_profile_invariants
from tests.hypothesis_budget import examples

B200, MI355X, H100 = (load_hardware(name) for name in ("b200", "mi355x", "h100_sxm"))
EFFECTIVE, ROOFLINE = get_model("effective_roofline"), get_model("roofline")


def test_tensor_rates_follow_the_datasheets() -> None:
    """B200: FP4 18 PFLOPS sparse = 9 dense = 148 SMs x 32768 x 1.8556 GHz, FP6 at the FP8 rate;
    MI355X: MX FP4 and FP6 at 256 CUs x 16384 x 2.4 GHz, no NVFP4; H100: none of them."""
    b200 = B200.compute
    assert b200.tensor_peak(DType.NVFP4) == b200.tensor_peak(DType.MXFP4) == 148 * 32768 * 1.8556e9
    assert b200.tensor_peak(DType.MXFP6) == b200.tensor_peak(DType.FP8)
    assert b200.tensor_peak(DType.MXFP8) == b200.tensor_peak(DType.FP8_E4M3)
    mi355x = MI355X.compute
    assert mi355x.tensor_peak(DType.MXFP4) == mi355x.tensor_peak(DType.MXFP6) == 256 * 16384 * 2.4e9
    assert mi355x.tensor_peak(DType.NVFP4) is None
    assert H100.compute.tensor_peak(DType.NVFP4) is None


def test_roofline_reads_each_operand_with_its_scales() -> None:
    """8192^3 NVFP4 x NVFP4 -> bf16 on the B200: A and B are 8192^2 x 4.5 bits each, C bf16;
    compute-bound at the FP4 rate."""
    op = ops.gemm(8192, 8192, 8192, "nvfp4", out_dtype="bf16")
    profile = ROOFLINE.predict(op, B200)
    assert profile.flops == 2 * 8192**3
    assert profile.traffic["hbm"].read_bytes == 2 * 8192 * 8192 * 9 // 16 == 75_497_472
    assert profile.traffic["hbm"].write_bytes == 8192 * 8192 * 2
    assert profile.latency_s == pytest.approx(2 * 8192**3 / (148 * 32768 * 1.8556e9), rel=1e-3)


@pytest.mark.parametrize(
    ("config", "dtype", "family"),
    [
        ("b200", "nvfp4", "tcgen05_4bit_block_scaled"),
        ("b200", "mxfp4", "tcgen05_4bit_block_scaled"),
        ("gb200", "nvfp4", "tcgen05_4bit_block_scaled"),
        ("b200", "mxfp8", "tcgen05_8bit"),
        ("b200", "mxfp6", "tcgen05_8bit"),
        ("mi355x", "mxfp4", "mfma_4bit_scaled"),
        ("mi355x", "mxfp6", "mfma_8bit"),
    ],
)
def test_each_type_runs_its_family(config: str, dtype: str, family: str) -> None:
    op = ops.gemm(8192, 8192, 8192, dtype, out_dtype="bf16", transpose_b=True)
    profile = EFFECTIVE.predict(op, load_hardware(config))
    assert f"_{family}_" in profile.implementation


def test_fp4_pays_its_fixed_cost_at_small_sizes() -> None:
    """vLLM's published tables (N = 6144, K = 4096, one board): NVFP4 takes 11.3 us at M = 1
    where FP8 takes 6.0; at M = 4096 NVFP4 is 2.7x faster than bf16. The model keeps both
    orders."""

    def latency(m: int, dtype: str) -> float:
        op = ops.gemm(m, 6144, 4096, dtype, out_dtype="bf16", transpose_b=True)
        return EFFECTIVE.predict(op, B200).latency_s

    assert latency(1, "nvfp4") > latency(1, "fp8_e4m3")
    assert latency(4096, "nvfp4") < 0.5 * latency(4096, "bf16")


def test_narrower_types_are_faster_when_compute_bound() -> None:
    """At 8192^3 on the B200: NVFP4 (9 PFLOPS) < MXFP8 (4.5) < bf16 (2.25)."""
    times = [
        EFFECTIVE.predict(ops.gemm(8192, 8192, 8192, d, out_dtype="bf16"), B200).latency_s
        for d in ("nvfp4", "mxfp8", "bf16")
    ]
    assert times == sorted(times)
    assert times[1] / times[0] > 1.5


@pytest.mark.parametrize(
    ("config", "model", "message"),
    [
        ("mi355x", "roofline", "has no throughput for dtype nvfp4"),
        ("mi355x", "effective_roofline", "no catalogue GEMM kernel runs nvfp4"),
        ("h100_sxm", "effective_roofline", "no catalogue GEMM kernel runs nvfp4"),
    ],
)
def test_configs_without_the_type_refuse_it_in_one_line(
    config: str, model: str, message: str
) -> None:
    op = ops.gemm(1024, 1024, 1024, "nvfp4", out_dtype="bf16")
    with pytest.raises(OpModelError, match=message) as info:
        get_model(model).predict(op, load_hardware(config))
    assert "\n" not in str(info.value)


def test_weight_only_quantisation_runs_the_activation_type() -> None:
    """bf16 activations x NVFP4 weights on the H100 (no FP4 tensor cores): a 16-bit kernel that
    reads the 4.5-bit weight, faster than the bf16 GEMM at decode sizes."""
    w4a16 = ops.gemm(16, 8192, 8192, "bf16", weight_dtype="nvfp4", transpose_b=True)
    bf16 = ops.gemm(16, 8192, 8192, "bf16", transpose_b=True)
    quantised, full = EFFECTIVE.predict(w4a16, H100), EFFECTIVE.predict(bf16, H100)
    assert "16bit" in quantised.implementation
    weight_bytes = 8192 * 8192 * 9 // 16
    assert weight_bytes <= quantised.traffic["hbm"].read_bytes < 1.1 * weight_bytes
    assert quantised.latency_s < 0.5 * full.latency_s


def test_six_bit_types_issue_the_eight_bit_mma_shape() -> None:
    sm = B200.compute.sm
    assert sm is not None
    assert mma_shape_for(sm, DType.MXFP6) == mma_shape_for(sm, DType.FP8)
    assert mma_shape_for(sm, DType.NVFP4)[2] == 2 * mma_shape_for(sm, DType.FP8)[2]


def test_the_text_report_quotes_no_held_out_rows_for_the_type() -> None:
    op = ops.gemm(16, 8192, 8192, "bf16", weight_dtype="nvfp4", transpose_b=True)
    text = format_summary(summarize(op, EFFECTIVE.predict(op, B200), B200))
    assert "no held-out gemm nvfp4 rows for b200" in text


_RUNNABLE = [  # (config, dtype) pairs with a rate and a kernel family
    (config, dtype)
    for config in ("b200", "gb200", "mi355x")
    for dtype in ("nvfp4", "mxfp4", "mxfp6", "mxfp8")
    if not (config == "mi355x" and dtype == "nvfp4")
]


@settings(max_examples=examples(40), deadline=None)
@given(
    pair=st.sampled_from(_RUNNABLE),
    model=st.sampled_from(("roofline", "extended_roofline", "effective_roofline")),
    m=st.integers(1, 20000),
    n=st.integers(1, 20000),
    k=st.integers(1, 20000),
)
def test_block_scaled_gemms_keep_the_model_invariants(
    pair: tuple[str, str], model: str, m: int, n: int, k: int
) -> None:
    """Finite and positive, energy parts summing to the total, at least the compulsory bytes
    (scales included) through HBM, never faster than the roofline's ideal, deterministic."""
    config, dtype = pair
    hardware = load_hardware(config)
    op = ops.gemm(m, n, k, dtype, out_dtype="bf16", transpose_b=True)
    profile = get_model(model).predict(op, hardware)
    assert_profile_invariants(op, profile, hardware)
    peak = hardware.compute.tensor_peak(DType(dtype))
    assert peak is not None
    assert profile.latency_s >= profile.flops / peak * (1 - 1e-12)
    assert get_model(model).predict(op, hardware).to_dict() == profile.to_dict()
