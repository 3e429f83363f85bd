"""Liger-Kernel's benchmark rows as op-table columns, for scripts/convert_op_data.py: which
(kernel, provider) pairs one kernel computes, the GPUs and dtypes they name, and the tensors and
attrs each kind of row becomes (data/ops/liger/SOURCE.md)."""

from __future__ import annotations

import json

from vidur_layer_ops import elementwise_columns, tensor_text

LIGER_GPUS = {
    "NVIDIA A100-SXM4-80GB": "a100_80gb_sxm",
    "NVIDIA H100 80GB HBM3": "h100_sxm",
    "NVIDIA GeForce RTX 3090": "rtx3090",
}
LIGER_DTYPES = {"torch.float32": "fp32", "torch.bfloat16": "bf16", "torch.float16": "fp16"}
# (kernel_name, provider) -> (op kind, implementation); eager multi-kernel modules are left out
LIGER_KERNELS = {
    ("layer_norm", "liger"): ("layernorm", "fused"),  # Triton
    ("layer_norm", "huggingface"): ("layernorm", "pytorch"),  # nn.LayerNorm: one ATen kernel
    ("rms_norm", "liger"): ("rmsnorm", "fused"),  # Triton
    ("softmax", "liger"): ("softmax", "fused"),  # Triton
    ("softmax", "torch"): ("softmax", "pytorch"),  # torch.softmax: one ATen kernel
    ("embedding", "liger"): ("embedding", "fused"),  # Triton gather
    ("embedding", "huggingface"): ("embedding", "pytorch"),  # nn.Embedding: ATen's index_select
    # Liger's row-per-program Triton kernels (added 2026-12-07): LigerMegatronRMSNorm is its
    # RMSNorm kernel; relu_squared and the Megatron SwiGLU (LigerFusedGateUpSiLUMulFunction,
    # gate and up read from one [tokens, 2 x ffn] buffer) are elementwise
    ("megatron_rms_norm", "liger"): ("rmsnorm", "fused"),
    ("relu_squared", "liger"): ("elementwise", "fused"),
    ("megatron_swiglu", "liger"): ("elementwise", "fused"),
    ("rope", "liger"): ("elementwise", "fused"),  # _triton_rope: one token per program
    # LigerFusedAddRMSNorm: one row per program reads x and the residual, writes the sum and
    # the norm of it (an rmsnorm with a fused residual add, tensors tagged residual)
    ("fused_add_rms_norm", "liger_fused_add_rms_norm"): ("rmsnorm", "fused"),
    # the loss over B x T rows of x_value logits (added 2026-12-07): Liger's fused kernel,
    # and nn.CrossEntropyLoss (log_softmax, then nll_loss: two ATen kernels)
    ("cross_entropy", "liger"): ("cross_entropy", "fused"),
    ("cross_entropy", "huggingface"): ("cross_entropy", "pytorch"),
}
# the elementwise rows' function attr and input count
LIGER_ELEMENTWISE = {"relu_squared": ("relu_squared", 1), "megatron_swiglu": ("silu_and_mul", 2)}


# backward passes kept: nn.LayerNorm's is one ATen node (the grad-input and gamma/beta kernels);
# Liger's Triton backward kernels (persistent programs; the H100 LayerNorm rows' atomic adds,
# Liger PR #815) are structures the model does not describe, and the
# eager RMSNorm's backward is many kernels (data/ops/liger/SOURCE.md)
LIGER_BACKWARD_KERNELS = {("layer_norm", "huggingface"): ("layernorm", "pytorch")}


def backward_tensors(count: int, length: int, dtype: str) -> str:
    """x, dy, gamma and beta in, dx, dgamma and dbeta out (docs/op_files.md)."""
    rows, vector = f"{count}x{length}:{dtype}", f"{length}:{dtype}"
    read = (f"input:{rows}", f"grad:{rows}", f"weight:{vector}", f"weight:{vector}")
    return ";".join((*read, f"output:{rows}", f"output:{vector}", f"output:{vector}"))


def cross_entropy_columns(rows: int, vocab: int) -> tuple[str, str]:
    """The mean cross-entropy of ``rows`` fp32 logit rows (Liger's benchmark builds them with
    ``torch.randn(B * T, V)``, the default dtype) and int64 targets (``torch.randint``)."""
    tensors = f"input:{rows}x{vocab}:fp32;input:{rows}:int64;output:1:fp32"
    return tensors, json.dumps({"reduction": "mean"})


def embedding_columns(tokens: int, vocab: int, width: int, dtype: str) -> tuple[str, str]:
    """An embedding lookup of ``tokens`` int64 ids into a ``vocab x width`` table."""
    table, rows = f"{vocab}x{width}:{dtype}", f"{tokens}x{width}:{dtype}"
    return f"input:{tokens}:int64;weight:{table};output:{rows}", json.dumps({})


def liger_elementwise_columns(
    kernel_name: str, rows: int, length: int, dtype: str, implementation: str
) -> tuple[str, str]:
    """An elementwise op over ``rows x length`` output elements: ``LIGER_ELEMENTWISE`` gives
    its function and how many ``rows x length`` inputs it reads."""
    function, inputs = LIGER_ELEMENTWISE[kernel_name]
    return elementwise_columns(function, inputs, (rows, length), implementation, dtype)


def rope_columns(extra: dict[str, object], x_name: str, x: int) -> tuple[str, str, str]:
    """Liger's rope benchmark: the q and k heads of ``bsz`` sequences rotated in place, with the
    halves of one cos and one sin row per token (``x`` is the hidden size or the sequence
    length, ``x_name`` ``H`` or ``T``): tensors, attrs and the label's shape."""
    heads = int(str(extra.get("num_q_heads", extra.get("num_attention_heads"))))
    kv_heads = int(str(extra.get("num_kv_heads", extra.get("num_key_value_heads"))))
    hidden = x if x_name == "H" else int(str(extra["hidden_size"]))
    tokens = (x if x_name == "T" else int(str(extra["seq_len"]))) * int(str(extra.get("bsz", 1)))
    head_dim, dtype = hidden // heads, LIGER_DTYPES[str(extra["dtype"])]
    rotated = f"{tokens}x{heads + kv_heads}x{head_dim}:{dtype}"
    tensors = f"input:{rotated};input:{tokens}x1x{head_dim}:{dtype};output:{rotated}"
    attrs = json.dumps({"function": "rope", "implementation": "fused"})
    return tensors, attrs, f":T{tokens}:H{heads}+{kv_heads}x{head_dim}"


def residual_norm_columns(
    rows: int, length: int, dtype: str, implementation: str
) -> tuple[str, str]:
    """An RMSNorm with a fused residual add run by ``implementation``: x and the residual
    (layout ``residual``) in, the normed row and the sum out (docs/op_files.md)."""
    shape = (rows, length)
    tensors = (
        tensor_text("input", shape, dtype),
        tensor_text("input/residual", shape, dtype),
        tensor_text("weight", (length,), dtype),
        tensor_text("output", shape, dtype),
        tensor_text("output/residual", shape, dtype),
    )
    return ";".join(tensors), json.dumps({"implementation": implementation})


def liger_rows(extra: dict[str, object]) -> int:
    """Rows of a Liger row-op benchmark: ``M``, or Megatron's ``S x B`` tokens."""
    if "M" in extra:
        return int(str(extra["M"]))
    return int(str(extra["S"])) * int(str(extra["B"]))


# Liger's cuTile benchmark file (Liger 0.8.0, a B200): its Triton kernels and torch's baselines
# beside the cuTile ones, which are left out (a kernel structure the model does not describe)
LIGER_CUTILE_KERNELS = {
    ("layer_norm", "liger_triton"): ("layernorm", "fused"),  # Triton
    ("layer_norm", "torch"): ("layernorm", "pytorch"),  # nn.LayerNorm: one ATen kernel
    ("softmax", "liger_triton"): ("softmax", "fused"),  # Triton
    ("softmax", "torch"): ("softmax", "pytorch"),  # torch.softmax: one ATen kernel
    ("rope", "liger_triton"): ("elementwise", "fused"),  # _triton_rope (added 2026-12-07)
    # the loss over BT rows of vocab_size fp32 logits (added 2026-12-07)
    ("cross_entropy", "liger_triton"): ("cross_entropy", "fused"),
    ("cross_entropy", "torch"): ("cross_entropy", "pytorch"),  # nn.CrossEntropyLoss
}
# backward rows kept from the cuTile file (added 2026-12-07): nn.Softmax's backward is one
# ATen node, its grad * output multiply and then the backward kernel (SoftMax.cu,
# softmax_backward_cuda_out); nn.LayerNorm's, as the A100/H100 file's, the grad-input and
# gamma/beta kernels; Liger's and cuTile's backward kernels are left out as above
LIGER_CUTILE_BACKWARD_KERNELS = {
    ("softmax", "torch"): ("softmax", "pytorch"),
    ("layer_norm", "torch"): ("layernorm", "pytorch"),
}


def softmax_backward_tensors(count: int, length: int, dtype: str) -> str:
    """y (the forward's output) and dy in, dx out (docs/op_files.md)."""
    rows = f"{count}x{length}:{dtype}"
    return f"input:{rows};grad:{rows};output:{rows}"
