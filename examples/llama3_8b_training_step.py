"""One Llama-3-8B training step on one GPU of a tensor- and data-parallel job, as local ops.

    python examples/llama3_8b_training_step.py [--hardware h100_sxm] [--model effective_roofline]
        [--tokens 4096] [--tp 8] [--dp 16]

One micro-batch of ``tokens`` tokens on one rank: tensor parallelism over the ``tp`` GPUs of a
node (Megatron-style: an all-reduce after the row-parallel projections in the forward and
after the column-parallel ones' input gradients in the backward), data parallelism over ``dp``
nodes, one GPU of each in a group (ZeRO-1: each rank keeps ``1 / dp`` of the optimizer state).
The 32 decoder layers forward and backward (their GEMMs and both of each GEMM's gradients,
FlashAttention and its backward, the norms and their backward, RoPE, SiLU-and-mul and its
gradient, the all-reduces), the embedding and its gradient, the LM head split over the
vocabulary and its loss (the softmax's backward pass over the logits for the loss's gradient),
then the gradients' reduce-scatter across the nodes, the fused fp32 AdamW step on the rank's
shard, the cast of the updated parameters to bf16 and their all-gather. One line per part: its
ops, latency and energy, then the step. A simulator would overlap the data-parallel
collectives with the backward pass; the sum here is the serial time. The hardware needs an
``interconnect`` with a ``network`` for ``dp > 1`` (h100_sxm, h200_sxm, b200, a100_80gb_sxm).
"""

from __future__ import annotations

import argparse
from collections.abc import Iterable

from opmodel import LocalOp, OpModelError, backward_of, gemm_backward_of, ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

HIDDEN, HEADS, KV_HEADS, HEAD_DIM, FFN = 4096, 32, 8, 128, 14336  # Llama-3-8B's config.json
LAYERS, VOCAB = 32, 128256
TRAIN = "train_fwd"  # the phase of the forward ops


def _layer_forward(tokens: int, tp: int) -> list[LocalOp]:
    heads, kv_heads, ffn = HEADS // tp, KV_HEADS // tp, FFN // tp
    qkv = (heads + 2 * kv_heads) * HEAD_DIM
    return [
        ops.rmsnorm(tokens, HIDDEN, name="input_norm", phase=TRAIN),
        ops.gemm(tokens, qkv, HIDDEN, name="qkv_proj", phase=TRAIN),
        ops.elementwise("rope", (tokens, qkv), phase=TRAIN),
        ops.attention_prefill(
            1,
            heads,
            tokens,
            HEAD_DIM,
            kv_heads=kv_heads,
            causal=True,
            name="attention",
            phase=TRAIN,
        ),
        ops.gemm(tokens, HIDDEN, heads * HEAD_DIM, name="o_proj", phase=TRAIN),
        ops.rmsnorm(tokens, HIDDEN, name="post_norm", phase=TRAIN),
        ops.gemm(tokens, 2 * ffn, HIDDEN, name="gate_up_proj", phase=TRAIN),
        ops.elementwise("silu_and_mul", (tokens, ffn), phase=TRAIN),
        ops.gemm(tokens, HIDDEN, ffn, name="down_proj", phase=TRAIN),
    ]


def _backward(forward: Iterable[LocalOp], tokens: int, tp: int) -> list[LocalOp]:
    """Each forward op's backward ops, in reverse order."""
    ffn, grad = FFN // tp, "train_bwd"
    out: list[LocalOp] = []
    for op in reversed(list(forward)):
        if op.kind.value == "gemm":
            out += gemm_backward_of(op)
        elif op.name == "silu_and_mul":  # d gate = dy up silu'(gate), d up = dy silu(gate)
            out += [
                ops.elementwise("silu_backward", (tokens, ffn), name="silu_grad", phase=grad),
                ops.elementwise("mul", (tokens, ffn), name="silu_grad", inputs=2, phase=grad),
                ops.elementwise("mul", (tokens, ffn), name="up_grad", inputs=2, phase=grad),
            ]
        elif op.name == "rope":  # the gradient rotated back: the forward's kernel
            out.append(ops.elementwise("rope", op.tensors[0].shape, name="rope_grad", phase=grad))
        else:
            out.append(backward_of(op))
    return out


def _all_reduce(tokens: int, tp: int, phase: str) -> LocalOp:
    return ops.collective("all_reduce", tokens * HIDDEN, tp, name="tp_all_reduce", phase=phase)


def parameters_per_rank(tp: int) -> int:
    """The rank's parameters: its share of the layers' projections and of the embedding and
    head (split over the vocabulary), the norms whole."""
    qkv = (HEADS + 2 * KV_HEADS) * HEAD_DIM
    layer = (HIDDEN * qkv + HEADS * HEAD_DIM * HIDDEN + 3 * HIDDEN * FFN) // tp + 2 * HIDDEN
    return LAYERS * layer + 2 * VOCAB * HIDDEN // tp + HIDDEN


def _dp_collective(operation: str, grads: int, dp: int) -> LocalOp:
    """A data-parallel collective of the ``grads`` gradients over ``dp`` ranks, one a node."""
    return ops.collective(
        operation, grads, dp, name=f"dp_{operation}", ranks_per_node=1, phase="train_bwd"
    )


def step_parts(tokens: int, tp: int, dp: int) -> dict[str, list[tuple[LocalOp, int]]]:
    """The step's ops by part, each with how many times it runs."""
    forward = _layer_forward(tokens, tp)
    reduce = [(_all_reduce(tokens, tp, "train_fwd"), 2 * LAYERS)] if tp > 1 else []
    reduce += [(_all_reduce(tokens, tp, "train_bwd"), 2 * LAYERS)] if tp > 1 else []
    vocab = VOCAB // tp
    head = ops.gemm(tokens, vocab, HIDDEN, name="lm_head", phase=TRAIN)
    # the loss's gradient is its log-softmax's backward pass over the logits
    logits = ops.softmax(
        tokens, vocab, "fp32", name="loss_grad", phase="train_fwd", log_softmax=True
    )
    embedding = ops.embedding(tokens, vocab, HIDDEN, name="embedding", phase=TRAIN)
    loss = [
        (embedding, 1),
        (backward_of(embedding), 1),  # the rank's vocabulary shard's gradient
        (head, 1),
        (ops.cross_entropy(tokens, vocab, name="loss"), 1),
        (backward_of(logits), 1),
        *((g, 1) for g in gemm_backward_of(head)),
    ]
    shard = parameters_per_rank(tp) // dp
    update: list[tuple[LocalOp, int]] = [
        (ops.optimizer("adamw", shard, "fp32", tensors=min(shard, 291)), 1),
        (ops.copy((shard,), "fp32", out_dtype="bf16", name="to_bf16", phase=TRAIN), 1),
    ]
    data_parallel: list[tuple[LocalOp, int]] = []
    if dp > 1:
        grads = shard * dp
        data_parallel = [
            (_dp_collective("reduce_scatter", grads, dp), 1),
            (_dp_collective("all_gather", grads, dp), 1),
        ]
    return {
        "layers forward": [(op, LAYERS) for op in forward],
        "layers backward": [(op, LAYERS) for op in _backward(forward, tokens, tp)],
        "tensor-parallel all-reduces": reduce,
        "embedding, head and loss": loss,
        "data-parallel collectives": data_parallel,
        "optimizer step": update,
    }


def _positive(text: str) -> int:
    """An argparse type: an integer of at least 1, else argparse's one-line usage error."""
    try:
        value = int(text)
    except ValueError:
        value = 0
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be a positive integer (got {text!r})")
    return value


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hardware", default="h100_sxm")
    parser.add_argument("--model", default="effective_roofline")
    parser.add_argument("--tokens", type=_positive, default=4096)
    parser.add_argument("--tp", type=int, choices=(1, 2, 4, 8), default=8)
    parser.add_argument("--dp", type=_positive, default=16)
    args = parser.parse_args()
    try:
        hardware, model = load_hardware(args.hardware), get_model(args.model)
        parts = step_parts(args.tokens, args.tp, args.dp)
    except OpModelError as error:  # an unknown config or model, a step too small to shard
        raise SystemExit(str(error)) from None
    total_s = total_j = 0.0
    for part, ops_in_part in parts.items():
        seconds = joules = 0.0
        for op, count in ops_in_part:
            try:
                profile = model.predict(op, hardware)
            except OpModelError as error:  # a config without the links the step needs
                raise SystemExit(f"{part}: {error}") from None
            seconds, joules = seconds + count * profile.latency_s, joules + count * profile.energy_j
        count = sum(n for _, n in ops_in_part)
        print(f"{part:28s} {count:5d} ops {seconds * 1e3:9.2f} ms {joules:8.2f} J")
        total_s, total_j = total_s + seconds, total_j + joules
    print(f"{'step (serial)':28s} {'':9s} {total_s * 1e3:9.2f} ms {total_j:8.2f} J")


if __name__ == "__main__":
    main()
