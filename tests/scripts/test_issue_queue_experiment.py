"""scripts/issue_queue_experiment.py: the closed queue's limits, by hand."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_one_warp_adds_its_memory_and_issue_time() -> None:
    """N = 1: the warp alternates, nothing overlaps: 3 + 2 = 5."""
    queue = load_script("issue_queue_experiment").closed_queue_s
    assert queue(3.0, 2.0, 1.0) == pytest.approx(5.0)


def test_many_warps_approach_the_larger_bound() -> None:
    """N -> infinity: max(A, D); with 16 warps and A = 4, D = 3:
    (7 + sqrt(1 + 48 / 16)) / 2 = (7 + 2) / 2 = 4.5, between max and sum."""
    queue = load_script("issue_queue_experiment").closed_queue_s
    assert queue(4.0, 3.0, 16.0) == pytest.approx(4.5)
    assert queue(4.0, 3.0, 1e12) == pytest.approx(4.0)
    assert queue(4.0, 0.0, 16.0) == pytest.approx(4.0)
