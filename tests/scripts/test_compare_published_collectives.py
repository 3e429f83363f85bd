"""scripts/compare_published_collectives.py: collectives across nodes against NCCL's published
bus bandwidths."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_every_published_figure_within_two_percent(capsys: pytest.CaptureFixture[str]) -> None:
    """docs/validation.md, "Groups across nodes": DGX A100 over 2 and 4 nodes 191.5 and 190.9
    against 192 GB/s, one HDR NIC per node 23.9 against 24, one NDR NIC per rank 47.9 against
    48.5; the roofline, every link at its line rate, 1.03-1.04x."""
    script = load_script("compare_published_collectives")
    rows = script.compare()
    assert len(rows) == 4
    assert all(0.98 <= row.ratio <= 1.0 for row in rows)
    assert all(1.02 <= row.ratio <= 1.05 for row in script.compare("roofline"))
    assert script.main([]) == 0
    assert "DGX A100, 2 nodes" in capsys.readouterr().out


def test_one_node_all_reduce_against_marins_h100_time() -> None:
    """docs/validation.md, "Collectives": marin's 8 x H100 1 GiB all-reduce, ~4.06 ms, is
    0.99x under NVLink SHARP (NCCL's 128 KiB chunks in 64 loops on 16 channels,
    docs/models/collective.md) and 1.26x under NCCL's ring."""
    script = load_script("compare_published_collectives")
    ratios = {algorithm: ratio for algorithm, _, ratio in script.one_node()}
    assert ratios["nvls"] == pytest.approx(0.99, abs=0.01)
    assert ratios["ring"] == pytest.approx(1.26, abs=0.01)


def test_nvls_by_group_size_against_nccl_1455() -> None:
    """docs/validation.md, "Collectives": NVIDIA/nccl issue #1455's forced-NVLS runs on 8 H100s
    at 2-4 GiB, held out: 5-8 ranks under NVLS within 4.3 % of the published 420, 440, 460 and
    480 GB/s of bus bandwidth (1.03-1.04x at 5 and 6 ranks, whose loops' synchronisation the
    model scales down with the heads; within 1.3 % with one synchronisation for every group
    size, before 2026-12-07); 2-4 ranks, whose published runs show the ring's 365-370 GB/s,
    within 1 % under the ring."""
    script = load_script("compare_published_collectives")
    rows = script.nvls_by_ranks()
    assert len(rows) == 14
    assert all(abs(ratio - 1) < 0.045 for *_, ratio in rows)
    assert all(abs(ratio - 1) < 0.015 for ranks, *_, ratio in rows if ranks in (4, 8))
    assert {algorithm for ranks, _, algorithm, _ in rows if ranks >= 5} == {"nvls"}
