"""scripts/fit_fp4_overhead.py: the shipped FP4 overhead calibration is what it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.gemm.fp4_overhead import FP4_CALIBRATION_FILE, load_fp4_overhead
from tests.scripts.loader import load_script


def test_shipped_file_is_what_the_script_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/validation.md, "Block-scaled and FP4 GEMMs": Azure's three GB200 FP4 GEMMs under
    0.1 TFLOP give effective_roofline 10,311 extra cycles on sm100 (5.0 us at 2.06 GHz)."""
    script = load_script("fit_fp4_overhead")
    output = tmp_path / "fp4.yaml"
    assert script.main(["--output", str(output)]) == 0
    assert output.read_text() == FP4_CALIBRATION_FILE.read_text()
    written = load_fp4_overhead(output)
    assert written.cycles == {
        ("effective_roofline", "sm100"): 10311,
        ("extended_roofline", "sm100"): 8619,
    }
    assert written.rows == (
        "azure gb200 1024x1024x1024 nvfp4",
        "azure gb200 2048x2048x2048 nvfp4",
        "azure gb200 1024x2145x1024 nvfp4",
    )
    assert "sm100: 10,311 cycles" in capsys.readouterr().out
