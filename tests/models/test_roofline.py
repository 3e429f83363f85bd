"""RooflineModel: latency, energy and engine choice derived by hand on shipped configs."""

from __future__ import annotations

import pytest

from opmodel import (
    DType,
    Engine,
    LocalOp,
    OpModelError,
    TensorSpec,
    UnsupportedDTypeError,
)
from opmodel.core.enums import Bound
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.roofline import RooflineDiagnostics, RooflineModel

from ..conftest import gemm

MODEL = RooflineModel()


def test_contract_gemm_on_gpu_generic(gpu: HardwareSpec) -> None:
    profile = MODEL.predict(gemm(4096, 32768, 8192), gpu)
    flops = 2 * 4096 * 32768 * 8192  # 2.199e12
    compute_s = flops / 307.2e12  # bf16 tensor peak of gpu_generic
    hbm_bytes = (4096 * 8192 + 8192 * 32768 + 4096 * 32768) * 2
    hbm_s = 4.0e-7 + hbm_bytes / 1.6e12
    assert compute_s > hbm_s
    assert profile.latency_s == pytest.approx(compute_s, rel=1e-12)
    assert profile.flops == flops
    assert profile.engine is Engine.TENSOR
    assert profile.implementation == "roofline/tensor"
    assert profile.traffic["hbm"].read_bytes == (4096 * 8192 + 8192 * 32768) * 2
    assert profile.energy.tensor_j == pytest.approx(flops * 8.138e-13)
    assert profile.energy.memory_j["hbm"] == pytest.approx(hbm_bytes * 3.2e-11)
    assert profile.energy.static_j == pytest.approx(50.0 * compute_s)
    diag = profile.diagnostics
    assert isinstance(diag, RooflineDiagnostics)
    assert diag.bound is Bound.TENSOR
    assert diag.hbm_time_s == pytest.approx(hbm_s)


def test_softmax_is_memory_bound_on_a100(a100: HardwareSpec) -> None:
    op = LocalOp(
        name="s",
        kind="softmax",
        phase="train_fwd",
        tensors=(
            TensorSpec("input", (1024, 1024), "bf16"),
            TensorSpec("output", (1024, 1024), "bf16"),
        ),
    )
    profile = MODEL.predict(op, a100)
    moved = 2 * 1024 * 1024 * 2  # read + write, 2 bytes each
    hbm_s = 4.0e-7 + moved / 1.555e12
    vector_s = 5 * 1024 * 1024 / 19.5e12  # fp32 vector peak
    assert hbm_s > vector_s
    assert profile.latency_s == pytest.approx(hbm_s)
    assert profile.engine is Engine.VECTOR
    assert profile.diagnostics.bound is Bound.MEMORY
    assert profile.energy.vector_j == pytest.approx(5 * 1024 * 1024 * 9.367e-12)


def test_fp32_gemm_runs_on_the_vector_engine(a100: HardwareSpec) -> None:
    profile = MODEL.predict(gemm(2048, 2048, 2048, DType.FP32), a100)
    assert profile.engine is Engine.VECTOR
    assert profile.latency_s == pytest.approx(2 * 2048**3 / (108 * 128 * 1.41e9))


def test_tf32_compute_dtype_uses_tensor_cores(a100: HardwareSpec) -> None:
    profile = MODEL.predict(gemm(2048, 2048, 2048, DType.FP32, compute_dtype="tf32"), a100)
    assert profile.engine is Engine.TENSOR
    assert profile.latency_s == pytest.approx(2 * 2048**3 / (108 * 1024 * 1.41e9))


def test_copy_is_pure_memory(a100: HardwareSpec) -> None:
    op = LocalOp(
        name="c",
        kind="copy",
        phase="train_fwd",
        tensors=(TensorSpec("input", (1000,), "bf16"), TensorSpec("output", (1000,), "fp32")),
    )
    profile = MODEL.predict(op, a100)
    assert profile.engine is Engine.MEMORY
    assert profile.flops == 0
    assert profile.latency_s == pytest.approx(4.0e-7 + 6000 / 1.555e12)


def test_utilisation_factors_slow_the_bound(tmp_path: object, gpu: HardwareSpec) -> None:
    import dataclasses

    derated = dataclasses.replace(
        gpu, utilization=dataclasses.replace(gpu.utilization, tensor_fraction=0.5)
    )
    op = gemm(4096, 4096, 4096)
    assert MODEL.predict(op, derated).latency_s == pytest.approx(
        2 * MODEL.predict(op, gpu).latency_s
    )


def test_dtype_without_throughput_is_an_error() -> None:
    tpu = load_hardware("tpu_generic")
    with pytest.raises(UnsupportedDTypeError) as info:
        MODEL.predict(gemm(8, 8, 8, DType.FP64), tpu)
    assert str(info.value) == (
        "hardware 'tpu_generic' has no throughput for dtype fp64 "
        "(tensor: bf16, int8; vector: fp32, bf16)"
    )


def test_wrong_argument_types_are_refused(gpu: HardwareSpec) -> None:
    with pytest.raises(OpModelError, match="expected a LocalOp and a HardwareSpec"):
        MODEL.predict("gemm", gpu)  # type: ignore[arg-type]
    hint = r"\(got LocalOp, str\); load the config first: load_hardware\('h100_sxm'\)$"
    with pytest.raises(OpModelError, match=hint):
        MODEL.predict(gemm(8, 8, 8), "h100_sxm")  # type: ignore[arg-type]


def test_at_clock_slows_compute_bound_ops(a100: HardwareSpec) -> None:
    op = gemm(8192, 8192, 8192)
    fast = MODEL.predict(op, a100).latency_s
    slow = MODEL.predict(op, a100.at_clock(0.705e9)).latency_s
    assert slow == pytest.approx(2 * fast)


def test_every_example_on_every_shipped_config() -> None:
    from opmodel.hardware import shipped_hardware_names
    from opmodel.parsing import load_op

    from ..conftest import EXAMPLES, predictable

    for name in shipped_hardware_names():
        hardware = load_hardware(name)
        for op in map(load_op, sorted(EXAMPLES.glob("*.yaml"))):
            if not predictable(op, hardware):
                continue
            profile = MODEL.predict(op, hardware)
            assert profile.latency_s > 0 and profile.energy_j > 0, (name, op.name)
