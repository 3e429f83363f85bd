"""ATen's softmax backward: the kernel choice by row (hand-derived from SoftMax.cu's host
code), the grad * output multiply before it, and what the two kernels cost together."""

from __future__ import annotations

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole
from opmodel.core.errors import OpValidationError
from opmodel.models.effective_roofline.row_backward_op import RowBackwardEvaluation
from opmodel.models.streaming.softmax_backward import (
    block_backward_threads,
    is_warp_backward,
    softmax_backward_kernel,
    uses_shared_row,
)
from tests.models.streaming.ops import H100, MODEL, op_of


def softmax_backward(rows: int, length: int, dtype: DType, **attrs: object) -> LocalOp:
    shape = (rows, length)
    roles = (TensorRole.INPUT, TensorRole.GRAD, TensorRole.OUTPUT)
    tensors = tuple((role, shape) for role in roles)
    return op_of(
        OpKind.SOFTMAX, Phase.TRAIN_BWD, tensors, dtype, {"implementation": "pytorch", **attrs}
    )


@pytest.mark.parametrize(
    ("length", "element_bytes", "warp"),
    [
        (1024, 2, True),  # 1,024 elements, 2 KiB
        (1024, 4, True),  # 4 KiB: the byte limit exactly
        (1025, 2, False),
        (2048, 2, False),  # the forward's warp kernel takes 2,048; the backward does not
        (1024, 8, False),  # fp64: 8 KiB
    ],
)
def test_warp_backward_up_to_1024_elements_and_4_kib(
    length: int, element_bytes: int, warp: bool
) -> None:
    assert is_warp_backward(length, element_bytes) is warp


@pytest.mark.parametrize(
    ("length", "element_bytes", "threads"),
    [
        # SoftMax_getBlockSize(ILP = 16 / bytes, length): a power of two >= min(length / ILP,
        # 1024) / 2, at least a warp
        (2048, 2, 128),  # 2048 / 8 = 256, halved: 128
        (4096, 2, 256),
        (16384, 2, 512),  # min(2048, 1024) / 2
        (4096, 4, 512),  # ILP 4: 1024 / 2
        (1100, 2, 128),  # 1100 / 8 = 137, halved 68: the next power of two
        (1025, 4, 128),  # 256 / 2
    ],
)
def test_block_backward_threads(length: int, element_bytes: int, threads: int) -> None:
    assert block_backward_threads(length, element_bytes) == threads


def test_shared_row_and_kernel_structures() -> None:
    # 48 KiB per CTA less 4 bytes per warp: under 24,544 bf16 elements at 16 warps, not 24,576
    assert uses_shared_row(16384, 2, 512)
    assert not uses_shared_row(24576, 2, 512)
    assert not uses_shared_row(16388, 2, 512)  # not a whole number of 8-element vectors
    smem = softmax_backward_kernel(4096, 4096, 2)
    assert (smem.name, smem.threads_per_cta, smem.ctas) == ("cunn_SoftMaxBackwardSmem", 256, 4096)
    # 4096 / (256 x 8) = 2 vector loads a pass, two passes (sum, then write), one reduction
    assert (smem.serial_loads, smem.global_passes, smem.reductions) == (2, 2, 1)
    assert softmax_backward_kernel(4096, 32768, 2).name == "cunn_SoftMaxBackward"
    warp = softmax_backward_kernel(4096, 512, 2)
    assert (warp.name, warp.global_passes, warp.reductions) == ("softmax_warp_backward", 1, 1)


def test_multiply_then_backward() -> None:
    op = softmax_backward(16384, 4096, DType.BF16)
    profile = MODEL.predict(op, H100)
    diagnostics = profile.diagnostics
    assert isinstance(diagnostics, RowBackwardEvaluation) and diagnostics.grad_product
    product, kernel = diagnostics.grad_product, diagnostics.grad_input
    assert product.kernel.name == "vectorized_elementwise_kernel"
    assert kernel.kernel.name == "cunn_SoftMaxBackwardSmem"
    assert profile.latency_s == pytest.approx(product.latency_s + kernel.latency_s)
    tensor = 16384 * 4096 * 2
    # the multiply reads dy and y and writes tmp; the backward writes dx: at least 2 reads and
    # 2 writes of a tensor go through HBM, the multiply's write of tmp included
    assert product.dram_read_bytes == pytest.approx(2 * tensor)
    assert profile.traffic["hbm"].write_bytes >= 2 * tensor
    # 16-byte vectors (PyTorch's 128-bit vectorization) make the multiply no slower
    wide = MODEL.predict(softmax_backward(16384, 4096, DType.BF16, aten_128bit_vectors=True), H100)
    wide_diagnostics = wide.diagnostics
    assert isinstance(wide_diagnostics, RowBackwardEvaluation) and wide_diagnostics.grad_product
    assert wide_diagnostics.grad_product.latency_s <= product.latency_s
    assert wide_diagnostics.grad_product.kernel.elements_per_cta == 128 * 8


def test_fused_softmax_backward_is_one_kernel() -> None:
    fused = MODEL.predict(softmax_backward(16384, 4096, DType.BF16, implementation="fused"), H100)
    diagnostics = fused.diagnostics
    assert isinstance(diagnostics, RowBackwardEvaluation)
    assert diagnostics.grad_product is None


def test_vector_attr_is_a_boolean() -> None:
    with pytest.raises(OpValidationError, match="aten_128bit_vectors"):
        softmax_backward(64, 64, DType.BF16, aten_128bit_vectors="yes")


def test_log_softmax_backward_has_no_multiply() -> None:
    plain = MODEL.predict(softmax_backward(16384, 4096, DType.BF16), H100)
    log = MODEL.predict(softmax_backward(16384, 4096, DType.BF16, log_softmax=True), H100)
    diagnostics = log.diagnostics
    assert isinstance(diagnostics, RowBackwardEvaluation) and diagnostics.grad_product is None
    assert diagnostics.grad_input.kernel.name == "cunn_SoftMaxBackwardSmem"
    assert log.latency_s < plain.latency_s
    assert log.traffic["hbm"].total_bytes < plain.traffic["hbm"].total_bytes
