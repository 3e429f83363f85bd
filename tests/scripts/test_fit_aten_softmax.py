"""scripts/fit_aten_softmax.py: the slope by hand, and the shipped file is what it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.streaming.aten_softmax import CALIBRATION_FILE, load_aten_softmax_calibration
from tests.scripts.loader import load_script

REPO = Path(__file__).resolve().parents[2]


def test_slope_has_one_intercept_per_row_count() -> None:
    """Two row counts offset by 5 µs, both 0.1 µs per iteration: the slope is 0.1 µs, not the
    steeper line one regression through all points would give."""
    script = load_script("fit_aten_softmax")
    points = [(1, 16, 1.6e-6), (1, 64, 6.4e-6), (512, 16, 6.6e-6), (512, 32, 8.2e-6)]
    assert script.slope_s(points) == pytest.approx(1e-7)
    with pytest.raises(ValueError, match="two row lengths"):
        script.slope_s([(1, 16, 1e-6), (2, 32, 2e-6)])


def test_shipped_calibration_is_what_the_script_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    script = load_script("fit_aten_softmax")
    out = tmp_path / "aten.yaml"
    assert script.main(["--data-dir", str(REPO / "data"), "--output", str(out)]) == 0
    printed = capsys.readouterr().out
    assert "2-byte elements: 9 rows" in printed and "training 4 rows" in printed
    # the register softmax's stall factor, on its 8 rows of 8192 and 65,536 rows
    assert "register softmax, factor = 1.2: training 8 rows" in printed
    assert load_aten_softmax_calibration(out) == load_aten_softmax_calibration(CALIBRATION_FILE)


def test_no_training_rows_is_an_error(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    script = load_script("fit_aten_softmax")
    args = ["--data-dir", str(REPO / "data"), "--output", str(tmp_path / "x.yaml")]
    assert script.main([*args, "--hardware", "a10"]) == 1
    assert "no training rows for a10" in capsys.readouterr().err
