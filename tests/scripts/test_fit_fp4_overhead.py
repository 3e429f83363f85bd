"""scripts/fit_fp4_overhead.py: the shipped FP4 overhead calibration is what it writes."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.gemm.fp4_overhead import FP4_CALIBRATION_FILE, load_fp4_overhead
from tests.scripts.loader import load_script


def test_shipped_file_is_what_the_script_writes(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """docs/validation.md, "Block-scaled and FP4 GEMMs": torchao's four B200 NVFP4 GEMMs under
    0.1 TFLOP (profiler kernel times) give effective_roofline 5,846 extra cycles on sm100 (3.2 us
    at 1.86 GHz)."""
    script = load_script("fit_fp4_overhead")
    output = tmp_path / "fp4.yaml"
    assert script.main(["--output", str(output)]) == 0
    assert output.read_text() == FP4_CALIBRATION_FILE.read_text()
    written = load_fp4_overhead(output)
    assert written.cycles == {
        ("effective_roofline", "sm100"): 5846,
        ("extended_roofline", "sm100"): 3808,
    }
    assert written.rows == tuple(
        f"torchao b200 {n}x{n}x{n} nvfp4" for n in (1024, 1536, 2048, 3072)
    )
    assert "sm100: 5,846 cycles" in capsys.readouterr().out
