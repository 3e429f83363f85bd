"""scripts/compare_published_attention.py: the model against FA3's published H100 throughput."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_fa3_points_within_the_documented_error(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md: 11.0 % MAPE over the 36 FA3 points of Shah et al. (2024, Fig. 5),
    4.8 % from 4k tokens up (23.6 % and 10.0 % before the exposed exponentials and the query
    blocks' start), with a little slack."""
    script = load_script("compare_published_attention")
    points = script.compare()
    fa3 = [p for p in points if p.implementation == "fa3"]
    assert len(points) == 72 and len(fa3) == 36
    _, mape, _ = script.summary(fa3)
    _, long_mape, long_geomean = script.summary([p for p in fa3 if p.seq >= 4096])
    assert mape <= 0.115
    assert long_mape <= 0.055 and 0.93 <= long_geomean <= 1.03
    assert script.main([]) == 0
    out = capsys.readouterr().out
    assert "fa3    >= 4k  n= 18" in out and "cudnn  all    n= 36" in out


def test_figure_shapes_hold_16k_tokens_and_2048_wide_heads() -> None:
    script = load_script("compare_published_attention")
    op = script.attention_op(2048, 64, causal=True)
    q = op.tensors[0]
    assert q.shape == (8, 32, 2048, 64) and op.attrs["causal"] is True
