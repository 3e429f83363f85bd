"""Shared fixtures: shipped hardware and small op builders used across the suite."""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path
from types import ModuleType

import pytest
from hypothesis import settings

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from tests.hypothesis_budget import SCALE, examples

# CI runs the property tests on a fixed example sequence so that a submission's result does not
# depend on the draw; local runs keep exploring new examples.
settings.register_profile("ci", derandomize=True, print_blob=True)
# tests without their own count draw hypothesis's 100, scaled like the rest (hypothesis_budget.py)
settings.register_profile("scaled", max_examples=examples(100), deadline=None, print_blob=True)
if os.environ.get("CI"):
    settings.load_profile("ci")
elif SCALE > 1:
    settings.load_profile("scaled")

REPO = Path(__file__).resolve().parent.parent
EXAMPLES = REPO / "examples"


def load_example(name: str) -> ModuleType:
    """``examples/<name>.py``, imported from its path (the folder is not a package)."""
    spec = importlib.util.spec_from_file_location(name, EXAMPLES / f"{name}.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def predictable(op: LocalOp, hardware: HardwareSpec) -> bool:
    """False for a collective on a config without an ``interconnect`` section, which every
    model refuses in one line (tests/models/test_collective.py); True otherwise."""
    return op.kind is not OpKind.COLLECTIVE or hardware.interconnect is not None


@pytest.fixture(scope="session")
def gpu() -> HardwareSpec:
    return load_hardware("gpu_generic")


@pytest.fixture(scope="session")
def a100() -> HardwareSpec:
    return load_hardware("a100_40gb_pcie")


def gemm(m: int, n: int, k: int, dtype: DType = DType.BF16, **attrs: object) -> LocalOp:
    """A plain GEMM op C[m,n] = A[m,k] @ B[k,n]."""
    return LocalOp(
        name="gemm",
        kind=OpKind.GEMM,
        phase=Phase.TRAIN_FWD,
        tensors=(
            TensorSpec(TensorRole.INPUT, (m, k), dtype),
            TensorSpec(TensorRole.WEIGHT, (k, n), dtype),
            TensorSpec(TensorRole.OUTPUT, (m, n), dtype),
        ),
        attrs=attrs,  # type: ignore[arg-type]
    )
