"""ATen's reduce kernel: setReduceConfig's launch by hand for whole-tensor and row reductions,
the vectorization rule by dtype and function, and the reduction op's route to it."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpModelError
from opmodel.core.views_reduction import ReductionView
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.streaming import StreamingEvaluation
from opmodel.models.streaming.aten_reduce import (
    LAUNCHES,
    ReduceShape,
    aten_reduce_kernel,
    output_vector,
    vectorized,
)

A100 = load_hardware("a100_40gb_pcie")  # 108 SMs of 2,048 threads
SM = A100.compute.sm
assert SM is not None
H100_SM = load_hardware("h100_sxm").compute.sm
assert H100_SM is not None
MODEL = get_model("effective_roofline")


def _reduction(
    shape: tuple[int, ...], out: tuple[int, ...], dtype: DType, fn: str, **attrs: object
) -> LocalOp:
    return LocalOp(
        name="r",
        kind=OpKind.REDUCTION,
        phase=Phase.INFERENCE,
        tensors=(
            TensorSpec(TensorRole.INPUT, shape, dtype),
            TensorSpec(TensorRole.OUTPUT, out, dtype),
        ),
        attrs={"function": fn, **attrs},
    )


def test_whole_tensor_sum_splits_over_ctas() -> None:
    # 2^30 fp32 in one row: 512 threads (dim0 = 2^28 vectors > 512); 2^21 values a thread;
    # target = 108 x (2048 / 512) = 432; ctas = max(min(432, 2^21 / 16), 2^21 / 256) = 8192
    k = aten_reduce_kernel(ReduceShape(1, 2**30, 4, "sum"), SM)
    assert (k.ctas, k.threads_per_cta) == (8192, 512)
    assert k.serial_loads == 64  # 256 values a thread, 4 a round trip
    assert k.elements_per_cta == 2**30 // 8192
    assert k.reductions == 2  # the block's, then the last CTA's over the partials
    assert k.registers_per_thread == 32


def test_long_rows_take_one_cta_each() -> None:
    # 81,920 rows of 81,920 fp32 (torch.amax(a, 1)): dim0 = 20,480 -> width 32, height 16;
    # 2,560 values a lane >= 256 -> split over the 16 warps: 160 a thread, below 256, so no
    # cross-CTA split: a CTA a row, 40 round trips
    k = aten_reduce_kernel(ReduceShape(81920, 81920, 4, "max"), SM)
    assert (k.ctas, k.threads_per_cta, k.serial_loads, k.reductions) == (81920, 512, 40, 1)
    assert k.name == LAUNCHES[1]
    assert k.elements_per_cta == 81920


def test_short_rows_share_a_cta() -> None:
    # 1,024 rows of 256 fp16 summed: not vectorized (16-bit sum), dim0 = 256 -> width 32,
    # height 16; 8 values a lane < min(16 x 16, 256): each warp row takes its own output
    k = aten_reduce_kernel(ReduceShape(1024, 256, 2, "sum"), SM)
    assert (k.ctas, k.threads_per_cta, k.serial_loads, k.reductions) == (64, 512, 2, 1)
    assert k.name == LAUNCHES[0]
    assert k.elements_per_cta == 16 * 256
    # fp32 rows of 256 are vectorized: dim0 = 64 -> width 32, height 16 again
    assert aten_reduce_kernel(ReduceShape(1024, 256, 4, "sum"), SM).ctas == 64


def test_vectorized_by_dtype_and_function() -> None:
    assert vectorized(4096, 4, "sum") and vectorized(4096, 2, "max")
    assert not vectorized(4096, 2, "sum") and not vectorized(4096, 2, "mean")
    assert not vectorized(128, 4, "sum")  # dim0 > 128 is required


def test_bad_arguments_are_one_line_errors() -> None:
    with pytest.raises(ValueError, match="outputs, length"):
        aten_reduce_kernel(ReduceShape(0, 16, 4, "sum"), SM)


def test_reduction_op_runs_the_reduce_kernel() -> None:
    p = MODEL.predict(_reduction((2**30,), (1,), DType.FP32, "sum"), A100)
    assert isinstance(p.diagnostics, StreamingEvaluation)
    assert (p.diagnostics.kernel.name, p.diagnostics.kernel.ctas) == (LAUNCHES[2], 8192)
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
    k = aten_reduce_kernel(ReduceShape(outputs, length, element_bytes, function), H100_SM)
    assert 1 <= k.threads_per_cta <= 512
    assert k.ctas * k.elements_per_cta >= outputs * length
    # every thread's share of its CTA fits in its round trips of 4 values
    assert k.serial_loads * 4 * k.threads_per_cta >= k.elements_per_cta


def test_leading_axis_sum_splits_the_tokens() -> None:
    # dy.sum(0) over [8192, 4096] fp32: 4-output vectors (4096 % 4 == 0), so blocks of at most
    # 128 threads: width 32 (dim0 = 1024 vectors), height 4; 8192 values >= min(64, 256) ->
    # the warps split them (2048 each), a CTA has 128 outputs, grid 32; target 108 x 16 =
    # 1728: ctas = max(min(54, 128), 8) = 54 a run of outputs, 38 values a thread, 10 trips
    k = aten_reduce_kernel(ReduceShape(4096, 8192, 4, "sum", inner_outputs=4096), SM)
    assert (k.ctas, k.threads_per_cta, k.serial_loads, k.reductions) == (32 * 54, 128, 10, 2)
    assert k.elements_per_cta == -(-128 * 8192 // 54)


def test_output_vector_divides_the_run() -> None:
    assert [output_vector(n) for n in (4096, 6, 7, 1)] == [4, 2, 1, 1]


def test_short_leading_axis_keeps_one_thread_per_output_run() -> None:
    # x [8, 4096] summed over its 8 rows: 8 values < min(16 x 8, 256): the warp rows take
    # their own outputs (no shared-memory reduction), 2 round trips of 4
    k = aten_reduce_kernel(ReduceShape(4096, 8, 2, "sum", inner_outputs=4096), SM)
    assert (k.reductions, k.serial_loads) == (0, 2)


def test_dim_attr_gives_the_leading_axis_view() -> None:
    op = _reduction((8192, 4096), (4096,), DType.FP32, "sum", dim=[0])
    view = op.view
    assert isinstance(view, ReductionView)
    assert (view.reduce_length, view.inner_outputs, view.reduced_block) == (8192, 4096, True)
    kept = _reduction((8, 16, 32), (8, 1, 1), DType.FP32, "sum", dim=[-1, 1]).view
    assert isinstance(kept, ReductionView)
    assert (kept.reduce_length, kept.inner_outputs) == (512, 1)
    split = _reduction((8, 16, 32), (16,), DType.FP32, "sum", dim=[0, 2]).view
    assert isinstance(split, ReductionView)
    assert (split.reduce_length, split.reduced_block) == (256, False)


@pytest.mark.parametrize(
    ("dim", "out", "message"),
    [
        ([0], (8192,), r"output shape \[8192\] must be the input's \[8192, 4096\] without axes"),
        ([2], (4096,), "attrs.dim: axis 2 is out of range for an input of 2 dims"),
        ([0, -2], (4096,), "attrs.dim: each axis at most once"),
        (0, (4096,), "attrs.dim: must be a non-empty list of integers"),
    ],
)
def test_bad_dim_is_a_one_line_error(dim: object, out: tuple[int, ...], message: str) -> None:
    with pytest.raises(OpModelError, match=message):
        _ = _reduction((8192, 4096), out, DType.FP32, "sum", dim=dim).view


def test_leading_axis_reduction_predicts_a_dram_stream() -> None:
    p = MODEL.predict(_reduction((8192, 4096), (4096,), DType.BF16, "sum", dim=[0]), A100)
    assert isinstance(p.diagnostics, StreamingEvaluation)
    assert p.diagnostics.kernel.ctas == 32 * 54
    assert p.latency_s >= 8192 * 4096 * 2 / 1.555e12


@given(
    outputs=st.integers(1, 1 << 16),
    length=st.integers(1, 1 << 16),
    inner=st.sampled_from([2, 3, 4, 8, 4096]),
)
def test_leading_launch_covers_every_element(outputs: int, length: int, inner: int) -> None:
    k = aten_reduce_kernel(ReduceShape(outputs, length, 2, "sum", inner_outputs=inner), H100_SM)
    assert 1 <= k.threads_per_cta <= 512
    assert k.ctas * k.elements_per_cta >= outputs * length
