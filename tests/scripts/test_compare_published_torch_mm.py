"""scripts/compare_published_torch_mm.py and fit_simt_fraction.py: published square torch.mm
runs (A40, RTX 4090, A100 PCIe) in FP32, TF32, FP16 and BF16 against the model, and the SIMT
FP32 share fitted on the A40's largest FP32 runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.gemm.simt_fraction import (
    NO_SIMT_FRACTION,
    SIMT_CALIBRATION_FILE,
    load_simt_calibration,
    simt_overridden,
)
from tests.scripts.loader import load_script


def test_published_rows_against_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "Square torch.mm runs": the tensor-core dtypes within 17 % on every
    GPU and 0.95-1.06x but the H100's TF32 (1.19x: the clustered tf32 kernels the sm_90
    catalogue leaves out), the RTX 4090 (held out entirely)
    within 7 %; FP32 SGEMM held out on the A40 and the RTX 4090 within 5 % with the fitted share
    (0.66-0.68x without it), 0.71x on the A100 and 0.81x on the H100, whose SMs the share does
    not cover."""
    script = load_script("compare_published_torch_mm")
    rows = script.compare()
    assert len(rows) == 4 * 4 * 5 and sum(r.training for r in rows) == 6
    summary = load_script("ratio_summary").ratio_summary
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if not r.training:
            groups.setdefault((r.hardware, r.dtype), []).append(r.ratio)
    for (hardware, dtype), ratios in groups.items():
        _, mape, geomean = summary(ratios)
        if (hardware, dtype) == ("a100_40gb_pcie", "fp32"):
            assert 0.65 < geomean < 0.75
        elif (hardware, dtype) == ("h100_sxm", "fp32"):
            assert 0.75 < geomean < 0.87
        elif (hardware, dtype) == ("h100_sxm", "tf32"):
            assert 1.1 < geomean < 1.3
        else:
            assert mape < 0.17 and 0.93 < geomean < 1.08, (hardware, dtype, mape, geomean)
    assert all(summary(groups[("rtx4090", d)])[1] < 0.07 for d in ("fp32", "tf32", "fp16", "bf16"))
    assert script.main() == 0
    assert "training: the A40's clock or SIMT share" in capsys.readouterr().out


def test_the_shipped_simt_share_is_the_fit(tmp_path: Path) -> None:
    """The A40's two FP32 GEMMs of at least 1 TFLOP give 0.63 of the FP32 peak, the shipped
    value for sm_86 and sm_89; a model change that moves it makes the file stale and fails
    here. The file the script writes is the shipped one."""
    script = load_script("fit_simt_fraction")
    assert [n for n in (1024, 2048, 4096, 8192, 10240) if script.training(n)] == [8192, 10240]
    assert script.fit() == 0.63
    written = tmp_path / "simt.yaml"
    script.write(0.63, written)
    assert written.read_text() == SIMT_CALIBRATION_FILE.read_text()
    loaded = load_simt_calibration(written)
    assert loaded.fractions == {"sm86": 0.63, "sm89": 0.63} and len(loaded.rows) == 2


def test_the_share_slows_fp32_sgemm_only() -> None:
    """On an sm_86 board an FP32 GEMM's math runs at 0.63 of the vector peak: a large one takes
    about 1 / 0.63 as long as without the share; FP16 GEMMs and GA100's FP32 ones keep theirs."""
    model, a40, a100 = (
        get_model("effective_roofline"),
        load_hardware("a40"),
        load_hardware("a100_40gb_pcie"),
    )
    big, half = ops.gemm(8192, 8192, 8192, "fp32"), ops.gemm(8192, 8192, 8192, "fp16")
    shipped = [model.predict(op, hw).latency_s for op, hw in ((big, a40), (half, a40), (big, a100))]
    with simt_overridden(NO_SIMT_FRACTION):
        plain = [
            model.predict(op, hw).latency_s for op, hw in ((big, a40), (half, a40), (big, a100))
        ]
    assert shipped[0] / plain[0] == pytest.approx(1 / 0.63, rel=0.05)
    assert shipped[1:] == plain[1:]


@pytest.mark.parametrize(
    ("text", "message"),
    [
        (
            "fitted_on: {}\nfp32_fraction: {sm86: 1.5}\n",
            "fp32_fraction.sm86: must be a number in (0, 1]",
        ),
        (
            "fitted_on: {}\nfp32_fraction: {sm86: true}\n",
            "fp32_fraction.sm86: must be a number in (0, 1]",
        ),
        ("fp32_fraction: {sm86: 0.5}\n", "needs fitted_on (a mapping) and fp32_fraction"),
        (
            "fitted_on: {rows: [1]}\nfp32_fraction: {sm86: 0.5}\n",
            "fitted_on.rows: must be a list of strings",
        ),
    ],
)
def test_bad_calibration_files_are_one_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(
        ValueError,
        match=message.replace("(", r"\(")
        .replace(")", r"\)")
        .replace("[", r"\[")
        .replace("]", r"\]"),
    ) as info:
        load_simt_calibration(path)
    assert len(str(info.value).splitlines()) == 1 and str(path) in str(info.value)
