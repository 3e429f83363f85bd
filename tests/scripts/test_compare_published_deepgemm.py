"""scripts/compare_published_deepgemm.py: FP8 dense and grouped (MoE) GEMMs against
DeepGEMM's published H800 table."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_deepgemm_rows_against_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "FP8 and grouped GEMMs: DeepGEMM's H800 table", nothing fitted:
    18 dense FP8 GEMMs 9.6 % (1.02x; 8.8 %, 0.99x, before Vidur's truncated microseconds raised
    the fitted sm_90 GEMM overhead: its 6-7 us GEMMs are 1.32-1.34x now), 10 grouped ones 8.4 %
    (0.92x; masked 4 x 256 at 0.74x, the worst); weight gradients accumulated in fp32: 9 dense
    8.5 % (0.91x), 5 K-grouped (the experts') 13.8 % (0.86x)."""
    script = load_script("compare_published_deepgemm")
    rows = script.compare()
    assert [r.layout for r in rows].count("dense") == 18 and len(rows) == 28 + 9 + 5
    summary = load_script("ratio_summary").row_summary
    groups = {name: summary(members) for name, members in script.groups(rows).items()}
    dense_mape, dense_ratio = groups["dense"]
    assert dense_mape < 0.10 and 0.95 < dense_ratio < 1.03
    grouped_mape, grouped_ratio = groups["grouped"]
    assert grouped_mape < 0.10 and 0.86 < grouped_ratio < 0.96
    assert groups["wgrad"][0] < 0.10 and 0.86 < groups["wgrad"][1] < 0.96
    assert groups["k-grouped"][0] < 0.16 and 0.82 < groups["k-grouped"][1] < 0.90
    assert all(0.7 < r.ratio < 1.36 for r in rows)
    assert script.main() == 0
    assert "masked" in capsys.readouterr().out
