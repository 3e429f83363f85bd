"""Every model on every shipped config, and the large-GEMM sanity check against published
maximum achievable matmul throughput.

Sanity figures: Stas Bekman, "Machine Learning Engineering", compute/accelerator/README.md,
"Maximum Achievable Matmul FLOPS comparison table" (bf16 ``torch.matmul``, best shape of a
brute-force sweep): A100 SXM 267.9 TFLOP/s at 6912x16384x2048 (CUDA 12.1), H100 SXM 792.1 at
6144x17920x2816 (CUDA 12.1), MI300X 781.9 at 4096x10240x4864 (ROCm 6.2); and AMD's ROCm blog
"Measuring Max-Achievable FLOPs, part 2": MI300X 708 TFLOP/s at 4096x4864x32896 (hipBLASLt).
The issue's acceptance band is 15 %.
"""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from opmodel import LocalOp, TensorSpec
from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware import load_hardware, shipped_hardware_names
from opmodel.models.registry import get_model, model_names
from opmodel.parsing.op_file import load_op
from tests.conftest import predictable

EXAMPLES = sorted(Path(__file__).resolve().parents[2].joinpath("examples").glob("*.yaml"))

MAMF = [
    ("a100_80gb_sxm", (6912, 16384, 2048), 267.9e12),
    ("h100_sxm", (6144, 17920, 2816), 792.1e12),
    ("mi300x", (4096, 10240, 4864), 781.9e12),
    ("mi300x", (4096, 4864, 32896), 708e12),
]


def _gemm(m: int, n: int, k: int) -> LocalOp:
    return LocalOp(
        name="mamf",
        kind="gemm",
        phase="train_fwd",
        tensors=(
            TensorSpec(role="input", shape=(m, k), dtype="bf16"),
            TensorSpec(role="weight", shape=(k, n), dtype="bf16"),
            TensorSpec(role="output", shape=(m, n), dtype="bf16"),
        ),
    )


def test_there_are_examples() -> None:
    assert len(EXAMPLES) >= 10


@pytest.mark.parametrize("hardware_name", shipped_hardware_names())
@pytest.mark.parametrize("model_name", model_names())
def test_every_example_op_runs_on_every_config(hardware_name: str, model_name: str) -> None:
    hardware, model = load_hardware(hardware_name), get_model(model_name)
    for path in EXAMPLES:
        op = load_op(path)
        if not predictable(op, hardware):  # a collective on a config without links
            with pytest.raises(UnsupportedOpError, match="has no interconnect section"):
                model.predict(op, hardware)
            continue
        profile = model.predict(op, hardware)
        assert math.isfinite(profile.latency_s) and profile.latency_s > 0, path.name
        assert profile.energy_j > 0, path.name


@pytest.mark.parametrize(("hardware_name", "shape", "measured"), MAMF)
@pytest.mark.parametrize("model_name", ["extended_roofline", "effective_roofline"])
def test_large_gemm_lands_near_the_published_maximum(
    hardware_name: str, shape: tuple[int, int, int], measured: float, model_name: str
) -> None:
    m, n, k = shape
    profile = get_model(model_name).predict(_gemm(m, n, k), load_hardware(hardware_name))
    predicted = 2 * m * n * k / profile.latency_s
    assert predicted == pytest.approx(measured, rel=0.15)


def test_kernel_models_pick_the_architecture_instruction() -> None:
    op = _gemm(8192, 8192, 8192)
    expected = {"mi300x": "mfma", "b200": "tcgen05", "h200_sxm": "wgmma", "l40s": "mma_sync"}
    for name, instruction in expected.items():
        profile = get_model("effective_roofline").predict(op, load_hardware(name))
        assert profile.implementation.split("/")[1] == instruction, name
    for name in ("tpu_v4", "tpu_v5e", "tpu_v5p", "tpu_v6e", "tpu7x"):
        profile = get_model("effective_roofline").predict(op, load_hardware(name))
        assert profile.implementation == "effective_roofline/systolic"
