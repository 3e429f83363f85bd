"""scripts/compare_published_b300.py: the b300 config against published B300 GEMM times."""

from __future__ import annotations

import pytest

from opmodel.hardware import load_hardware
from tests.scripts.loader import load_script


def test_b300_cublaslt_gemms_and_jax_rows(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "The B300 (Blackwell Ultra)": held out, cuBLASLt's five BF16 GEMMs
    6.5 % (1.01x; 4096^3 1.10x and 8192^3 1.08x at the rating clock, the skinny ones
    0.93-0.97x); marin's JAX rows 18.3 % (0.81x); its fp32 stream 0.99x."""
    script = load_script("compare_published_b300")
    rows = script.compare()
    cublaslt = {(r.m, r.n, r.k): r.ratio for r in rows if r.source == "cublaslt"}
    assert len(cublaslt) == 5 and len(rows) == 9
    assert cublaslt[(4096, 4096, 4096)] == pytest.approx(1.10, abs=0.01)
    assert cublaslt[(8192, 8192, 8192)] == pytest.approx(1.08, abs=0.01)
    assert all(0.92 <= cublaslt[shape] <= 0.98 for shape in cublaslt if shape[1] == 512)
    assert sum(abs(v - 1) for v in cublaslt.values()) / 5 == pytest.approx(0.065, abs=0.003)
    jax = [r.ratio for r in rows if r.source == "jax"]
    assert sum(abs(v - 1) for v in jax) / 4 == pytest.approx(0.183, abs=0.005)
    published, predicted = script.stream_ratio()
    assert predicted / published == pytest.approx(0.99, abs=0.01)
    assert script.main() == 0
    out = capsys.readouterr().out
    assert "cublaslt      5   6.5 %   1.01x" in out and "jax           4  18.3 %   0.81x" in out


def test_b300_rates_follow_the_datasheet() -> None:
    """Blackwell Ultra against the B200: the same 2.25 PFLOPS of BF16 and 4.5 of FP8, 1.5x the
    FP4 rate (13.5 PFLOPS), twice the SFU's exponentials, INT8 at a vector rate."""
    b300, b200 = load_hardware("b300"), load_hardware("b200")
    for dtype, ratio in (("bf16", 1.0), ("fp8", 1.0), ("fp4", 1.5)):
        peak = b300.compute.tensor_flops_per_s[dtype]
        assert peak == pytest.approx(ratio * b200.compute.tensor_flops_per_s[dtype])
    assert b300.compute.tensor_flops_per_s["fp4"] == pytest.approx(13.5e15, rel=1e-3)
    assert b300.compute.tensor_flops_per_s["int8"] < 0.2e15
    assert b300.compute.sm is not None and b200.compute.sm is not None
    assert b300.compute.sm.sfu_ops_per_cycle_per_sm == 2 * b200.compute.sm.sfu_ops_per_cycle_per_sm
