"""Op builders for the conformance suite: one per op kind, from a dict of sizes.

Each builder lists the size keys that may grow; growing one must never make an op faster.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, TensorSpec, backward_of
from tests.conformance.builders_attention import (
    attention,
    attention_backward,
    mla_decode,
    packed_prefill,
    varlen_decode,
)
from tests.conformance.builders_collective import COLLECTIVE_SIZES, collective
from tests.conformance.builders_fused import (
    CROSS_ENTROPY_SIZES,
    FUSED,
    GROWS,
    OPTIMIZER_SIZES,
    cross_entropy,
    embedding,
    embedding_backward,
    optimizer,
)
from tests.conformance.builders_reduction import argmax, reduction, reduction_leading

Sizes = dict[str, int]


@dataclass(frozen=True)
class Builder:
    """How to draw sizes for a kind, build its op, and which sizes may grow."""

    sizes: st.SearchStrategy[Sizes]
    build: Callable[[Sizes, DType], LocalOp]
    growable: tuple[str, ...]


def _op(kind: OpKind, tensors: tuple[TensorSpec, ...], **attrs: object) -> LocalOp:
    return LocalOp(name=kind.value, kind=kind, phase="inference", tensors=tensors, attrs=attrs)  # type: ignore[arg-type]


def _gemm(s: Sizes, d: DType) -> LocalOp:
    return _op(
        OpKind.GEMM,
        (
            TensorSpec("input", (s["m"], s["k"]), d),
            TensorSpec("weight", (s["k"], s["n"]), d),
            TensorSpec("output", (s["m"], s["n"]), d),
        ),
    )


def _bgemm(s: Sizes, d: DType) -> LocalOp:
    b_shape = (s["k"], s["n"]) if s["broadcast"] else (s["b"], s["k"], s["n"])
    return _op(
        OpKind.BATCHED_GEMM,
        (
            TensorSpec("input", (s["b"], s["m"], s["k"]), d),
            TensorSpec("weight", b_shape, d),
            TensorSpec("output", (s["b"], s["m"], s["n"]), d),
        ),
    )


def _grouped_gemm(s: Sizes, d: DType) -> LocalOp:
    """Experts' GEMMs: ``groups`` groups of ``m`` rows, the first ``hot`` rows more, and
    ``idle`` groups without rows (their weights unread)."""
    sizes = [s["m"] + s["hot"]] + [s["m"]] * (s["groups"] - 1) + [0] * s["idle"]
    rows, experts = sum(sizes), len(sizes)
    return _op(
        OpKind.GROUPED_GEMM,
        (
            TensorSpec("input", (rows, s["k"]), d),
            TensorSpec("weight", (experts, s["n"], s["k"]), d),
            TensorSpec("output", (rows, s["n"]), d),
        ),
        transpose_b=True,
        group_sizes=sizes,
    )


def _grouped_wgrad(s: Sizes, d: DType) -> LocalOp:
    """Experts' weight gradients: X [rows, hidden] (transpose_a) by dY [rows, n] into dW
    [experts, hidden, n], the rows grouped as ``_grouped_gemm`` groups them."""
    sizes = [s["m"] + s["hot"]] + [s["m"]] * (s["groups"] - 1) + [0] * s["idle"]
    rows = sum(sizes)
    return _op(
        OpKind.GROUPED_GEMM,
        (
            TensorSpec("input", (rows, s["hidden"]), d),
            TensorSpec("weight", (rows, s["n"]), d),
            TensorSpec("output", (len(sizes), s["hidden"], s["n"]), d),
        ),
        transpose_a=True,
        group_sizes=sizes,
    )


def _row_backward(kind: OpKind, weights: int) -> Callable[[Sizes, DType], LocalOp]:
    """The backward op of the row op ``_row`` builds: dx and a gradient per weight written."""
    forward = _row(kind, weights)
    return lambda s, d: backward_of(forward(s, d))


def _row(kind: OpKind, weights: int) -> Callable[[Sizes, DType], LocalOp]:
    def build(s: Sizes, d: DType) -> LocalOp:
        shape = (s["rows"], s["length"])
        ws = tuple(TensorSpec("weight", (s["length"],), d) for _ in range(weights))
        return _op(kind, (TensorSpec("input", shape, d), *ws, TensorSpec("output", shape, d)))

    return build


def _elementwise(s: Sizes, d: DType) -> LocalOp:
    ins = tuple(TensorSpec("input", (s["n"],), d) for _ in range(s["inputs"]))
    return _op(OpKind.ELEMENTWISE, (*ins, TensorSpec("output", (s["n"],), d)))


def _warm(op: LocalOp, warm_bytes: int, s: Sizes) -> LocalOp:
    """``op`` read right after its producer, which wrote ``warm_bytes`` of its inputs and moved
    ``extra`` more bytes, in ``waves`` bursts (docs/op_files.md, ``warm_l2``, ``warm_input``)."""
    attrs = {**op.attrs, "producer_bytes": warm_bytes + s["extra"], "producer_waves": s["waves"]}
    if s["inputs"] > 1:  # the residual add's fresh operand: the last input
        attrs["warm_input"] = s["inputs"] - 1
    else:
        attrs["warm_l2"] = True
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)


def _warm_rmsnorm(s: Sizes, d: DType) -> LocalOp:
    op = _row(OpKind.RMSNORM, 1)(s, d)
    return _warm(op, s["rows"] * s["length"] * d.bits // 8, {**s, "inputs": 1})


def _warm_elementwise(s: Sizes, d: DType) -> LocalOp:
    return _warm(_elementwise(s, d), s["n"] * d.bits // 8, s)


def _copy(s: Sizes, d: DType) -> LocalOp:
    return _op(OpKind.COPY, (TensorSpec("input", (s["n"],), d), TensorSpec("output", (s["n"],), d)))


def _ints(**ranges: tuple[int, int]) -> st.SearchStrategy[Sizes]:
    return st.fixed_dictionaries({k: st.integers(lo, hi) for k, (lo, hi) in ranges.items()})


_ATTN = {"b": (1, 4), "hkv": (1, 8), "group": (1, 4), "d": (16, 256), "causal": (0, 1)}
_ROWS = {"rows": (1, 65536), "length": (1, 16384)}

BUILDERS: dict[OpKind, Builder] = {
    OpKind.GEMM: Builder(_ints(m=(1, 8192), n=(1, 8192), k=(1, 8192)), _gemm, ("m", "n", "k")),
    OpKind.BATCHED_GEMM: Builder(
        _ints(b=(1, 64), m=(1, 2048), n=(1, 2048), k=(1, 2048), broadcast=(0, 1)),
        _bgemm,
        ("b", "m", "n", "k"),
    ),
    OpKind.GROUPED_GEMM: Builder(
        _ints(groups=(1, 64), m=(0, 2048), hot=(1, 4096), idle=(0, 64), n=(1, 4096), k=(1, 4096)),
        _grouped_gemm,
        # not "hot" or "groups": a few more rows in one group, or a few near-empty groups, add
        # CTAs that move less than the kernel's average, and the GEMM models' per-CTA averages
        # (gemm.cta_work) spread that over the bandwidth-bound waves, a few per cent faster;
        # tests/models/gemm/test_grouped.py checks skew by hand (docs/models/
        # extended_roofline.md, "Grouped GEMMs")
        ("m", "n", "k"),
    ),
    OpKind.ATTENTION_PREFILL: Builder(
        _ints(**_ATTN, sq=(1, 4096), extra_kv=(0, 4096)),
        attention(OpKind.ATTENTION_PREFILL),
        ("b", "hkv", "sq", "extra_kv"),
    ),
    OpKind.ATTENTION_DECODE: Builder(
        _ints(**_ATTN, sq=(1, 4), extra_kv=(0, 65536)),
        attention(OpKind.ATTENTION_DECODE),
        ("b", "hkv", "extra_kv"),
    ),
    OpKind.SOFTMAX: Builder(_ints(**_ROWS), _row(OpKind.SOFTMAX, 0), ("rows", "length")),
    OpKind.LAYERNORM: Builder(_ints(**_ROWS), _row(OpKind.LAYERNORM, 2), ("rows", "length")),
    OpKind.RMSNORM: Builder(_ints(**_ROWS), _row(OpKind.RMSNORM, 1), ("rows", "length")),
    OpKind.ELEMENTWISE: Builder(_ints(n=(1, 1 << 26), inputs=(1, 3)), _elementwise, ("n",)),
    OpKind.REDUCTION: Builder(_ints(**_ROWS), reduction, ("rows", "length")),
    OpKind.EMBEDDING: Builder(
        _ints(tokens=(1, 16384), vocab=(1, 262144), hidden=(1, 16384)),
        embedding,
        ("tokens", "hidden"),
    ),
    OpKind.COPY: Builder(_ints(n=(1, 1 << 28)), _copy, ("n",)),
    OpKind.COLLECTIVE: Builder(_ints(**COLLECTIVE_SIZES), collective, ("n",)),
    OpKind.CROSS_ENTROPY: Builder(
        _ints(**CROSS_ENTROPY_SIZES), cross_entropy("pytorch"), ("rows", "vocab")
    ),
    OpKind.OPTIMIZER: Builder(_ints(**OPTIMIZER_SIZES), optimizer, ("n",)),  # not "tensors"
}

# ops that are not one kind's forward: the same properties hold for them
VARIANTS: dict[str, Builder] = {
    # weight gradients of at least one output tile per group and 16 rows per group: below
    # that a grid of a few elements is all epilogue, and the model's CTAs of the longest K
    # loop (gemm.occupancy._k_grouped) merge small groups' epilogues (docs/models/
    # extended_roofline.md, "Grouped GEMMs")
    "grouped_gemm_wgrad": Builder(
        _ints(
            groups=(1, 64),
            m=(16, 2048),
            hot=(1, 4096),
            idle=(0, 8),
            hidden=(128, 4096),
            n=(128, 4096),
        ),
        _grouped_wgrad,
        ("groups", "m", "hidden", "n"),
    ),
    "attention_decode_mla": Builder(
        _ints(
            b=(1, 256),
            hkv=(1, 2),
            group=(1, 128),
            sq=(1, 4),
            dv=(16, 512),
            rope=(0, 64),
            skv=(4, 65536),
            causal=(0, 1),
        ),
        mla_decode,
        ("b", "group", "skv"),
    ),
    "attention_decode_varlen": Builder(
        _ints(
            b=(1, 128),
            hkv=(1, 8),
            group=(1, 16),
            d=(16, 256),
            causal=(0, 1),
            sq=(1, 4),
            extra_kv=(0, 65536),
            paged=(0, 1),
        ),
        varlen_decode,
        ("hkv", "extra_kv"),
    ),
    "attention_prefill_packed": Builder(
        _ints(**_ATTN, extra=(0, 4096), context=(0, 2048)),
        packed_prefill,
        ("hkv", "extra"),
    ),
    "attention_backward_packed": Builder(
        _ints(**_ATTN, extra=(0, 4096), context=(0, 0)),
        lambda s, d: backward_of(packed_prefill(s, d)),
        ("hkv", "extra"),
    ),
    # after their producer: the share of the warm input still in L2, and the output lines the
    # L2 holds past the end (docs/models/streaming.md, "Warm inputs", "Write-back")
    "rmsnorm_warm": Builder(
        _ints(**_ROWS, extra=(0, 1 << 30), waves=(1, 64)),
        _warm_rmsnorm,
        ("rows", "length", "extra"),
    ),
    # Liger's Triton kernels (attr implementation: fused), a fused residual add (builders_fused)
    **{
        name: Builder(_ints(**ranges), build, grow) for name, (ranges, build, grow) in FUSED.items()
    },
    "elementwise_warm": Builder(
        _ints(n=(1, 1 << 26), inputs=(1, 3), extra=(0, 1 << 30), waves=(1, 64)),
        _warm_elementwise,
        ("n", "extra"),
    ),
    "attention_backward": Builder(
        _ints(**_ATTN, sq=(1, 4096), extra_kv=(0, 0)),
        attention_backward,
        ("b", "hkv", "sq"),
    ),
    "embedding_backward": Builder(BUILDERS[OpKind.EMBEDDING].sizes, embedding_backward, GROWS),
    # dy.sum(0): the reduced axis leads (attr dim), ATen's outputs-across-lanes launch
    "reduction_leading": Builder(_ints(**_ROWS), reduction_leading, ("rows", "length")),
    # logits.argmax(-1): int64 indices, the reduce kernel with its counted arithmetic
    "argmax": Builder(_ints(**_ROWS), argmax, ("rows", "length")),
    **{
        f"{kind.value}_backward": Builder(
            _ints(**_ROWS), _row_backward(kind, weights), ("rows", "length")
        )
        for kind, weights in ((OpKind.SOFTMAX, 0), (OpKind.LAYERNORM, 2), (OpKind.RMSNORM, 1))
    },
}
