"""The attention's backward pass: the op convention and its errors, FLOPs, the backward kernel's
blocks, tiles and staged bytes (hand-derived), and properties against the forward."""

from __future__ import annotations

import math
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, OpValidationError, Phase, TensorRole, TensorSpec
from opmodel.formulas.work import op_work
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.hardware.spec import Instruction
from opmodel.models import get_model
from opmodel.models.attention import AttentionEvaluation, backward_kernel
from opmodel.models.attention.backward import (
    backward_tiles,
    evaluate_backward,
    side_kernels,
    staged_bytes,
)
from tests.hypothesis_budget import examples
from tests.models.attention.ops import A100, H100, MODEL, attention

A10 = load_hardware("a10")


def backward(
    batch: int,
    heads: int,
    seq: int,
    head_dim: int,
    *,
    causal: bool = False,
    kv_heads: int | None = None,
    window: int | None = None,
) -> LocalOp:
    """The backward pass of a bf16 self-attention: Q, K, V, O and dO in; dQ, dK, dV out."""
    kv_heads = kv_heads or heads
    q = (batch, heads, seq, head_dim)
    kv = (batch, kv_heads, seq, head_dim)
    bf16 = DType.BF16
    attrs: dict[str, object] = {"causal": causal}
    if window is not None:
        attrs["window"] = window
    return LocalOp(
        name="attention_backward",
        kind=OpKind.ATTENTION_PREFILL,
        phase=Phase.TRAIN_BWD,
        tensors=(
            TensorSpec(TensorRole.INPUT, q, bf16, "q"),
            TensorSpec(TensorRole.INPUT, kv, bf16, "k"),
            TensorSpec(TensorRole.INPUT, kv, bf16, "v"),
            TensorSpec(TensorRole.INPUT, q, bf16, "o"),
            TensorSpec(TensorRole.GRAD, q, bf16, "o"),
            TensorSpec(TensorRole.OUTPUT, q, bf16, "q"),
            TensorSpec(TensorRole.OUTPUT, kv, bf16, "k"),
            TensorSpec(TensorRole.OUTPUT, kv, bf16, "v"),
        ),
        attrs=attrs,
    )


def _replaced(op: LocalOp, index: int, tensor: TensorSpec | None, **changes: object) -> LocalOp:
    tensors = list(op.tensors)
    if tensor is None:
        del tensors[index]
    else:
        tensors[index] = tensor
    fields = {"name": op.name, "kind": op.kind, "phase": op.phase, "attrs": op.attrs}
    return LocalOp(**{**fields, **changes, "tensors": tuple(tensors)})  # type: ignore[arg-type]


def test_backward_op_parses_and_counts_its_work() -> None:
    op = backward(1, 2, 4, 8)
    view = op.view
    assert view.backward and view.grad_o is not None and view.o.layout == "o"
    work = op_work(op)
    # pairs = 4 x 4 = 16 per head, 2 heads: 2 x 2 x 16 x (3 x 8 + 2 x 8) = 2,560 GEMM FLOPs;
    # 4 per score (128) and 2 per element of O (2 x 64 = 128)
    assert work.matmul_flops == 2560 and work.vector_flops == 256
    # Q, K, V, O and dO read (5 x 128 bytes), dQ, dK, dV written (3 x 128)
    assert (work.read_bytes, work.write_bytes) == (640, 384)
    forward = op_work(attention(1, 2, 4, 8))
    assert work.matmul_flops == 2.5 * forward.matmul_flops


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"phase": Phase.PREFILL}, "phase must be train_bwd (got prefill)"),
        ({"kind": OpKind.ATTENTION_DECODE}, "only attention_prefill has a backward pass"),
    ],
)
def test_backward_needs_train_bwd_prefill(change: dict[str, object], message: str) -> None:
    op = backward(1, 2, 64, 8)
    with pytest.raises(OpValidationError, match=re.escape(message)):
        _replaced(op, 0, op.tensors[0], **change)


def test_backward_tensor_errors_name_the_tensor() -> None:
    op = backward(1, 2, 64, 8)
    q, _, _, o, grad, dq, _, _ = op.tensors
    untagged = TensorSpec(TensorRole.INPUT, o.shape, o.dtype)
    with pytest.raises(OpValidationError, match=r"4 input tensors \(Q, K, V and O\) tagged"):
        _replaced(op, 3, untagged)
    with pytest.raises(OpValidationError, match=r"4 input tensors .* got 3"):
        _replaced(op, 3, None)
    with pytest.raises(OpValidationError, match=r"3 output tensors \(dQ, dK, dV\)"):
        _replaced(op, 5, None)
    wrong_dq = TensorSpec(TensorRole.OUTPUT, (1, 2, 32, 8), dq.dtype, "q")
    with pytest.raises(OpValidationError, match=r"dQ must be shaped as its input \[1, 2, 64, 8\]"):
        _replaced(op, 5, wrong_dq)
    wrong_do = TensorSpec(TensorRole.GRAD, (1, 2, 64, 4), grad.dtype, "o")
    with pytest.raises(OpValidationError, match=r"dO must be shaped as O \[1, 2, 64, 8\]"):
        _replaced(op, 4, wrong_do)
    two = (*op.tensors, grad)
    with pytest.raises(OpValidationError, match="needs exactly one grad tensor"):
        LocalOp(name="x", kind=op.kind, phase=op.phase, tensors=two, attrs=op.attrs)
    assert q.layout == "q"


def test_backward_kernel_blocks() -> None:
    h100 = backward_kernel(H100, backward(1, 8, 1024, 128).view)
    assert (h100.name, h100.block_q, h100.block_kv, h100.instruction) == (
        "fa3_bwd",
        64,
        128,
        Instruction.WGMMA,
    )
    assert (backward_kernel(H100, backward(1, 8, 1024, 64).view).block_q) == 128
    wide = backward_kernel(H100, backward(1, 8, 1024, 256).view)
    assert (wide.block_q, wide.block_kv) == (64, 64)
    a100 = backward_kernel(A100, backward(1, 8, 1024, 128).view)
    assert (a100.name, a100.block_q, a100.block_kv) == ("fa2_bwd", 64, 128)
    # an sm_86 SM's 100 KB of shared memory: FA2's smaller key blocks above head_dim 64
    a10 = backward_kernel(A10, backward(1, 8, 1024, 128).view)
    assert (a10.block_q, a10.block_kv) == (64, 64)


def _fa3(op: LocalOp) -> LocalOp:
    """``op`` with attr ``attention_kernel: fa3`` (FA3's own blocks on sm_90)."""
    return _replaced(op, 0, op.tensors[0], attrs={**op.attrs, "attention_kernel": "fa3"})


def test_backward_tiles_hand_derived() -> None:
    kernel = backward_kernel(H100, backward(1, 1, 256, 128).view)  # Br = 64, Bc = 128
    causal = backward_tiles(kernel, backward(1, 1, 256, 128, causal=True).view)
    # query blocks of 64 rows see ceil(64 (b + 1) / 128) key blocks: 1, 1, 2, 2
    assert (causal.q_blocks, causal.kv_blocks, causal.tiles) == (4, 2, 6)
    assert causal.longest_block_tiles == 4  # key block 0 is seen by every query block
    full = backward_tiles(kernel, backward(1, 1, 256, 128).view)
    assert (full.tiles, full.longest_block_tiles) == (8, 4)


def test_gqa_backward_dk_dv_traffic_hand_derived() -> None:
    """32 query heads on 8 KV heads, 1,024 tokens, head_dim 128 (bf16): FA3 reduce-adds into
    zeroed fp32 dK and dV accumulators and converts them; FA2 writes them per query head and
    sums them (module docstring of backward.py)."""
    view = backward(1, 32, 1024, 128, kv_heads=8).view
    rows, q = 32 * 1024, 32 * 1024 * 128 * 2
    d_row, dq_acc, dkv = rows * 4, rows * 128 * 4, 2 * 8 * 1024 * 128 * 2
    main_read = q + dkv + q + 2 * d_row  # Q, K and V, dO, LSE and D
    fa3 = evaluate_backward(backward_kernel(H100, view), view, H100)
    acc = 2 * dkv  # the fp32 accumulators
    assert fa3.dram_write_bytes == (d_row + dq_acc + acc) + (acc + dq_acc) + (q + dkv)
    assert fa3.dram_read_bytes == 2 * q + main_read + (dq_acc + acc)
    fa2 = evaluate_backward(backward_kernel(A100, view), view, A100)
    per_head = 4 * dkv  # dK and dV of each of the group's 4 query heads
    assert fa2.dram_write_bytes == (d_row + dq_acc) + (per_head + dq_acc) + (q + dkv)
    assert fa2.dram_read_bytes == 2 * q + main_read + (dq_acc + per_head)
    mha = backward(1, 32, 1024, 128).view
    counts = [side_kernels(backward_kernel(h, v), v) for h in (H100, A100) for v in (view, mha)]
    assert counts == [6, 2, 4, 2]


def test_staged_bytes_hand_derived() -> None:
    view = backward(1, 8, 1024, 128).view
    fa3 = backward_kernel(H100, view)  # 64 x 128: dS in bf16 and dQ's fp32 tile
    assert staged_bytes(fa3, view) == 64 * 128 * 2 + 64 * 128 * 4
    fa2 = backward_kernel(A100, view)  # 64 x 128: P and dS in bf16
    assert staged_bytes(fa2, view) == 2 * 64 * 128 * 2


@pytest.mark.parametrize("hardware", [A100, H100, A10], ids=lambda h: h.name)
def test_backward_is_slower_than_forward_and_masks_save_time(hardware: HardwareSpec) -> None:
    for heads, seq, dim in ((16, 2048, 128), (32, 512, 64), (8, 8192, 128)):
        forward_s = MODEL.predict(attention(2, heads, seq, dim), hardware).latency_s
        full = MODEL.predict(backward(2, heads, seq, dim), hardware)
        causal = MODEL.predict(backward(2, heads, seq, dim, causal=True), hardware)
        assert full.latency_s > forward_s
        assert 0.5 * full.latency_s < causal.latency_s < full.latency_s
        assert full.implementation.startswith("effective_roofline/fa")


@settings(max_examples=examples(40), deadline=None)
@given(
    heads=st.integers(1, 16),
    group=st.sampled_from([1, 2, 4]),
    seq=st.integers(17, 4096),
    dim=st.sampled_from([64, 96, 128, 256]),
    causal=st.booleans(),
)
def test_backward_properties(heads: int, group: int, seq: int, dim: int, causal: bool) -> None:
    op = backward(1, heads * group, seq, dim, causal=causal, kv_heads=heads)
    for name in ("roofline", "extended_roofline", "effective_roofline"):
        profile = get_model(name).predict(op, H100)
        assert math.isfinite(profile.latency_s) and profile.latency_s > 0
        assert profile.flops == op_work(op).flops
    effective = MODEL.predict(op, H100)
    longer = MODEL.predict(
        backward(1, heads * group, 2 * seq, dim, causal=causal, kv_heads=heads), H100
    )
    assert longer.latency_s > effective.latency_s
    # every score of the five GEMMs is issued at least once
    diagnostics = effective.diagnostics
    assert isinstance(diagnostics, AttentionEvaluation)
    assert diagnostics.issued_mma_flops >= op_work(op).matmul_flops
    # a causal mask never takes less than half the unmasked time (issue #5's property)
    other = backward(1, heads * group, seq, dim, causal=not causal, kv_heads=heads)
    masked, full = (effective, MODEL.predict(other, H100))[:: 1 if causal else -1]
    assert 0.5 * full.latency_s <= masked.latency_s <= full.latency_s * (1 + 1e-12)


@settings(max_examples=examples(40), deadline=None)
@given(
    heads=st.integers(1, 16),
    seq=st.integers(17, 8192),
    dim=st.sampled_from([64, 96, 128, 192, 256]),
)
def test_fa3_backward_properties_on_its_own_blocks(heads: int, seq: int, dim: int) -> None:
    full_op, causal_op = (
        _fa3(backward(1, heads, seq, dim)),
        _fa3(backward(1, heads, seq, dim, causal=True)),
    )
    full = MODEL.predict(full_op, H100).latency_s
    causal = MODEL.predict(causal_op, H100).latency_s
    longer = MODEL.predict(_fa3(backward(1, heads, 2 * seq, dim)), H100).latency_s
    assert longer > full
    # issue #5's property, and the causal kernel's smaller query blocks (64 x 128 against
    # 80 x 128 at head_dim 128): key block 0's CTA walks every query block, so a short causal
    # run may take up to their count's ratio of the unmasked time (docs/models/attention.md)
    walks = [math.ceil(seq / backward_kernel(H100, op.view).block_q) for op in (causal_op, full_op)]
    assert 0.5 * full <= causal <= full * walks[0] / walks[1] * (1 + 1e-12)


def test_sliding_window_backward_visits_fewer_tiles() -> None:
    full = MODEL.predict(backward(1, 8, 8192, 128, causal=True), H100)
    band = MODEL.predict(backward(1, 8, 8192, 128, causal=True, window=1024), H100)
    assert band.latency_s < 0.5 * full.latency_s


def test_evaluate_backward_refuses_a_forward_view() -> None:
    view = attention(1, 8, 1024, 128).view
    kernel = backward_kernel(H100, view)
    with pytest.raises(ValueError, match="the view is an attention's forward"):
        evaluate_backward(kernel, view, H100)
