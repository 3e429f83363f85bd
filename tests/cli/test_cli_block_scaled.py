"""opmodel predict on block-scaled and FP4 GEMMs: the example's weight-only GEMM on the
Blackwell FP4 tensor cores, the OCP MX type on the MI355X, and the one-line refusals."""

from __future__ import annotations

import json

import pytest

from tests.cli.test_cli import EXAMPLES, _assert_golden, _run

_W4A4 = "input:64x14336:nvfp4;weight:4096x14336:nvfp4;output:64x4096:bf16"


def _predict(
    capsys: pytest.CaptureFixture[str], hardware: str, tensors: str
) -> tuple[int, str, str]:
    return _run(
        capsys,
        *("predict", "--model", "effective_roofline", "--hardware", hardware, "--kind", "gemm"),
        *("--tensors", tensors, "--phase", "decode", "--attrs", '{"transpose_b": true}'),
    )


def test_nvfp4_activations_and_weights_on_the_b200(capsys: pytest.CaptureFixture[str]) -> None:
    """The example's GEMM with its input in nvfp4 too (W4A4) runs the 4-bit tcgen05 family with
    the config's 2,000 overhead cycles and the FP4 kernels' fitted 5,846; the example's
    weight-only form (W4A16) runs a 16-bit kernel without the FP4 part."""
    code, out, err = _predict(capsys, "b200", _W4A4)
    assert (code, err) == (0, "")
    _assert_golden("effective_roofline_gemm_nvfp4_b200", out)
    w4a4 = json.loads(out)
    assert "_tcgen05_4bit_block_scaled_" in w4a4["implementation"]
    op = str(EXAMPLES / "gemm_nvfp4_weights.yaml")
    code, out, _ = _run(
        capsys, "predict", "--model", "effective_roofline", "--hardware", "b200", "--op", op
    )
    w4a16 = json.loads(out)
    assert code == 0 and "_16bit_" in w4a16["implementation"]
    overhead = "fixed_overhead_cycles"
    assert w4a4["diagnostics"]["resource_cycles"][overhead] == 2000 + 5846
    assert w4a16["diagnostics"]["resource_cycles"][overhead] == 2000


def test_the_mx_type_runs_on_the_mi355x_and_nvfp4_is_refused(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, out, _ = _predict(capsys, "mi355x", _W4A4.replace("nvfp4", "mxfp4"))
    assert code == 0 and "_mfma_4bit_scaled_" in json.loads(out)["implementation"]
    code, out, err = _predict(capsys, "mi355x", _W4A4)
    assert code == 2 and out == "" and err.count("\n") == 1
    assert "no catalogue GEMM kernel runs nvfp4" in err


def test_configs_without_fp4_rates_name_the_ones_they_have(
    capsys: pytest.CaptureFixture[str],
) -> None:
    code, _, err = _run(
        capsys,
        *("predict", "--hardware", "h100_sxm", "--kind", "gemm", "--tensors", _W4A4),
        *("--attrs", '{"transpose_b": true}'),
    )
    assert code == 2 and err.count("\n") == 1
    assert "has no throughput for dtype nvfp4 (tensor: " in err
