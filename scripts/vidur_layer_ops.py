"""The single-kernel ops of one Vidur MLP-layer row as op-table columns, for
``convert_op_data.py``: the embedding (TP = 1), the two norms, vLLM's rotary embedding, the
MLP's activation and the residual add, each with what the kernel before it wrote (Vidur runs a
layer's kernels in order without flushing L2), and the column helpers both converters use."""

from __future__ import annotations

import json
from collections.abc import Iterator, Mapping
from typing import NamedTuple

from opmodel.core.dtypes import DType
from opmodel.core.enums import OpKind, Phase, TensorRole
from opmodel.core.op import LocalOp, TensorSpec
from opmodel.hardware import load_hardware
from opmodel.models import get_model

FP16_BYTES = 2

LAYERNORM_MODELS = ("microsoft/phi-2",)  # every other Vidur model uses RMSNorm


def tensor_text(role: str, shape: tuple[int, ...], dtype: str) -> str:
    """An op-table tensor: ``role:d0xd1x...:dtype`` (docs/sweeps.md)."""
    return f"{role}:{'x'.join(str(d) for d in shape)}:{dtype}"


def norm_columns(kind: str, rows: int, length: int, dtype: str, kernel: str) -> tuple[str, str]:
    """The tensors and attrs columns of a row op (softmax, layernorm, rmsnorm) run by ``kernel``."""
    weights = {"layernorm": 2, "rmsnorm": 1, "softmax": 0}[kind]
    tensors = [tensor_text("input", (rows, length), dtype)]
    tensors += [tensor_text("weight", (length,), dtype)] * weights
    tensors.append(tensor_text("output", (rows, length), dtype))
    return ";".join(tensors), json.dumps({"implementation": kernel})


def with_attrs(attrs: str, extra: Mapping[str, object]) -> str:
    """The JSON attrs ``attrs`` with ``extra`` added."""
    return json.dumps({**json.loads(attrs), **extra})


def elementwise_columns(
    function: str, inputs: int, shape: tuple[int, ...], kernel: str, dtype: str = "fp16"
) -> tuple[str, str]:
    """The tensors and attrs columns of ``function`` over ``inputs`` tensors of ``shape`` into
    one output, run by ``kernel``."""
    tensors = [tensor_text("input", shape, dtype)] * inputs + [tensor_text("output", shape, dtype)]
    return ";".join(tensors), json.dumps({"function": function, "implementation": kernel})


def _gemm_bytes(m: int, n: int, k: int) -> int:
    """Compulsory fp16 bytes of ``[m, k] @ [k, n]``: A, B and C once each."""
    return (m * k + k * n + m * n) * FP16_BYTES


class GemmWaves:
    """Waves of the fp16 GEMM ``[m, k] @ [k, n]`` on one GPU config, as opmodel's
    ``effective_roofline`` predicts it (automatic kernel selection): full waves plus one for a
    tail. A GEMM stores each output tile in its CTA's epilogue, so a consumer of its output
    finds it written in that many bursts (attr ``producer_waves``, docs/models/streaming.md)."""

    def __init__(self, config: str) -> None:
        self._spec = load_hardware(config)
        self._model = get_model("effective_roofline")
        self._cache: dict[tuple[int, int, int], int] = {}

    def __call__(self, m: int, n: int, k: int) -> int:
        key = (m, n, k)
        if key not in self._cache:
            op = LocalOp(
                name="producer_gemm",
                kind=OpKind.GEMM,
                phase=Phase.INFERENCE,
                tensors=(
                    TensorSpec(TensorRole.INPUT, (m, k), DType.FP16),
                    TensorSpec(TensorRole.WEIGHT, (k, n), DType.FP16),
                    TensorSpec(TensorRole.OUTPUT, (m, n), DType.FP16),
                ),
            )
            grid = self._model.predict(op, self._spec).diagnostics.grid
            self._cache[key] = grid.full_waves + (1 if grid.tail_ctas else 0)
        return self._cache[key]


def _waves(waves: GemmWaves | None, m: int, n: int, k: int) -> dict[str, int]:
    """``{"producer_waves": W}`` of the GEMM ``[m, k] @ [k, n]`` when ``waves`` is given."""
    return {} if waves is None else {"producer_waves": waves(m, n, k)}


class _Layer(NamedTuple):
    """One Vidur row's layer sizes: tokens, hidden width, TP degree, the MLP's expanded width
    per GPU and whether the MLP is gated."""

    tokens: int
    embd: int
    tp: int
    expanded: int
    gated: bool


_Op = tuple[str, str, str, str, str]  # (Vidur op, opmodel kind, tensors, attrs, implementation)


def vidur_ops(model: str, record: dict[str, str], waves: GemmWaves | None) -> Iterator[_Op]:
    """(Vidur op, opmodel kind, tensors, attrs, implementation) of one row's single-kernel ops.

    RMSNorm and SiluAndMul are vLLM CUDA kernels; phi-2's LayerNorm (torch.nn.LayerNorm) and its
    GELU are PyTorch (ATen) kernels, as are the residual add and, at TP = 1, the embedding.
    Vidur runs the layer's kernels in order without flushing L2
    (vidur/profiling/mlp/mlp_impl.py), so each op reads what the kernel before it wrote: the
    ``warm_l2`` / ``warm_input`` attrs say which input, and ``producer_bytes`` what that kernel
    moved (compulsory bytes: embedding gather 2 x its output, the untimed residual add 3 x, a
    GEMM A + B + C).
    """
    tp = int(record["num_tensor_parallel_workers"])
    layer = _Layer(
        tokens=int(record["num_tokens"]),
        embd=int(record["n_embd"]),
        tp=tp,
        expanded=int(record["n_expanded_embd"]) // tp,
        gated=record["use_gated_mlp"] == "True",
    )
    if tp == 1:
        yield _embedding_op(layer, int(record["vocab_size"]))
    yield from _norm_ops(model, layer)
    if model not in LAYERNORM_MODELS:
        yield _rope_op(layer, int(record["n_head"]), int(record["n_kv_head"]), waves)
    yield _activation_op(layer, waves)
    if model not in LAYERNORM_MODELS:
        yield _residual_add_op(layer, waves)


def _embedding_op(layer: _Layer, vocab: int) -> _Op:
    """F.embedding of the token ids (torch.randint over the vocabulary, Vidur's
    mlp_wrapper.py): ATen's index_select, one kernel; above TP = 1 the vocabulary-parallel
    embedding adds masking kernels and is left out."""
    tensors = ";".join(
        (
            tensor_text("input", (layer.tokens,), "int64"),
            tensor_text("weight", (vocab, layer.embd), "fp16"),
            tensor_text("output", (layer.tokens, layer.embd), "fp16"),
        )
    )
    return ("emb", "embedding", tensors, json.dumps({"implementation": "pytorch"}), "pytorch")


def _norm_ops(model: str, layer: _Layer) -> Iterator[_Op]:
    """The two norms, each after the kernel that wrote its input: the embedding gather (read
    its rows, wrote the hidden states) and the untimed residual add."""
    hidden_bytes = layer.tokens * layer.embd * FP16_BYTES
    norm = "layernorm" if model in LAYERNORM_MODELS else "rmsnorm"
    kernel = "pytorch" if norm == "layernorm" else "vllm"
    producers = {"input_layernorm": 2 * hidden_bytes, "post_attention_layernorm": 3 * hidden_bytes}
    for op, producer in producers.items():
        tensors, attrs = norm_columns(norm, layer.tokens, layer.embd, "fp16", kernel)
        yield (
            op,
            norm,
            tensors,
            with_attrs(attrs, {"warm_l2": True, "producer_bytes": producer}),
            kernel,
        )


def _rope_op(layer: _Layer, heads: int, kv_heads: int, waves: GemmWaves | None) -> _Op:
    """vLLM's rotary embedding on the q and k heads the qkv projection just wrote, with one
    cos/sin row per token (phi-2 rotates 32 of its 80 head dims and is left out)."""
    tokens, embd, tp = layer.tokens, layer.embd, layer.tp
    head_dim = embd // heads
    rotated = (heads + kv_heads) // tp
    qkv_width = (heads + 2 * kv_heads) // tp * head_dim
    tensors = ";".join(
        (
            tensor_text("input", (tokens, rotated, head_dim), "fp16"),
            tensor_text("input", (tokens, 1, head_dim), "fp16"),
            tensor_text("output", (tokens, rotated, head_dim), "fp16"),
        )
    )
    rope_attrs = {
        "function": "rope",
        "implementation": "vllm",
        "warm_input": 0,
        "producer_bytes": _gemm_bytes(tokens, qkv_width, embd),
        **_waves(waves, tokens, qkv_width, embd),
    }
    return ("attn_rope", "elementwise", tensors, json.dumps(rope_attrs), "vllm")


def _activation_op(layer: _Layer, waves: GemmWaves | None) -> _Op:
    """The MLP's activation on what the up projection just wrote: vLLM's SiluAndMul (reads
    ``[tokens, 2 x expanded]``, writes ``[tokens, expanded]``) when gated, else ATen's GELU."""
    tokens, embd, expanded = layer.tokens, layer.embd, layer.expanded
    up_width = (2 if layer.gated else 1) * expanded
    warm = {
        "warm_l2": True,
        "producer_bytes": _gemm_bytes(tokens, up_width, embd),
        **_waves(waves, tokens, up_width, embd),
    }
    if layer.gated:
        tensors, attrs = elementwise_columns("silu_and_mul", 2, (tokens, expanded), "vllm")
        return ("mlp_act", "elementwise", tensors, with_attrs(attrs, warm), "vllm")
    tensors, attrs = elementwise_columns("gelu", 1, (tokens, expanded), "pytorch")
    return ("mlp_act", "elementwise", tensors, with_attrs(attrs, warm), "pytorch")


def _residual_add_op(layer: _Layer, waves: GemmWaves | None) -> _Op:
    """Residual + down-projection output (input 1, just written); phi-2's timed add is two
    kernels (attention + MLP + residual) and is left out."""
    tokens, embd, expanded = layer.tokens, layer.embd, layer.expanded
    warm = {
        "warm_input": 1,
        "producer_bytes": _gemm_bytes(tokens, embd, expanded),
        **_waves(waves, tokens, embd, expanded),
    }
    tensors, attrs = elementwise_columns("add", 2, (tokens, embd), "pytorch")
    return ("add", "elementwise", tensors, with_attrs(attrs, warm), "pytorch")
