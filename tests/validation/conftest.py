"""Shared fixtures of the validation tests."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.validation.op_latency import OpLatencyResult, load_op_rows, validate_op_latency

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="session")
def shipped() -> OpLatencyResult:
    """effective_roofline on every shipped op row (about 15 s; shared by test_op_latency.py
    and test_op_latency_liger.py)."""
    rows, skipped = load_op_rows(REPO / "data")
    assert len(rows) == 104366 and not skipped
    return validate_op_latency(rows, "effective_roofline")
