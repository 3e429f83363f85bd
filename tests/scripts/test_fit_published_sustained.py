"""scripts/fit_published_sustained.py: the A100's sustained values from Azure's published runs."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.core.dtypes import DType
from opmodel.hardware import load_hardware
from opmodel.hardware.sustained_calibration import load_sustained_calibration
from tests.scripts.loader import load_script


def test_fit_reproduces_the_shipped_calibration() -> None:
    """The declared fits give the values a100_80gb_sxm_sustained.yaml ships: a change to the
    models that moves them makes the file stale and fails here. Dot (1.75 TB/s) over the
    model's 537 MB read stream gives 0.937 (0.935 before the streaming kernels took their fitted
    start and drain, 0.926 before the streaming chain priced the CTA turnaround); the three GEMMs of >= 1 TFLOP give 1170 MHz and are
    then within 1.5 % of their published throughput."""
    script = load_script("fit_published_sustained")
    result = script.fit("a100_80gb_sxm")
    spec = load_hardware("a100_80gb_sxm")
    assert result.hbm_fraction == spec.memory_fraction("hbm") == 0.937
    assert result.power_limited_clock_hz == spec.compute.power_limited_clock_hz == 1.17e9
    assert result.predicted_read_tb_per_s == pytest.approx(1.75 / 0.937, rel=1e-3)
    train = [r for r in result.gemms if r.training]
    assert [(r.m, r.n, r.k) for r in train] == [
        (8192, 8192, 8192),
        (16384, 16384, 16384),
        (6144, 12288, 12288),
    ]
    assert all(abs(r.ratio - 1) < 0.015 for r in train)


def test_held_out_rows_and_the_gpus_without_a_derate() -> None:
    """docs/validation.md: held out on A100, 2048^3 and 4096^3 are within 9 % (0.91x, 1.04x),
    the 1024-sized GEMMs 1.01x and 1.08x (1.05x and 1.10x before Vidur's truncated microseconds
    raised the fitted GEMM overheads, 1.19-1.21x before they were fitted per architecture) and 802,816 x 192 x 768 1.28x too fast. On H100 and H200 the model's read stream is already
    slower than Dot (no HBM fraction); their FP8 tables give an FP8 clock of 1305 and 1275 MHz,
    the shipped values, with the training GEMMs within 3.5 % and 2048^3 and 4096^3 held out
    within 8 % (5 % before Vidur's truncated microseconds raised the fitted GEMM overheads:
    2048^3 0.92-0.93x, 0.95x before)."""
    script = load_script("fit_published_sustained")
    a100 = script.fit("a100_80gb_sxm")
    by_shape = {(r.m, r.n, r.k): r.ratio for r in a100.gemms if not r.training}
    for size in (2048, 4096):
        assert 0.88 <= by_shape[(size, size, size)] <= 1.06
    assert 1.0 <= by_shape[(1024, 1024, 1024)] <= 1.05
    assert 1.07 <= by_shape[(1024, 2145, 1024)] <= 1.12
    assert 1.25 <= by_shape[(802816, 192, 768)] <= 1.35
    for name, clock_hz in (("h100_sxm", 1.305e9), ("h200_sxm", 1.275e9)):
        result = script.fit(name)
        assert result.hbm_fraction is None
        assert result.predicted_read_tb_per_s < result.stream_tb_per_s[-1]
        assert result.clock_dtype is DType.FP8 and result.power_limited_clock_hz == clock_hz
        spec = load_hardware(name)
        assert spec.compute.power_limited_clock_for(DType.FP8_E4M3) == clock_hz
        assert spec.compute.power_limited_clock_for(DType.BF16) == 1.455e9
        assert all(abs(r.ratio - 1) < 0.035 for r in result.gemms if r.training)
        held = {(r.m, r.n, r.k): r.ratio for r in result.gemms if not r.training}
        assert all(0.92 <= held[(s, s, s)] <= 1.03 for s in (2048, 4096))


def test_gb200_fp8_clock_from_azures_nd_gb200_v6_runs() -> None:
    """docs/validation.md: the four FP8 GEMMs of >= 1 TFLOP that Azure published for ND GB200
    v6 give 1260 MHz, the shipped value, with those within 2.5 %; held out, 2048^3 and 4096^3
    come out 0.89x (the model too slow), 1024^3 1.21x, 1024 x 2145 x 1024 1.06x and 802,816 x
    192 x 768 1.02x. No stream is published, so no HBM fraction; the 16-bit clock stays
    unlimited (no published 16-bit run)."""
    script = load_script("fit_published_sustained")
    result = script.fit("gb200")
    assert result.hbm_fraction is None and result.stream_tb_per_s == ()
    assert result.clock_dtype is DType.FP8 and result.power_limited_clock_hz == 1.26e9
    spec = load_hardware("gb200")
    assert spec.compute.power_limited_clock_for(DType.FP8_E4M3) == 1.26e9
    assert spec.compute.power_limited_clock_for(DType.BF16) is None
    train = [r for r in result.gemms if r.training]
    assert len(train) == 4 and all(abs(r.ratio - 1) < 0.025 for r in train)
    held = {(r.m, r.n, r.k): r.ratio for r in result.gemms if not r.training}
    assert all(0.86 <= held[(s, s, s)] <= 0.92 for s in (2048, 4096))
    assert 1.15 <= held[(1024, 1024, 1024)] <= 1.25


def test_write_round_trips_through_the_loader(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("fit_published_sustained")
    monkeypatch.setattr(script, "CALIBRATIONS", tmp_path)
    assert script.main(["--write"]) == 0
    out = capsys.readouterr().out
    assert "power-limited clock: 1170 MHz" in out and "0.937" in out
    written = tmp_path / "a100_80gb_sxm_sustained.yaml"
    calibration = load_sustained_calibration(written, "a100_80gb_sxm")
    assert calibration.hbm_fraction == 0.937 and calibration.power_limited_clock_hz == 1.17e9
    shipped = Path(script.__file__).resolve().parent.parent / "src/opmodel/configs/calibrations"
    assert written.read_text() == (shipped / written.name).read_text()
    assert script.main(["--hardware", "h200_sxm", "--write"]) == 0
    h200 = load_sustained_calibration(tmp_path / "h200_sxm_sustained.yaml", "h200_sxm")
    assert h200.hbm_fraction is None and h200.power_limited_clock_hz is None
    assert dict(h200.power_limited_clock_hz_by_dtype) == {DType.FP8: 1.275e9}
    with pytest.raises(SystemExit, match="must be positive"):
        script.main(["--min-tflop", "0"])
    with pytest.raises(SystemExit, match="no published GEMM is that large"):
        script.main(["--min-tflop", "100"])


def test_a40_clock_from_the_community_gemm_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/validation.md: the A40's four FP16/BF16 GEMMs of >= 1 TFLOP (8192^3, 10240^3) give
    1395 MHz, the value a40_sustained.yaml ships, and are then within 6 % (0.95-1.06x); held
    out, 1024^3 and 2048^3 are within 8 % (0.92-0.98x; 0.93-0.98x before Vidur's truncated
    microseconds raised the fitted GEMM overheads, 0.97-1.01x before they were fitted per
    architecture) and 4096^3 is 0.91-0.92x. No stream table of the
    board is published, so the HBM fraction, 0.843 (0.842 before the streaming kernels' fitted
    start and drain), comes from the declared split of Vidur's
    A40 rows (192 Llama-2-7B residual adds, within 1.2 % on average); the file written is the
    one shipped."""
    script = load_script("fit_published_sustained")
    result = script.fit("a40")
    assert result.power_limited_clock_hz == 1.395e9 and result.clock_dtype is None
    assert result.stream_tb_per_s == () and result.hbm_fraction == 0.843
    assert result.fraction_rows == 192 and result.fraction_mape is not None
    assert result.fraction_mape < 0.015
    assert load_hardware("a40").utilization.memory_fraction["hbm"] == 0.843
    assert load_hardware("a40").compute.power_limited_clock_hz == 1.395e9
    train = [r for r in result.gemms if r.training]
    assert {(r.m, r.dtype) for r in train} == {
        (size, dtype) for size in (8192, 10240) for dtype in (DType.FP16, DType.BF16)
    }
    assert all(0.94 <= r.ratio <= 1.07 for r in train)
    held = {(r.m, r.dtype): r.ratio for r in result.gemms if not r.training}
    assert all(
        0.915 <= held[(s, d)] <= 0.99 for s in (1024, 2048) for d in (DType.FP16, DType.BF16)
    )
    assert all(0.905 <= held[(4096, d)] <= 0.93 for d in (DType.FP16, DType.BF16))
    monkeypatch.setattr(script, "CALIBRATIONS", tmp_path)
    assert script.main(["--hardware", "a40", "--write"]) == 0
    shipped = Path(script.__file__).resolve().parent.parent / "src/opmodel/configs/calibrations"
    written = tmp_path / "a40_sustained.yaml"
    assert written.read_text() == (shipped / written.name).read_text()
    assert load_sustained_calibration(written, "a40").power_limited_clock_hz == 1.395e9


def test_h100_pcie_clock_from_the_community_gemm_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/validation.md, "Square torch.mm runs": the H100 PCIe's four FP16/BF16 GEMMs of
    >= 1 TFLOP (issue #95) give 1035 MHz, the value h100_pcie_sustained.yaml ships (the model
    at the 1,620 MHz rating clock was 0.61-0.69x on them), and are then within 8 %; the
    held-out H800 PCIe's are checked by compare_published_torch_mm.py. No stream figure, no HBM
    fraction; the file written is the one shipped."""
    script = load_script("fit_published_sustained")
    result = script.fit("h100_pcie")
    assert result.power_limited_clock_hz == 1.035e9 and result.clock_dtype is None
    assert result.hbm_fraction is None and result.fraction_rows == 0
    assert load_hardware("h100_pcie").compute.power_limited_clock_hz == 1.035e9
    train = [r for r in result.gemms if r.training]
    assert len(train) == 4 and all(0.92 <= r.ratio <= 1.08 for r in train)
    monkeypatch.setattr(script, "CALIBRATIONS", tmp_path)
    assert script.main(["--hardware", "h100_pcie", "--write"]) == 0
    shipped = Path(script.__file__).resolve().parent.parent / "src/opmodel/configs/calibrations"
    written = tmp_path / "h100_pcie_sustained.yaml"
    assert written.read_text() == (shipped / written.name).read_text()


def test_l4_clock_from_the_community_gemm_table(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """docs/hardware.md: the L4's four FP16/BF16 GEMMs of >= 1 TFLOP (issue #120) give
    1020 MHz, the value l4_sustained.yaml ships (the model at the 2,040 MHz boost clock ran
    them about twice as fast as the 72 W board), then within 13 %; held out, 4,096^3 within
    10 % and the 1-8 ms runs of 1,024^3 and 2,048^3 0.66-0.76x in throughput (bursts); the
    file written is the one shipped."""
    script = load_script("fit_published_sustained")
    result = script.fit("l4")
    assert result.power_limited_clock_hz == 1.02e9 and result.hbm_fraction is None
    assert load_hardware("l4").compute.power_limited_clock_hz == 1.02e9
    train = [r for r in result.gemms if r.training]
    assert len(train) == 4 and all(0.95 <= r.ratio <= 1.13 for r in train)
    held = {(r.m, r.dtype): r.ratio for r in result.gemms if not r.training}
    assert all(0.95 <= held[(4096, d)] <= 1.1 for d in (DType.FP16, DType.BF16))
    assert all(0.6 <= held[(s, d)] <= 0.8 for s in (1024, 2048) for d in (DType.FP16, DType.BF16))
    monkeypatch.setattr(script, "CALIBRATIONS", tmp_path)
    assert script.main(["--hardware", "l4", "--write"]) == 0
    shipped = Path(script.__file__).resolve().parent.parent / "src/opmodel/configs/calibrations"
    written = tmp_path / "l4_sustained.yaml"
    assert written.read_text() == (shipped / written.name).read_text()
