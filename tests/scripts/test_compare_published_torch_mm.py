"""scripts/compare_published_torch_mm.py and fit_simt_fraction.py: published square torch.mm
runs (A40, RTX 4090, A100 PCIe, H100 SXM and PCIe, H800 PCIe, and the database's best figures)
in FP32, TF32, FP16 and BF16 against the model, and the SIMT FP32 shares fitted on the A40's and
the H100 SXM's largest FP32 runs."""

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

# (run, dtype) -> the geomean range of the held-out rows where the summary is not within 18 %
LEADS = {
    ("a100_40gb_pcie", "fp32"): (0.65, 0.75),  # GA100 on a 250 W board, no share
    ("l4", "fp32"): (0.65, 0.78),  # SIMT work throttles the 72 W board; the clock law sees MMAs
    ("h100_sxm", "tf32"): (1.1, 1.3),  # the clustered tf32 kernels left out of the catalogue
    ("h100_pcie", "tf32"): (1.1, 1.3),
    ("h800_pcie", "tf32"): (1.1, 1.3),
    ("h100_pcie", "fp16"): (1.15, 1.3),  # short runs: below the power limit's time scale
    ("h100_pcie", "bf16"): (1.2, 1.35),
    ("h800_pcie", "fp16"): (1.05, 1.15),
    ("h800_pcie", "bf16"): (1.1, 1.2),
    ("l4", "fp16"): (1.15, 1.3),
    ("l4", "bf16"): (1.15, 1.3),
}


def test_published_rows_against_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "Square torch.mm runs": the tensor-core dtypes within 18 % and
    0.9-1.08x on the A40, RTX 4090, A100 PCIe and H100 SXM, and the L4's TF32, but the H100's
    TF32 (1.19x: the clustered tf32 kernels the sm_90 catalogue leaves out, 1.13-1.17x on the
    PCIe boards too); the H800 PCIe's 16-bit GEMMs of >= 1 TFLOP, held out, within 7 % at the
    H100 PCIe's fitted clock, the short runs of both PCIe boards and the L4 (2,048^3 and
    below) 1.3-1.64x: too short for the power limit; FP32 SGEMM held out within 10 % on every
    board the fitted shares cover but the L4 (0.82-1.11x per row), 0.71x on the A100 PCIe,
    which none does, and the L4's large ones 0.57-0.59x (its 72 W limit binds on SIMT work,
    which the clock law does not see)."""
    script = load_script("compare_published_torch_mm")
    rows = script.compare()
    assert len(rows) == 7 * 4 * 5 and sum(r.training for r in rows) == 16
    summary = load_script("ratio_summary").ratio_summary
    groups: dict[tuple[str, str], list[float]] = {}
    for r in rows:
        if not r.training:
            groups.setdefault((r.run, r.dtype), []).append(r.ratio)
    for key, ratios in groups.items():
        _, mape, geomean = summary(ratios)
        low, high = LEADS.get(key, (0.9, 1.08))
        assert low < geomean < high, (key, geomean)
        if key not in LEADS:
            assert mape < 0.18, (key, mape)
    covered = [r for r in rows if r.dtype == "fp32" and r.run not in ("a100_40gb_pcie", "l4")]
    assert all(0.82 <= r.ratio <= 1.11 for r in covered)
    assert all(summary(groups[("rtx4090", d)])[1] < 0.07 for d in ("fp32", "tf32", "fp16", "bf16"))
    large = script.large_16bit(rows)
    assert "h800_pcie 16-bit >= 1 TFLOP" in large
    assert all(summary(ratios)[1] < 0.07 for ratios in large.values())
    assert script.main() == 0
    assert "training: a fitted clock or SIMT share" in capsys.readouterr().out


def test_the_database_best_figures() -> None:
    """The database's best of five sizes, held out: within 9 % on the B200, A100 SXM, H100,
    H200 and RTX 4090 (the one Docker RTX 4090's FP32 0.90x), the H100's and H200's FP32 within
    3 % with the sm_90 share (0.83-0.85x without it); the RTX 3090 1.08-1.12x (its boards run
    above the rated 1,695 MHz the config holds) and the L40S 0.77-0.83x (no power-limited
    clock in its config): the two recorded leads."""
    script = load_script("compare_published_torch_mm")
    ratios = script.best_ratios()
    assert len(ratios) == 38
    for config, contributor, dtype, ratio in ratios:
        if config == "rtx3090":
            assert 1.05 < ratio < 1.13
        elif config == "l40s":
            assert 0.75 < ratio < 0.85
        elif config in ("h100_sxm", "h200_sxm") and dtype == "fp32":
            assert abs(ratio - 1) < 0.03
        elif (config, contributor, dtype) == ("rtx4090", "HuanLinOTO", "fp32"):
            assert 0.88 < ratio < 0.92
        else:
            assert abs(ratio - 1) < 0.09, (config, contributor, dtype, ratio)


def test_the_shipped_simt_share_is_the_fit(tmp_path: Path) -> None:
    """The A40's two FP32 GEMMs of at least 1 TFLOP give 0.63 of the FP32 peak, the shipped
    value for sm_86 and sm_89, the H100 SXM's two 0.83 for sm_90; a model change that moves
    them makes the file stale and fails here. The file the script writes is the shipped one."""
    script = load_script("fit_simt_fraction")
    training = load_script("published_torch_mm_data").training
    assert [n for n in (1024, 2048, 4096, 8192, 10240) if training("a40", "fp32", n)] == [
        8192,
        10240,
    ]
    fractions = script.fit()
    assert fractions == {"sm86": 0.63, "sm89": 0.63, "sm90": 0.83}
    written = tmp_path / "simt.yaml"
    script.write(fractions, written)
    assert written.read_text() == SIMT_CALIBRATION_FILE.read_text()
    loaded = load_simt_calibration(written)
    assert loaded.fractions == fractions and len(loaded.rows) == 4


def test_the_share_slows_fp32_sgemm_only() -> None:
    """On an sm_86 board an FP32 GEMM's math runs at 0.63 of the vector peak, on an sm_90 one
    at 0.83: a large one takes about 1 / 0.63 and 1 / 0.83 as long as without the share; FP16
    GEMMs and GA100's FP32 ones keep theirs."""
    model = get_model("effective_roofline")
    a40, a100, h100 = (load_hardware(n) for n in ("a40", "a100_40gb_pcie", "h100_sxm"))
    big, half = ops.gemm(8192, 8192, 8192, "fp32"), ops.gemm(8192, 8192, 8192, "fp16")
    cases = ((big, a40), (big, h100), (half, a40), (big, a100))
    shipped = [model.predict(op, hw).latency_s for op, hw in cases]
    with simt_overridden(NO_SIMT_FRACTION):
        plain = [model.predict(op, hw).latency_s for op, hw in cases]
    assert shipped[0] / plain[0] == pytest.approx(1 / 0.63, rel=0.05)
    assert shipped[1] / plain[1] == pytest.approx(1 / 0.83, rel=0.05)
    assert shipped[2:] == plain[2:]


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
