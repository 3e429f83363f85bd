"""Attention op builders for the conformance suite (:mod:`tests.conformance.builders`)."""

from __future__ import annotations

from collections.abc import Callable

from opmodel import DType, LocalOp, OpKind, TensorSpec, backward_of

Sizes = dict[str, int]


def _op(kind: OpKind, tensors: tuple[TensorSpec, ...], **attrs: object) -> LocalOp:
    return LocalOp(name=kind.value, kind=kind, phase="inference", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


def attention(kind: OpKind) -> Callable[[Sizes, DType], LocalOp]:
    def build(s: Sizes, d: DType) -> LocalOp:
        hq, skv = s["hkv"] * s["group"], s["sq"] + s["extra_kv"]
        return _op(
            kind,
            (
                TensorSpec("input", (s["b"], hq, s["sq"], s["d"]), d, "q"),
                TensorSpec("input", (s["b"], s["hkv"], skv, s["d"]), d, "k"),
                TensorSpec("input", (s["b"], s["hkv"], skv, s["d"]), d, "v"),
                TensorSpec("output", (s["b"], hq, s["sq"], s["d"]), d, "o"),
            ),
            causal=bool(s["causal"]),
        )

    return build


def mla_decode(s: Sizes, d: DType) -> LocalOp:
    """MLA's absorbed decode: one latent cache whose first ``dv`` channels are the values
    (attr ``shared_kv``), ``rope`` more channels in the keys (DeepSeek-V3: 512 and 64)."""
    hq, dqk = s["hkv"] * s["group"], s["dv"] + s["rope"]
    return _op(
        OpKind.ATTENTION_DECODE,
        (
            TensorSpec("input", (s["b"], hq, s["sq"], dqk), d, "q"),
            TensorSpec("input", (s["b"], s["hkv"], s["skv"], dqk), d, "k"),
            TensorSpec("input", (s["b"], s["hkv"], s["skv"], s["dv"]), d, "v"),
            TensorSpec("output", (s["b"], hq, s["sq"], s["dv"]), d, "o"),
        ),
        causal=bool(s["causal"]),
        shared_kv=True,
    )


def varlen_decode(s: Sizes, d: DType) -> LocalOp:
    """A decode batch whose requests hold different numbers of keys (attr ``kv_lengths``):
    request ``i`` holds ``sq + extra x (1 + 7919 i mod b) / b`` of a capacity ``sq + extra``
    (spread over the whole range, every one growing with ``extra``), in a paged cache when
    ``paged``."""
    b, sq, extra = s["b"], s["sq"], s["extra_kv"]
    lengths = [sq + extra * (1 + (7919 * i) % b) // b for i in range(b)]
    hq, skv = s["hkv"] * s["group"], sq + extra
    paged = {"page_size": 16} if s["paged"] else {}
    return _op(
        OpKind.ATTENTION_DECODE,
        (
            TensorSpec("input", (b, hq, sq, s["d"]), d, "q"),
            TensorSpec("input", (b, s["hkv"], skv, s["d"]), d, "k"),
            TensorSpec("input", (b, s["hkv"], skv, s["d"]), d, "v"),
            TensorSpec("output", (b, hq, sq, s["d"]), d, "o"),
        ),
        causal=bool(s["causal"]),
        kv_lengths=lengths,
        **paged,
    )


def packed_prefill(s: Sizes, d: DType) -> LocalOp:
    """A packed prefill (attrs ``q_lengths``, ``kv_lengths``): request ``i`` holds
    ``17 + extra x (1 + 7919 i mod b) / b`` query tokens and as many keys plus ``context``,
    padded to the longest; every length grows with ``extra``."""
    b, extra, context = s["b"], s["extra"], s["context"]
    queries = [17 + extra * (1 + (7919 * i) % b) // b for i in range(b)]
    hq, sq = s["hkv"] * s["group"], 17 + extra
    return _op(
        OpKind.ATTENTION_PREFILL,
        (
            TensorSpec("input", (b, hq, sq, s["d"]), d, "q"),
            TensorSpec("input", (b, s["hkv"], sq + context, s["d"]), d, "k"),
            TensorSpec("input", (b, s["hkv"], sq + context, s["d"]), d, "v"),
            TensorSpec("output", (b, hq, sq, s["d"]), d, "o"),
        ),
        causal=bool(s["causal"]),
        q_lengths=queries,
        kv_lengths=[q + context for q in queries],
    )


def attention_backward(s: Sizes, d: DType) -> LocalOp:
    """The backward op of the prefill ``_attention`` builds (docs/op_files.md)."""
    return backward_of(attention(OpKind.ATTENTION_PREFILL)(s, d))
