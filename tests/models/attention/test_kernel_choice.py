"""Attr ``attention_kernel``: naming the kernel family (docs/models/attention.md, "Which
kernel")."""

from __future__ import annotations

import dataclasses

import pytest

from opmodel import LocalOp
from opmodel.core.errors import InvalidKernelError, OpValidationError
from tests.models.attention.ops import A100, H100, MODEL, attention, evaluation
from tests.models.attention.test_backward import backward
from tests.models.attention.test_mla import mla


def named(op: LocalOp, kernel: str) -> LocalOp:
    """``op`` with attr ``attention_kernel``."""
    return dataclasses.replace(op, attrs={**op.attrs, "attention_kernel": kernel})


def test_fa2_runs_warp_mma_on_hopper() -> None:
    """FA2 on an H100 issues mma.sync (at the config's mma_sync_tensor_fraction, 0.66 of the
    warpgroup rate) with its own blocks and no ping-pong, so it is slower than FA3 (1.8x in
    Fig. 5 of Shah et al. 2024 at head_dim 128 with a mask and 4k tokens; the model's FA2 on
    Hopper is too fast, docs/validation.md)."""
    op = attention(8, 16, 4096, 128, causal=True)
    fa2, fa3 = evaluation(named(op, "fa2"), H100), evaluation(op, H100)
    assert (fa2.kernel.name, fa2.kernel.instruction.value) == ("fa2", "mma_sync")
    assert (fa2.kernel.block_q, fa2.kernel.block_kv) == (128, 64)
    assert fa3.kernel.name == "fa3" and fa2.latency_s > 1.25 * fa3.latency_s


def test_naming_the_default_changes_nothing() -> None:
    op = attention(8, 16, 4096, 128, causal=True)
    assert evaluation(named(op, "fa3"), H100) == evaluation(op, H100)
    assert evaluation(named(op, "fa2"), A100) == evaluation(op, A100)
    assert evaluation(named(mla(), "flashmla"), H100) == evaluation(mla(), H100)


def test_decode_and_backward_follow_the_choice() -> None:
    """FA2's split-KV decode on Hopper issues mma.sync too; naming FA2 or FA3 for MLA's latent
    cache runs the split-KV kernel with the shared bytes instead of FlashMLA; FA2's backward
    on Hopper is fa2_bwd."""
    decode = attention(16, 32, 8192, 128, kv_heads=8, seq_q=1)
    assert evaluation(named(decode, "fa2"), H100).kernel.instruction.value == "mma_sync"
    assert evaluation(named(mla(), "fa3"), H100).kernel.name == "splitkv"
    assert evaluation(named(mla(), "fa2"), H100).kernel.instruction.value == "mma_sync"
    assert evaluation(named(backward(4, 16, 2048, 128), "fa2"), H100).kernel.name == "fa2_bwd"


def test_kernels_the_gpu_cannot_run_are_one_line_errors() -> None:
    with pytest.raises(InvalidKernelError, match="fa3 needs warpgroup MMAs") as caught:
        MODEL.predict(named(attention(8, 16, 4096, 128), "fa3"), A100)
    assert "attrs.attention_kernel" in str(caught.value) and "\n" not in str(caught.value)
    with pytest.raises(InvalidKernelError, match="flashmla runs on sm90"):
        MODEL.predict(named(mla(), "flashmla"), A100)


def test_flashmla_needs_the_latent_cache() -> None:
    with pytest.raises(
        OpValidationError, match="flashmla needs an attention_decode with shared_kv"
    ):
        named(attention(16, 32, 8192, 128, kv_heads=8, seq_q=1), "flashmla")
    with pytest.raises(OpValidationError, match=r"attrs\.attention_kernel"):
        named(attention(8, 16, 4096, 128), "fa4")
