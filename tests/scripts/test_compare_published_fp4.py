"""scripts/compare_published_fp4.py: Blackwell NVFP4 GEMMs against vLLM's and Helion's
published timings, with the same tables' bf16 and fp8 GEMMs as the control."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_published_fp4_rows_against_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "Block-scaled and FP4 GEMMs": the fp8 control within 7 %, bf16
    0.98x over M, NVFP4 0.68x from M = 512 and 0.43x at M = 1 (vLLM's CUTLASS kernel's floor)."""
    script = load_script("compare_published_fp4")
    rows = script.compare()
    assert len(rows) == 2 * (11 + 11 + 7) + 15
    groups = {name: script.summary(members) for name, members in script.groups(rows).items()}
    fp8_mape, fp8_ratio = groups["vllm b200 fp8_e4m3"]
    assert fp8_mape < 0.08 and 0.93 < fp8_ratio < 1.03
    assert 0.93 < groups["vllm b200 bf16"][1] < 1.03
    assert 0.62 < groups["vllm b200 nvfp4 M >= 512"][1] < 0.74
    assert 0.38 < groups["helion (b200, M = 1)"][1] < 0.48
    assert all(r.config == "b200" for r in rows if r.source.startswith("helion"))
    assert script.main() == 0
    out = capsys.readouterr().out
    assert "helion #3278" in out and "vllm gb200 nvfp4" in out
