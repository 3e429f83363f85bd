"""A realistic LLM op mix: the per-layer ops of dense decoder-only transformers, as tables.

Each model (Llama-3-8B and -70B shapes: hidden, heads, KV heads, FFN, vocabulary from their
published configs) is lowered for tensor parallelism 1-8 into the local ops of one decoder
layer (RMSNorm, QKV projection, RoPE, attention, output projection, residual add, RMSNorm,
gate/up projection, SiLU-and-mul, down projection, residual add), for prefill at several token
counts and decode at several batch sizes and context lengths, with the embedding and the LM head
once per pass. Layers repeat, so a pass has many identical rows: that is what sweeps of real
workloads look like, and what their caching of repeated shapes is for.
"""

from __future__ import annotations

import csv
import itertools
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from opmodel import LocalOp, TensorSpec
from opmodel.batch import op_to_row

__all__ = ["LLAMA3_8B", "LLAMA3_70B", "LlmShape", "pass_ops", "write_mix"]


@dataclass(frozen=True)
class LlmShape:
    """The dimensions of a dense decoder-only model."""

    name: str
    layers: int
    hidden: int
    heads: int
    kv_heads: int
    ffn: int
    vocab: int
    head_dim: int = 128


# Meta Llama 3 model cards / config.json: 8B 32 layers, 4096 hidden, 32 heads, 8 KV heads,
# 14336 FFN; 70B 80 layers, 8192 hidden, 64 heads, 8 KV heads, 28672 FFN; vocabulary 128256.
LLAMA3_8B = LlmShape("llama3_8b", 32, 4096, 32, 8, 14336, 128256)
LLAMA3_70B = LlmShape("llama3_70b", 80, 8192, 64, 8, 28672, 128256)


def _t(role: str, *shape: int, layout: str | None = None) -> TensorSpec:
    return TensorSpec(role, tuple(shape), "bf16", layout)  # type: ignore[arg-type]


def _op(name: str, kind: str, phase: str, *tensors: TensorSpec, **attrs: object) -> LocalOp:
    return LocalOp(name=name, kind=kind, phase=phase, tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


@dataclass(frozen=True)
class Step:
    """One forward pass: prefill of ``q_len`` tokens, or decode of one token per sequence
    against ``kv_len`` cached ones, for ``batch`` sequences."""

    phase: str
    batch: int
    q_len: int
    kv_len: int


def _gemm(phase: str, tokens: int, name: str, k: int, n: int) -> LocalOp:
    return _op(
        name, "gemm", phase, _t("input", tokens, k), _t("weight", k, n), _t("output", tokens, n)
    )


def _layer(m: LlmShape, tp: int, step: Step) -> list[LocalOp]:
    """One decoder layer's local ops on one TP rank: norm, QKV projection, RoPE, attention,
    output projection, residual add, norm, gate/up projection, SiLU-and-mul, down projection,
    residual add."""
    phase, tokens = step.phase, step.batch * step.q_len
    heads, kv_heads = m.heads // tp, max(1, m.kv_heads // tp)
    qkv = (heads + 2 * kv_heads) * m.head_dim
    ffn = m.ffn // tp
    norm = _op(
        "rmsnorm",
        "rmsnorm",
        phase,
        _t("input", tokens, m.hidden),
        _t("weight", m.hidden),
        _t("output", tokens, m.hidden),
    )
    add = _elementwise(phase, "residual_add", "add", (tokens, m.hidden), inputs=2)
    return [
        norm,
        _gemm(phase, tokens, "qkv_proj", m.hidden, qkv),
        _elementwise(phase, "rope", "rope", (tokens, qkv), inputs=1),
        _attention(m, heads, kv_heads, step),
        _gemm(phase, tokens, "o_proj", heads * m.head_dim, m.hidden),
        add,
        norm,
        _gemm(phase, tokens, "gate_up_proj", m.hidden, 2 * ffn),
        _elementwise(phase, "silu_and_mul", "silu_and_mul", (tokens, ffn), inputs=2),
        _gemm(phase, tokens, "down_proj", ffn, m.hidden),
        add,
    ]


def _elementwise(
    phase: str, name: str, function: str, shape: tuple[int, int], *, inputs: int
) -> LocalOp:
    """An elementwise ``function`` over ``shape`` with ``inputs`` inputs of that shape."""
    operands = [_t("input", *shape) for _ in range(inputs)]
    return _op(name, "elementwise", phase, *operands, _t("output", *shape), function=function)


def _attention(m: LlmShape, heads: int, kv_heads: int, step: Step) -> LocalOp:
    """Causal FlashAttention prefill, or decode against the KV cache, on this rank's heads."""
    batch, q_len = step.batch, step.q_len
    kv = (batch, kv_heads, step.kv_len, m.head_dim)
    tensors = (
        _t("input", batch, heads, q_len, m.head_dim, layout="q"),
        _t("input", *kv, layout="k"),
        _t("input", *kv, layout="v"),
        _t("output", batch, heads, q_len, m.head_dim, layout="o"),
    )
    if step.phase == "prefill":
        return _op("attention", "attention_prefill", step.phase, *tensors, causal=True)
    return _op("attention", "attention_decode", step.phase, *tensors)


def pass_ops(m: LlmShape, tp: int, step: Step) -> list[LocalOp]:
    """The local ops of one forward pass (every layer, then the LM head) on one TP rank."""
    tokens = step.batch * step.q_len
    head = _op(
        "lm_head",
        "gemm",
        step.phase,
        _t("input", tokens, m.hidden),
        _t("weight", m.hidden, m.vocab // tp),
        _t("output", tokens, m.vocab // tp),
    )
    return _layer(m, tp, step) * m.layers + [head]


def _passes() -> Iterator[list[LocalOp]]:
    for m, tp in itertools.product((LLAMA3_8B, LLAMA3_70B), (1, 2, 4, 8)):
        for tokens in (512, 1024, 2048, 4096, 8192):
            yield pass_ops(m, tp, Step("prefill", 1, tokens, tokens))
        for batch, context in itertools.product((1, 8, 32, 128), (1024, 4096, 16384)):
            yield pass_ops(m, tp, Step("decode", batch, 1, context))


def write_mix(path: Path, rows: int) -> int:
    """Write ``rows`` op rows (whole passes, cycled) to the CSV ``path``; returns distinct ops."""
    passes = [[op_to_row(op) for op in ops] for ops in _passes()]
    distinct = {
        tuple(r[c] for c in ("kind", "phase", "tensors", "attrs")) for p in passes for r in p
    }
    with path.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=["name", "kind", "phase", "tensors", "attrs"])
        writer.writeheader()
        written = 0
        for ops in itertools.cycle(passes):
            take = ops[: rows - written]
            writer.writerows(take)
            written += len(take)
            if written >= rows:
                break
    return len(distinct)
