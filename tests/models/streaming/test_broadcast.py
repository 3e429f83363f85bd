"""ATen's elementwise kernel for broadcast inputs: TensorIterator's coalesced dimensions
(hand-derived), the kernel's structure, its counted cost and the file it comes from, and which
ops take it."""

from __future__ import annotations

import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec, ops
from opmodel.core.errors import ConfigError
from opmodel.core.views import ElementwiseView
from opmodel.models.streaming.aten_broadcast import (
    BROADCAST_FILE,
    BROADCAST_KERNEL,
    broadcast_instructions,
    broadcast_issue_cost,
    broadcast_kernel,
    coalesced_dims,
    load_broadcast_counts,
)
from opmodel.models.streaming.evaluate import StreamingEvaluation
from tests.hypothesis_budget import examples
from tests.models.streaming.ops import H100, MODEL, op_of


def add(
    x: tuple[int, ...], other: tuple[int, ...], dtype: DType = DType.BF16, **attrs: str
) -> LocalOp:
    tensors = ((TensorRole.INPUT, x), (TensorRole.INPUT, other), (TensorRole.OUTPUT, x))
    return op_of(OpKind.ELEMENTWISE, Phase.INFERENCE, tensors, dtype, {"function": "add", **attrs})


@pytest.mark.parametrize(
    ("output", "inputs", "dims"),
    [
        ((16, 16, 512, 512), ((16, 16, 512, 512), (16, 1, 1, 512)), 3),  # a key-padding mask
        ((16, 16, 512, 512), ((16, 16, 512, 512), (1, 1, 512, 512)), 2),  # a causal mask
        ((8192, 4096), ((8192, 4096), (4096,)), 2),  # a bias
        ((8192, 4096), ((8192, 4096), (8192, 1)), 2),  # a row scale
        ((8192, 4096), ((8192, 4096), (1,)), 1),  # a one-element tensor
        ((8192, 4096), ((8192, 4096), (8192, 4096)), 1),  # no broadcast: one dimension
        ((1, 8192, 1, 4096), ((1, 8192, 1, 4096), (4096,)), 2),  # size-1 dimensions dropped
    ],
)
def test_coalesced_dims(
    output: tuple[int, ...], inputs: tuple[tuple[int, ...], ...], dims: int
) -> None:
    assert coalesced_dims(output, inputs) == dims


def test_kernel_structure_and_counts() -> None:
    # launch_legacy_kernel<128, 4> for a 2-byte output, <128, 2> for a 4-byte one: each
    # element one round trip of the thread's chain, its instructions in the chain
    bf16 = broadcast_kernel(8192 * 4096, 2)
    assert (bf16.threads_per_cta, bf16.elements_per_cta, bf16.serial_loads) == (128, 512, 4)
    assert bf16.ctas == 8192 * 4096 // 512 and bf16.serial_arithmetic
    fp32 = broadcast_kernel(1000, 4)
    assert (fp32.elements_per_cta, fp32.serial_loads, fp32.ctas) == (256, 2, 4)
    # ROCm's manual unroll: 8 (4) elements a thread, every offset before any load: one trip
    rocm = broadcast_kernel(8192 * 4096, 2, "cdna3")
    assert (rocm.elements_per_cta, rocm.serial_loads) == (1024, 1)
    assert broadcast_kernel(1000, 4, "cdna4").elements_per_cta == 512
    # the shipped count on sm_90, bf16 add: 27.3333 + 14 per dimension (SASS of PyTorch 2.14.1)
    assert broadcast_instructions("sm90", DType.BF16, "add", 3) == pytest.approx(27.3333 + 42)
    assert broadcast_instructions("sm80", DType.FP32, "mul", 2) == pytest.approx(21 + 20)
    # where: three operands' offsets a dimension, one more than a binary op's
    assert broadcast_instructions("sm80", DType.FP32, "where", 3) == pytest.approx(24 + 33)
    assert broadcast_instructions("sm90", DType.FP16, "where", 2) == pytest.approx(28.3333 + 30)
    # div: the IEEE division's reciprocal and Newton steps, its slow path behind a CALL not run
    assert broadcast_instructions("sm80", DType.BF16, "div", 1) == pytest.approx(32.3333 + 10)
    assert broadcast_instructions("sm89", DType.BF16, None, 1) == pytest.approx(23 + 10)  # sm86
    assert broadcast_instructions("cdna3", DType.BF16, "add", 2) is None
    assert broadcast_instructions("sm90", DType.BF16, "maximum", 2) is None
    view = add((8192, 4096), (4096,)).view
    assert isinstance(view, ElementwiseView)
    assert broadcast_issue_cost(view, "sm90") == pytest.approx(27.3333 + 28)
    assert broadcast_issue_cost(view, "cdna3") == 0.0


def test_broadcast_ops_take_the_kernel() -> None:
    bias = MODEL.predict(add((8192, 4096), (4096,)), H100).diagnostics
    assert isinstance(bias, StreamingEvaluation) and bias.kernel.name == BROADCAST_KERNEL
    same = MODEL.predict(add((8192, 4096), (8192, 4096)), H100).diagnostics
    assert isinstance(same, StreamingEvaluation)
    assert same.kernel.name == "vectorized_elementwise_kernel"
    # Liger's and vLLM's kernels are not ATen's: they keep their structures
    fused = MODEL.predict(add((8192, 4096), (4096,), implementation="fused"), H100).diagnostics
    assert isinstance(fused, StreamingEvaluation) and fused.kernel.name != BROADCAST_KERNEL
    # the bias add moves a third fewer bytes than the same-shape add yet takes longer: each
    # element's offsets and round trip are the thread's, one after another
    assert bias.latency_s > same.latency_s
    assert bias.dram_read_bytes < same.dram_read_bytes


def test_a_causal_where_takes_the_kernel_with_its_count() -> None:
    # GPT-2's torch.where(mask [1, S, S] bool, scores [B H, S, S], 0-dim fill): two dimensions
    scores, mask = (48, 512, 512), (1, 512, 512)
    tensors = (
        TensorSpec(TensorRole.INPUT, mask, DType.INT8),
        TensorSpec(TensorRole.INPUT, scores, DType.BF16),
        TensorSpec(TensorRole.INPUT, (1,), DType.BF16),
        TensorSpec(TensorRole.OUTPUT, scores, DType.BF16),
    )
    attrs = {"function": "where"}
    where = LocalOp(
        name="w", kind=OpKind.ELEMENTWISE, phase=Phase.INFERENCE, tensors=tensors, attrs=attrs
    )
    view = where.view
    assert isinstance(view, ElementwiseView)
    assert broadcast_issue_cost(view, "sm90") == pytest.approx(28.3333 + 30)
    evaluation = MODEL.predict(where, H100).diagnostics
    assert isinstance(evaluation, StreamingEvaluation)
    assert evaluation.kernel.name == BROADCAST_KERNEL
    same = ops.elementwise("where", scores)  # same-shape operands: the vectorized kernel
    assert MODEL.predict(same, H100).latency_s < evaluation.latency_s


@settings(max_examples=examples(20), deadline=None)
@given(rows=st.integers(1, 4096), width=st.sampled_from([64, 768, 4096]))
def test_more_rows_never_faster(rows: int, width: int) -> None:
    one = MODEL.predict(add((rows, width), (width,)), H100).latency_s
    two = MODEL.predict(add((2 * rows, width), (width,)), H100).latency_s
    assert 0 < one <= two


def test_counts_file_errors(tmp_path: Path) -> None:
    assert load_broadcast_counts(BROADCAST_FILE)[("sm90", "bf16", "add")][1] == 14
    bad = tmp_path / "counts.yaml"
    bad.write_text("source: x\nbroadcast:\n  sm90:\n    bf16: {add: {element_instructions: 2}}\n")
    with pytest.raises(ConfigError, match=re.escape("broadcast.sm90.bf16.add: must give")):
        load_broadcast_counts(bad)
    bad.write_text(
        "source: x\nbroadcast:\n  sm90:\n"
        "    bf16: {add: {element_instructions: 2, dim_instructions: -1}}\n"
    )
    with pytest.raises(ConfigError, match="dim_instructions: must be a number > 0"):
        load_broadcast_counts(bad)
    bad.write_text("source: x\nbroadcast:\n  sm90:\n    int8: {}\n")
    with pytest.raises(ConfigError, match=re.escape("broadcast.sm90: must map dtypes")):
        load_broadcast_counts(bad)
