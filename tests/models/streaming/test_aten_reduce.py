"""ATen's reduce kernel: setReduceConfig's launch by hand for whole-tensor and row reductions,
the vectorization rule by dtype and function, and the reduction op's route to it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.streaming import StreamingEvaluation
from opmodel.models.streaming.aten_reduce import aten_reduce_kernel, vectorized

A100 = load_hardware("a100_40gb_pcie")  # 108 SMs of 2,048 threads
SM = A100.compute.sm
assert SM is not None
H100_SM = load_hardware("h100_sxm").compute.sm
assert H100_SM is not None
MODEL = get_model("effective_roofline")


def _reduction(shape: tuple[int, ...], out: tuple[int, ...], dtype: DType, fn: str) -> LocalOp:
    return LocalOp(
        name="r",
        kind=OpKind.REDUCTION,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, dtype),
            TensorSpec(TensorRole.OUTPUT, out, dtype),
        ),
        attrs={"function": fn},
    )


def test_whole_tensor_sum_splits_over_ctas() -> None:
    # 2^30 fp32 in one row: 512 threads (dim0 = 2^28 vectors > 512); 2^21 values a thread;
    # target = 108 x (2048 / 512) = 432; ctas = max(min(432, 2^21 / 16), 2^21 / 256) = 8192
    k = aten_reduce_kernel(1, 2**30, 4, "sum", SM)
    assert (k.ctas, k.threads_per_cta) == (8192, 512)
    assert k.serial_loads == 64  # 256 values a thread, 4 a round trip
    assert k.elements_per_cta == 2**30 // 8192
    assert k.reductions == 2  # the block's, then the last CTA's over the partials
    assert k.registers_per_thread == 32


def test_long_rows_take_one_cta_each() -> None:
    # 81,920 rows of 81,920 fp32 (torch.amax(a, 1)): dim0 = 20,480 -> width 32, height 16;
    # 2,560 values a lane >= 256 -> split over the 16 warps: 160 a thread, below 256, so no
    # cross-CTA split: a CTA a row, 40 round trips
    k = aten_reduce_kernel(81920, 81920, 4, "max", SM)
    assert (k.ctas, k.threads_per_cta, k.serial_loads, k.reductions) == (81920, 512, 40, 1)
    assert k.elements_per_cta == 81920


def test_short_rows_share_a_cta() -> None:
    # 1,024 rows of 256 fp16 summed: not vectorized (16-bit sum), dim0 = 256 -> width 32,
    # height 16; 8 values a lane < min(16 x 16, 256): each warp row takes its own output
    k = aten_reduce_kernel(1024, 256, 2, "sum", SM)
    assert (k.ctas, k.threads_per_cta, k.serial_loads, k.reductions) == (64, 512, 2, 1)
    assert k.elements_per_cta == 16 * 256
    # fp32 rows of 256 are vectorized: dim0 = 64 -> width 32, height 16 again
    assert aten_reduce_kernel(1024, 256, 4, "sum", SM).ctas == 64


def test_vectorized_by_dtype_and_function() -> None:
    assert vectorized(4096, 4, "sum") and vectorized(4096, 2, "max")
    assert not vectorized(4096, 2, "sum") and not vectorized(4096, 2, "mean")
    assert not vectorized(128, 4, "sum")  # dim0 > 128 is required


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="outputs, length"):
        aten_reduce_kernel(0, 16, 4, "sum", SM)


def test_reduction_op_runs_the_reduce_kernel() -> None:
    p = MODEL.predict(_reduction((2**30,), (1,), DType.FP32, "sum"), A100)
    assert isinstance(p.diagnostics, StreamingEvaluation)
    assert (p.diagnostics.kernel.name, p.diagnostics.kernel.ctas) == ("reduce_kernel", 8192)
    # 4.29 GB read in one pass: no faster than the datasheet's 1,555 GB/s allows
    assert p.latency_s >= 2**32 / 1.555e12


@given(
    outputs=st.integers(1, 1 << 20),
    length=st.integers(1, 1 << 20),
    element_bytes=st.sampled_from([2, 4, 8]),
    function=st.sampled_from(["sum", "mean", "max", "min"]),
)
def test_launch_covers_every_element(
    outputs: int, length: int, element_bytes: int, function: str
) -> None:
    k = aten_reduce_kernel(outputs, length, element_bytes, function, H100_SM)
    assert 1 <= k.threads_per_cta <= 512
    assert k.ctas * k.elements_per_cta >= outputs * length
    # every thread's share of its CTA fits in its round trips of 4 values
    assert k.serial_loads * 4 * k.threads_per_cta >= k.elements_per_cta
