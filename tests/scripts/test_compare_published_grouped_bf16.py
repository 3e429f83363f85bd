"""scripts/compare_published_grouped_bf16.py: bf16 grouped GEMMs against PyTorch's published
``torch._grouped_mm`` times."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_group_sizes_from_offsets() -> None:
    """``offs`` holds each group's end row: the sizes are its differences, from 0."""
    script = load_script("compare_published_grouped_bf16")
    assert script.group_sizes((272, 832, 1744)) == [272, 560, 912]
    assert sum(script.group_sizes(script.TORCHAO_H100[0][2])) == 8192


def test_grouped_bf16_rows_against_the_model(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "BF16 grouped GEMMs", nothing fitted: torchao's two H100 rows at
    0.80x, PyTorch's H200 batched call at 0.91x and its one-row-a-group call at 0.20x."""
    script = load_script("compare_published_grouped_bf16")
    rows = script.compare()
    assert [(r.config, r.groups) for r in rows] == [
        ("h100_sxm", 16), ("h100_sxm", 16), ("h200_sxm", 16), ("h200_sxm", 128),
    ]  # fmt: skip
    assert all(0.75 < r.ratio < 0.85 for r in rows[:2])
    assert 0.86 < rows[2].ratio < 0.96
    assert 0.15 < rows[3].ratio < 0.25
    bound = script.groups(rows)["compute-bound (>= 16 rows a group)"]
    assert len(bound) == 3
    assert script.main() == 0
    assert "torchao #2490" in capsys.readouterr().out
