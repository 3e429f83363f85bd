"""extended_roofline's physical properties: bigger K never faster, more SMs never slower, more
rows of a tiny batched GEMM never faster."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import (
    DType,
    LocalOp,
    OpKind,
    Phase,
    TensorRole,
    TensorSpec,
)
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models.extended_roofline import (
    ExtendedRooflineModel,
)
from tests.hypothesis_budget import examples

from ..conftest import gemm as plain_gemm

MODEL = ExtendedRooflineModel()


# The timeline tests below fix the kernel (CUTLASS's default 128x128x32 tile, the documented
# default of every omitted attr); without kernel attrs the model uses automatic selection,
# which test_omitted_kernel_attrs_use_selection covers.
FIXED_KERNEL = {"cta_tile_m": 128, "cta_tile_n": 128}


def gemm(m: int, n: int, k: int, dtype: DType = DType.BF16, **attrs: object) -> LocalOp:
    """A GEMM op with the fixed default kernel unless ``attrs`` override it."""
    return plain_gemm(m, n, k, dtype, **{**FIXED_KERNEL, **attrs})


@pytest.fixture(scope="module")
def a10() -> HardwareSpec:
    return load_hardware("a10")


_dims = st.integers(1, 6000)


@settings(max_examples=examples(40), deadline=None)
@given(m=_dims, n=_dims, k=_dims)
def test_bigger_k_is_never_faster(m: int, n: int, k: int) -> None:
    hw = load_hardware("a100_40gb_pcie")
    assert (
        MODEL.predict(gemm(m, n, 2 * k), hw).latency_s >= MODEL.predict(gemm(m, n, k), hw).latency_s
    )


def _more_sms(hw: HardwareSpec, factor: int) -> HardwareSpec:
    """The same device with ``factor`` times the SMs (and their math and SMEM throughput)."""
    sm = hw.compute.sm
    assert sm is not None
    compute = dataclasses.replace(
        hw.compute,
        sm=dataclasses.replace(sm, sm_count=sm.sm_count * factor),
        tensor_flops_per_s={d: v * factor for d, v in hw.compute.tensor_flops_per_s.items()},
        vector_flops_per_s={d: v * factor for d, v in hw.compute.vector_flops_per_s.items()},
    )
    levels = tuple(
        dataclasses.replace(lv, bandwidth_bytes_per_s=lv.bandwidth_bytes_per_s * factor)
        if lv.name in ("smem", "registers")
        else lv
        for lv in hw.memory.levels
    )
    return dataclasses.replace(
        hw, compute=compute, memory=dataclasses.replace(hw.memory, levels=levels)
    )


@settings(max_examples=examples(40), deadline=None)
@given(m=_dims, n=_dims, k=_dims)
def test_more_sms_are_never_slower(m: int, n: int, k: int) -> None:
    hw = load_hardware("a100_40gb_pcie")
    bigger = _more_sms(hw, 2)
    op = gemm(m, n, k)
    assert MODEL.predict(op, bigger).latency_s <= MODEL.predict(op, hw).latency_s * (1 + 1e-12)


def test_more_rows_of_a_tiny_batched_gemm_never_faster() -> None:
    # found by a longer hypothesis run: with the byte-weighted miss share, the extra L2 re-reads
    # of A at m = 3 hid B's DRAM misses and shortened the latency-bound stages
    l40s = load_hardware("l40s")
    times = []
    for m in (1, 3, 7):
        op = LocalOp(
            name="bgemm",
            kind=OpKind.BATCHED_GEMM,
            phase=Phase.INFERENCE,
            tensors=(
                TensorSpec(TensorRole.INPUT, (57, m, 1), DType.FP32),
                TensorSpec(TensorRole.WEIGHT, (57, 1, 513), DType.FP32),
                TensorSpec(TensorRole.OUTPUT, (57, m, 513), DType.FP32),
            ),
            attrs=FIXED_KERNEL,
        )
        times.append(MODEL.predict(op, l40s).latency_s)
    assert times == sorted(times)
