"""Shared builders of the attention tests: attention ops and their effective_roofline evaluation on shipped GPUs."""

from __future__ import annotations

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.hardware import HardwareSpec, load_hardware
from opmodel.models import get_model
from opmodel.models.attention import AttentionEvaluation

A100 = load_hardware("a100_80gb_sxm")


H100 = load_hardware("h100_sxm")


MODEL = get_model("effective_roofline")


def attention(
    batch: int,
    heads: int,
    seq: int,
    head_dim: int,
    *,
    causal: bool = False,
    kv_heads: int | None = None,
    seq_q: int | None = None,
    dtype: DType = DType.BF16,
) -> LocalOp:
    """A bf16 (or ``dtype``) attention op: decode when at most 16 query rows, else prefill."""
    kv_heads = kv_heads or heads
    seq_q = seq if seq_q is None else seq_q
    decode = seq_q <= 16
    q = (batch, heads, seq_q, head_dim)
    kv = (batch, kv_heads, seq, head_dim)
    return LocalOp(
        name="attention",
        kind=OpKind.ATTENTION_DECODE if decode else OpKind.ATTENTION_PREFILL,
        phase=Phase.DECODE if decode else Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, q, dtype, "q"),
            TensorSpec(TensorRole.INPUT, kv, dtype, "k"),
            TensorSpec(TensorRole.INPUT, kv, dtype, "v"),
            TensorSpec(TensorRole.OUTPUT, q, dtype, "o"),
        ),
        attrs={} if decode else {"causal": causal},
    )


def evaluation(op: LocalOp, hardware: HardwareSpec) -> AttentionEvaluation:
    """The effective_roofline diagnostics of ``op`` on ``hardware``."""
    diagnostics = MODEL.predict(op, hardware).diagnostics
    assert isinstance(diagnostics, AttentionEvaluation)
    return diagnostics
