"""Which ATen vectorization a measured PyTorch build and GPU have (opmodel.measure.aten)."""

from __future__ import annotations

import pytest

from opmodel.measure.aten import aten_uses_128bit_vectors, sdpa_runs_cudnn


@pytest.mark.parametrize(
    ("version", "architecture", "expected"),
    [
        ("2.11.0+cu130", "sm90", True),  # the H200 run: ncu shows vectorized_elementwise_kernel<8>
        ("2.7.1", "sm100", True),
        ("2.7.0", "sm90", True),
        ("2.6.0", "sm90", False),  # before PR #145746's release
        ("2.3.1+cu121", "sm90", False),  # Sarathi-Serve's torch of Vidur's profiles
        ("2.11.0", "sm80", False),  # outside the vec8 gate
        ("2.11.0", None, False),
        ("nightly", "sm90", False),
    ],
)
def test_version_and_architecture(version: str, architecture: str | None, expected: bool) -> None:
    assert aten_uses_128bit_vectors(version, architecture) is expected


@pytest.mark.parametrize(
    ("version", "architecture", "expected"),
    [
        ("2.11.0+cu130", "sm90", True),  # the H200 run: ncu shows cudnn_generated_..._sdpa_sm90
        ("2.12.0", "sm100", True),
        ("2.10.0", "sm90", False),  # its wheels' cuDNN is under the 9.15 preference gate
        ("2.11.0", "sm80", False),  # the gate admits compute capability 9.0 and 10.0 only
        ("2.11.0", "sm89", False),
        ("2.11.0", None, False),
        ("main", "sm90", False),
    ],
)
def test_sdpa_runs_cudnn(version: str, architecture: str | None, expected: bool) -> None:
    assert sdpa_runs_cudnn(version, architecture) is expected
