"""Streaming kernels: the structure each implementation runs (CTAs, threads, loads, passes)."""

from __future__ import annotations

import dataclasses
import math

import pytest

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.hardware.clocking import boosted
from opmodel.models import get_model
from opmodel.models.streaming import (
    StreamingEvaluation,
    rope_kernel,
    streaming_kernel,
)
from opmodel.models.streaming.aten_softmax import loads_in_flight
from opmodel.models.streaming.kernels import (
    FUSED_MAX_ROW,
    aten_elements_per_thread,
    aten_elementwise_kernel,
    runs_aten_elementwise,
)
from opmodel.parsing import load_op
from tests.conftest import EXAMPLES
from tests.models.streaming.ops import (
    A100,
    H100,
    MODEL,
    add_op,
    evaluation,
    row_op,
)


@pytest.mark.parametrize(
    ("length", "threads"), [(1024, 128), (2047, 256), (8192, 512), (20000, 1024), (32768, 1024)]
)
def test_fused_warps_follow_the_block_size_rule(length: int, threads: int) -> None:
    kernel = streaming_kernel(OpKind.RMSNORM, "fused", 8, length, 2)
    assert (kernel.threads_per_cta, kernel.serial_loads, kernel.global_passes) == (threads, 1, 1)
    assert kernel.reductions == 1
    assert streaming_kernel(OpKind.SOFTMAX, None, 8, length, 2).reductions == 2


def test_vllm_and_pytorch_structures() -> None:
    vllm = streaming_kernel(OpKind.RMSNORM, "vllm", 3, 5120, 2)
    assert (vllm.ctas, vllm.threads_per_cta, vllm.serial_loads, vllm.global_passes) == (
        3,
        1024,
        5,
        2,
    )
    act = streaming_kernel(OpKind.ELEMENTWISE, "vllm", 7, 1376, 2)
    assert (act.ctas, act.threads_per_cta, act.serial_loads, act.reductions) == (7, 1024, 2, 0)
    elementwise = streaming_kernel(OpKind.ELEMENTWISE, None, 3, 1000, 2)
    assert (elementwise.ctas, elementwise.threads_per_cta) == (math.ceil(3000 / 512), 128)
    softmax = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 16384, 4)
    # cunn_SoftMaxForward: min(16384, 1024) threads x 4 fp32 per 16-byte vector = 4096
    # elements per sweep: 4 serial loads per pass, 3 passes (max, sum, write)
    assert (softmax.threads_per_cta, softmax.serial_loads, softmax.global_passes) == (1024, 4, 3)
    assert softmax.reductions == 2 and softmax.serial_arithmetic
    # cunn_SoftMaxForwardReg (4096 fp32: 4 per thread): the row loaded once, all in flight
    reg = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 4096, 4)
    assert (reg.threads_per_cta, reg.serial_loads, reg.global_passes) == (1024, 1, 1)
    assert reg.name == "cunn_SoftMaxForwardReg" and reg.serial_arithmetic
    # warp softmax, 100 elements (2^7 = 128): 32 lanes a row, two rows a warp (WARP_BATCH),
    # 4 warps: 8 rows per 128-thread CTA; each lane holds 2 x 128 / 32 = 8 values
    short = streaming_kernel(OpKind.SOFTMAX, "pytorch", 2, 100, 2)
    assert (short.ctas, short.threads_per_cta, short.serial_loads) == (1, 128, 8)
    assert short.elements_per_cta == 8 * 100
    # 16 elements: 16 lanes a row, two rows per 16 lanes, 8 such "warps" per CTA: 16 rows per
    # CTA, each lane holding 2 values (PersistentSoftmax.cuh, dispatch_softmax_forward)
    tiny = streaming_kernel(OpKind.SOFTMAX, "pytorch", 33, 16, 2)
    assert (tiny.ctas, tiny.serial_loads, tiny.elements_per_cta) == (3, 2, 16 * 16)
    # 256 elements: one row per 32-lane warp, 4 rows per CTA, 8 values per lane
    mid = streaming_kernel(OpKind.SOFTMAX, "pytorch", 9, 256, 2)
    assert (mid.ctas, mid.serial_loads, mid.elements_per_cta) == (3, 8, 4 * 256)
    # 2048 bf16 elements (4 KiB) still go to the warp softmax: 64 serial loads, one per
    # iteration; 2048 fp32 (8 KiB) too; 4096 bf16 does not
    warp16 = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 2048, 2)
    warp32 = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 2048, 4)
    assert warp16.serial_loads == warp32.serial_loads == 64
    # the shipped loads in flight by element size; 16 + 64 registers (ncu: 80)
    assert (warp16.loads_in_flight, warp32.loads_in_flight) == (
        loads_in_flight(2),
        loads_in_flight(4),
    )
    assert loads_in_flight(2) > 1 and loads_in_flight(4) > 1
    assert warp16.registers_per_thread == 80
    assert short.loads_in_flight == loads_in_flight(2)
    block = streaming_kernel(OpKind.SOFTMAX, "pytorch", 8, 4096, 2)
    assert (block.ctas, block.threads_per_cta, block.global_passes) == (8, 1024, 1)
    # every other kernel waits for each of its serial loads
    assert block.loads_in_flight == softmax.loads_in_flight == 1.0


def test_aten_128bit_vectors_give_a_16bit_thread_8_elements() -> None:
    """ATen's 128-bit vectorization (attr ``aten_128bit_vectors``): a bf16 or fp16 thread takes
    one 16-byte vector, 8 elements (ncu on an H200, PyTorch 2.11: 33.5 M bf16 elements in 32,768
    CTAs of 128 threads); fp32 fills 16 bytes with 4 either way and 1-byte dtypes keep 4."""
    assert aten_elements_per_thread(2, vector_128bit=True) == 8
    assert aten_elements_per_thread(2, vector_128bit=False) == 4
    assert aten_elements_per_thread(4, vector_128bit=True) == 4
    assert aten_elements_per_thread(1, vector_128bit=True) == 4
    add = aten_elementwise_kernel(OpKind.ELEMENTWISE, 8192 * 4096, 2)
    assert (add.ctas, add.threads_per_cta, add.elements_per_cta) == (32768, 128, 1024)
    copy = aten_elementwise_kernel(OpKind.COPY, 8192 * 4096, 2)
    assert copy.ctas == 32768 and copy.name.startswith("copy")
    h200 = load_hardware("h200_sxm")
    old = evaluation(add_op(8192, 14336), h200)
    vec = add_op(8192, 14336)
    new = evaluation(
        dataclasses.replace(vec, attrs={**vec.attrs, "aten_128bit_vectors": True}), h200
    )
    assert old.kernel.ctas == 2 * new.kernel.ctas
    # twice the bytes in flight per thread: a large add runs nearer the DRAM rate
    assert new.latency_s < old.latency_s
    dram = 3 * 8192 * 14336 * 2 / h200.hbm.bandwidth_bytes_per_s
    assert new.latency_s >= dram
    vllm = LocalOp(
        name="act",
        kind=OpKind.ELEMENTWISE,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, (64, 11008), DType.FP16),  # gate
            TensorSpec(TensorRole.INPUT, (64, 11008), DType.FP16),  # up
            TensorSpec(TensorRole.OUTPUT, (64, 11008), DType.FP16),
        ),
        attrs={"function": "silu_and_mul", "implementation": "vllm"},
    )
    marked = dataclasses.replace(vllm, attrs={**vllm.attrs, "aten_128bit_vectors": True})
    # vLLM's own kernels are not ATen's: the attr does not change them
    assert evaluation(marked, h200).latency_s == evaluation(vllm, h200).latency_s


def test_vllm_rope_structure_by_hand() -> None:
    """Llama-3-8B: 32 query + 8 key heads of 128 -> 2560 pairs per token; block min(32 x 64,
    512) = 512 threads; the q loop runs 4 times and the k loop once, after the position load:
    6 serial loads, one CTA per token."""
    kernel = rope_kernel(4096, 40 * 128)
    assert (kernel.ctas, kernel.threads_per_cta, kernel.serial_loads) == (4096, 512, 6)
    assert (kernel.global_passes, kernel.reductions) == (1, 0)
    # a TP-8 shard of Llama-2-70B: 8 query + 1 key heads -> 576 pairs: 512 threads, 2 loops
    assert rope_kernel(16, 9 * 128).serial_loads == 3
    op = load_op(EXAMPLES / "rope.yaml")
    profile = MODEL.predict(op, A100)
    e = profile.diagnostics
    assert isinstance(e, StreamingEvaluation)
    assert e.kernel == kernel
    assert profile.implementation == "effective_roofline/streaming/vllm"


def test_unknown_implementation_is_named() -> None:
    with pytest.raises(OpModelError, match="implementation: must be one of fused, vllm, pytorch"):
        row_op(OpKind.RMSNORM, 1, 8, "cudnn")


@pytest.mark.parametrize("example", ["reduction", "copy", "embedding"])
def test_other_memory_kinds_run_as_streaming_kernels(example: str) -> None:
    op = load_op(EXAMPLES / f"{example}.yaml")
    profile = MODEL.predict(op, H100)
    assert profile.implementation == "effective_roofline/streaming/pytorch"
    roofline = get_model("roofline").predict(op, H100)
    assert profile.latency_s >= roofline.latency_s * 0.99
    e = profile.diagnostics
    assert isinstance(e, StreamingEvaluation)
    if example == "embedding":  # ATen's index_select: one index and one row load per iteration
        assert e.kernel.name == "indexSelectLargeIndex"
        assert e.kernel.serial_loads == e.kernel.l2_serial_loads == 125  # 4096^2 / (8 x 132 x 128)
    elif example == "reduction":  # ATen's reduce kernel: a warp a row of 4096, 4 values a trip
        assert (e.kernel.ctas, e.kernel.serial_loads) == (512, 32)
        assert e.kernel.name == "reduce_kernel (a row of lanes per output)"
    else:
        assert e.kernel.serial_loads == 1


def test_unlocked_h100_runs_streaming_kernels_at_its_max_boost_clock() -> None:
    """The H100 SXM's tensor peaks are rated at 1.83 GHz, its FP32 peak (67 TFLOPS) at 1.98 GHz:
    a streaming kernel on the unlocked config runs as on the spec at 1.98 GHz; a locked spec
    (at_clock) has no boost and runs at its own clock; GEMMs do not boost (their clock is the
    rated one or, busy enough, the power-limited one)."""
    assert H100.compute.max_boost_clock_hz == 1.98e9
    boosted_spec = boosted(H100)
    assert boosted_spec is boosted(H100)  # cached on the spec
    assert boosted_spec.compute.clock_hz == 1.98e9
    assert boosted_spec.compute.max_boost_clock_hz is None
    op = row_op(OpKind.RMSNORM, 2048, 4096, "vllm")
    at_boost = MODEL.predict(op, H100.at_clock(1.98e9))
    assert MODEL.predict(op, H100).latency_s == at_boost.latency_s
    locked = H100.at_clock(1.83e9)
    assert locked.compute.max_boost_clock_hz is None
    assert MODEL.predict(op, locked).latency_s > at_boost.latency_s
    assert boosted(A100) is A100  # A100's rated clock is its maximum boost
    gemm = load_op(EXAMPLES / "gemm.yaml")
    assert MODEL.predict(gemm, H100).latency_s >= MODEL.predict(gemm, locked).latency_s


def test_liger_rope_structure_by_hand() -> None:
    """Liger's _triton_rope: one token per program of Triton's default 4 warps; every load of
    the token (cos and sin halves, both halves of each q and k head) in flight at once; 40 heads
    of 128 over 128 threads: 40 elements held per thread, 32 + 40 registers (the estimate)."""
    kernel = rope_kernel(4096, 40 * 128, "fused")
    assert (kernel.ctas, kernel.threads_per_cta, kernel.serial_loads) == (4096, 128, 1)
    assert (kernel.registers_per_thread, kernel.implementation) == (72, "fused")
    op = load_op(EXAMPLES / "rope.yaml")
    liger = dataclasses.replace(op, attrs={**op.attrs, "implementation": "fused"})
    profile = MODEL.predict(liger, A100)
    assert isinstance(profile.diagnostics, StreamingEvaluation)
    assert profile.diagnostics.kernel == kernel
    assert profile.implementation == "effective_roofline/streaming/fused"


def test_fused_elementwise_runs_one_row_per_program() -> None:
    """Liger's elementwise kernels (relu_squared, SwiGLU): one row per program, BLOCK =
    next_pow2(n_cols) with calculate_settings' warps (8 from 2048), no reduction; not ATen's
    structure, so ATen's 16-byte vectors attr leaves it alone."""
    kernel = streaming_kernel(OpKind.ELEMENTWISE, "fused", 4096, 2048, 2)
    assert (kernel.ctas, kernel.threads_per_cta, kernel.elements_per_cta) == (4096, 256, 2048)
    assert (kernel.serial_loads, kernel.global_passes, kernel.reductions) == (1, 1, 0)
    assert not runs_aten_elementwise(OpKind.ELEMENTWISE, "fused")
    op = add_op(4096, 2048)
    fused = dataclasses.replace(op, attrs={**op.attrs, "implementation": "fused"})
    marked = dataclasses.replace(fused, attrs={**fused.attrs, "aten_128bit_vectors": True})
    assert evaluation(marked, H100).latency_s == evaluation(fused, H100).latency_s
    assert evaluation(fused, H100).kernel == kernel


def test_fused_elementwise_past_one_program_runs_element_blocks() -> None:
    """A row longer than Liger's MAX_FUSED_SIZE (65,536), which one program cannot hold, or a
    flat tensor: a 1-D grid of element blocks, 128 threads x one 16-byte vector (8 bf16)."""
    assert FUSED_MAX_ROW == 65536
    assert streaming_kernel(OpKind.ELEMENTWISE, "fused", 2, 65536, 2).ctas == 2
    flat = streaming_kernel(OpKind.ELEMENTWISE, "fused", 1, 1 << 20, 2)
    assert (flat.ctas, flat.threads_per_cta, flat.elements_per_cta) == (1024, 128, 1024)
    assert flat.implementation == "fused" and flat.name.startswith("fused elementwise")
    wide = streaming_kernel(OpKind.ELEMENTWISE, "fused", 1, 1 << 20, 4)
    assert wide.elements_per_cta == 512


@pytest.mark.parametrize("function", ["cast", "add", "silu", None])
def test_vllm_names_only_the_functions_it_has_kernels_for(function: str | None) -> None:
    """vLLM's elementwise kernels are its activations (act_and_mul_kernel, activation_kernel)
    and its rotary embedding: another function under implementation vllm is a one-line error
    (docs/models/streaming.md), not vLLM's activation kernel in disguise."""
    from opmodel import ops
    from opmodel.core.errors import OpValidationError

    op = ops.elementwise(function or "cast", (64, 4096), implementation="vllm")
    if function is None:  # no function attr at all
        op = dataclasses.replace(op, attrs={"implementation": "vllm"})
    with pytest.raises(OpValidationError, match="implementation vllm runs functions") as info:
        get_model("effective_roofline").predict(op, load_hardware("h100_sxm"))
    assert "\n" not in str(info.value)
