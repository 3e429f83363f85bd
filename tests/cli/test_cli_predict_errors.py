"""Errors raised while predicting (not while reading the files) name the op file first."""

from __future__ import annotations

from pathlib import Path

import pytest

from ..conftest import EXAMPLES
from .test_cli import _run


def _gemm_file(path: Path, mkn: tuple[int, int, int], dtype: str, attrs: str = "") -> Path:
    m, k, n = mkn
    tensors = (("input", m, k), ("weight", k, n), ("output", m, n))
    lines = [f"  - {{role: {r}, shape: [{a}, {b}], dtype: {dtype}}}\n" for r, a, b in tensors]
    path.write_text("name: g\nkind: gemm\nphase: train_fwd\ntensors:\n" + "".join(lines) + attrs)
    return path


def test_unsupported_dtype_on_hardware(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    op = _gemm_file(tmp_path / "fp64.yaml", (4, 8, 3), "fp64")
    code, out, err = _run(capsys, "predict", "--hardware", "tpu_generic", "--op", str(op))
    assert (code, out) == (2, "")
    assert err == (
        f"opmodel: {op}: hardware 'tpu_generic' has no throughput for dtype fp64 "
        "(tensor: bf16, int8; vector: fp32, bf16)\n"
    )


def test_kernel_error_names_the_op_file(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    """A kernel attr the model rejects at predict time names the op file, then op and attr."""
    attrs = "attrs: {cta_tile_m: 128, cta_tile_n: 128, warp_tile_m: 64, warp_tile_n: 64, "
    op = _gemm_file(tmp_path / "warps.yaml", (256, 256, 256), "bf16", attrs + "warps_per_cta: 3}\n")
    argv = ("predict", "--hardware", "a100_40gb_pcie", "--op", str(op))
    code, out, err = _run(capsys, *argv, "--model", "extended_roofline")
    assert (code, out) == (2, "")
    assert err == (
        f"opmodel: {op}: op 'g' (gemm): kernel: warp grid 2x2x1 = 4 warps does not match "
        "warps_per_cta=3\n"
    )


@pytest.mark.parametrize("clock", ["1.98", "1980", "inf"])
def test_clock_in_another_unit_is_one_line(capsys: pytest.CaptureFixture[str], clock: str) -> None:
    """``--clock-hz`` takes hertz: a clock typed in GHz or MHz is one line naming the span, not a
    prediction at 1.98 Hz."""
    for command in (
        ("predict", "--op", str(EXAMPLES / "gemm.yaml")),
        ("sweep", "--ops", str(EXAMPLES / "sweep_llama3_8b.csv"), "--output", "unused.csv"),
    ):
        code, out, err = _run(capsys, *command, "--hardware", "h100_sxm", "--clock-hz", clock)
        assert (code, out) == (2, "")
        assert err == (
            "opmodel: h100_sxm: at_clock: clock_hz must be a number of Hz from 1e+07 to 1e+11 "
            f"(got {float(clock)!r})\n"
        )
