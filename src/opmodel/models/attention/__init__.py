"""FlashAttention-style prefill and split-KV decode kernels on GPUs (shared machinery).

:mod:`.tiles` counts the (query block, key/value block) tiles a causal or full mask visits in
closed form; :mod:`.kernels` gives the block sizes and overlap structure of FlashAttention-2
(sm_80 to sm_89, and sm_90 without warpgroup MMA) and FlashAttention-3 (sm_90);
:mod:`.evaluate` times them (prefill there, the split-KV decode in :mod:`.decode` with
FlashMLA's grid for MLA's latent cache in :mod:`.flashmla`, the backward pass in
:mod:`.backward`).
Equations: docs/models/attention.md.
"""

from opmodel.models.attention.backward import backward_kernel
from opmodel.models.attention.evaluate import AttentionEvaluation, evaluate_attention
from opmodel.models.attention.kernels import FlashKernel, flash_kernel
from opmodel.models.attention.tiles import TileCounts, tile_counts

__all__ = [
    "AttentionEvaluation",
    "FlashKernel",
    "TileCounts",
    "backward_kernel",
    "evaluate_attention",
    "flash_kernel",
    "tile_counts",
]
