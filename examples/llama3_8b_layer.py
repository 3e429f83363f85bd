"""One Llama-3-8B decoder layer, lowered to local ops with ``opmodel.ops`` and predicted.

    python examples/llama3_8b_layer.py [--hardware h100_sxm] [--model effective_roofline]
        [--tokens 2048] [--tp 1]

The layer of ``examples/sweep_llama3_8b.csv`` (prefill of ``tokens`` tokens, one request;
hidden 4096, 32 query and 8 KV heads of 128, FFN 14336: Meta's published config), with its
GEMMs and heads split over ``tp`` tensor-parallel ranks, as a simulator would lower it (from
two ranks up, Megatron-style: an all-reduce of the hidden state after the output and the down
projections, on a config with an ``interconnect`` section): one line per op with its latency,
what limits it and its energy, then the layer's sum.
"""

from __future__ import annotations

import argparse

from opmodel import LocalOp, OpModelError, ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.report import summarize

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336  # Llama-3-8B's config.json


def layer_ops(tokens: int, tp: int = 1) -> list[LocalOp]:
    """The local ops of one decoder layer on one of ``tp`` ranks (heads and FFN split)."""
    heads, kv_heads, ffn = HEADS // tp, KV_HEADS // tp, FFN // tp
    qkv = (heads + 2 * kv_heads) * HEAD_DIM
    # from two ranks, each row-parallel projection's partial sums, summed over the ranks
    reduce = (
        [ops.collective("all_reduce", tokens * HIDDEN, tp, name="all_reduce")] if tp > 1 else []
    )
    return [
        ops.rmsnorm(tokens, HIDDEN, phase="prefill"),
        ops.gemm(tokens, qkv, HIDDEN, name="qkv_proj", phase="prefill"),
        ops.elementwise("rope", (tokens, qkv), phase="prefill"),
        ops.attention_prefill(
            1, heads, tokens, HEAD_DIM, kv_heads=kv_heads, causal=True, name="attention"
        ),
        ops.gemm(tokens, HIDDEN, heads * HEAD_DIM, name="o_proj", phase="prefill"),
        *reduce,
        ops.elementwise("add", (tokens, HIDDEN), name="residual_add", phase="prefill"),
        ops.rmsnorm(tokens, HIDDEN, phase="prefill"),
        ops.gemm(tokens, 2 * ffn, HIDDEN, name="gate_up_proj", phase="prefill"),
        ops.elementwise("silu_and_mul", (tokens, ffn), phase="prefill"),
        ops.gemm(tokens, HIDDEN, ffn, name="down_proj", phase="prefill"),
        *reduce,
        ops.elementwise("add", (tokens, HIDDEN), name="residual_add", phase="prefill"),
    ]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--tokens", type=int, default=2048)
    parser.add_argument("--tp", type=int, choices=(1, 2, 4, 8), default=1)
    args = parser.parse_args()
    try:  # an unknown config or model, a size the ops refuse, a config without links: one line
        hardware, model = load_hardware(args.hardware), get_model(args.model)
        layer = layer_ops(args.tokens, args.tp)
        profiles = [model.predict(op, hardware) for op in layer]
    except OpModelError as error:
        raise SystemExit(str(error)) from None
    total_s = total_j = 0.0
    for op, profile in zip(layer, profiles, strict=True):
        limit = summarize(op, profile, hardware).limiter or profile.engine.value
        us, mj = profile.latency_s * 1e6, profile.energy_j * 1e3
        print(f"{op.name:14s} {us:9.1f} us  {mj:8.2f} mJ  {limit}")
        total_s, total_j = total_s + profile.latency_s, total_j + profile.energy_j
    print(f"{'layer':14s} {total_s * 1e6:9.1f} us  {total_j * 1e3:8.2f} mJ")


if __name__ == "__main__":
    main()
