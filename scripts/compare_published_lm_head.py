"""A language model's head and loss against published times: ``nn.Linear`` to a 128,256-word
vocabulary, then ``nn.CrossEntropyLoss`` on its bf16 logits, on an A100.

Usage: python scripts/compare_published_lm_head.py

Source: Liger-Kernel (BSD-2-Clause), benchmark/data/all_benchmark_data.csv at commit
ead96b618e5c67bddc6a6e9bcb99bfe6b5ab661c (via ../shared/data/liger_kernel_benchmarks), kernel
``fused_linear_cross_entropy``, provider ``huggingface``, mode ``forward``,
"NVIDIA A100-SXM4-80GB", Liger 0.4.2, 2024-11-22: benchmark/scripts/
benchmark_fused_linear_cross_entropy.py's ``TorchLMHeadCE``, ``ce_loss(lin(x), y)`` with ``x``
a bf16 ``[BT, 4096]`` tensor, the weight a bf16 ``[128256, 4096]`` one (no bias), int64 targets
drawn at random and the mean loss, timed by Triton's ``do_bench`` (``rep=100``), the medians
copied below. Two pieces run: the head's GEMM ``x @ W^T`` (bf16 logits ``[BT, 128256]``) and
the loss, ``log_softmax`` then ``nll_loss`` over those bf16 logits (the ``cross_entropy``
kind, ``implementation: pytorch``, docs/models/streaming.md, "Cross-entropy"). The row is
their sum; the flush before each call and the events' scope (a few µs) are left out of
times of 20-150 ms. Nothing is fitted; the A100 runs at the clock its sustained calibration
fitted on Azure's published cuBLASLt runs. Liger's fused provider (a chunked kernel that also
computes the gradient in the forward) is left out.
"""

from __future__ import annotations

from ratio_summary import TwoKernels, print_two_kernels

from opmodel import ops
from opmodel.hardware import load_hardware
from opmodel.models import get_model

CONFIG = "a100_80gb_sxm"
HIDDEN, VOCAB = 4096, 128256
# BT (rows) -> the published median, ms
PUBLISHED_MS = {
    4096: 20.911680221557617,
    8192: 37.97203063964844,
    16384: 76.39142608642578,
    32768: 151.91404724121094,
}


def compare() -> list[TwoKernels]:
    """Every published row under ``effective_roofline`` on ``CONFIG``."""
    model, hardware = get_model("effective_roofline"), load_hardware(CONFIG)
    rows = []
    for bt, ms in PUBLISHED_MS.items():
        head = ops.gemm(bt, VOCAB, HIDDEN, transpose_b=True, name="lm_head", phase="train_fwd")
        loss = ops.cross_entropy(bt, VOCAB, "bf16", implementation="pytorch")
        gemm, ce = (model.predict(op, hardware).latency_s for op in (head, loss))
        rows.append(TwoKernels(bt, ms * 1e-3, gemm, ce))
    return rows


def main() -> int:
    title = f"Linear to {VOCAB} words and nn.CrossEntropyLoss on its bf16 logits, on {CONFIG}"
    header = f"{'rows':>9} {'published ms':>12} {'model ms':>9}  ratio  GEMM ms  loss ms"
    print_two_kernels((title, header), compare(), 1e3)
    return 0


if __name__ == "__main__":
    from script_errors import run

    run("compare_published_lm_head", main)
