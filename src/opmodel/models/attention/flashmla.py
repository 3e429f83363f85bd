"""FlashMLA: DeepSeek's decode kernel for Multi-head Latent Attention on sm_90 (attr ``shared_kv``).

MLA's absorbed form attends every query head to one latent cache (MQA): keys of 576 channels
(512 latent + 64 rotary), values the first 512 of the same rows, read once. On Hopper its
decode runs FlashMLA (Li and Liu 2025, github.com/deepseek-ai/FlashMLA; the kernel vLLM and
SGLang serve DeepSeek-V3 with): ``Flash_fwd_kernel_traits_mla<576, 64, 64, 8 warps>``, blocks
of 64 packed query rows (the query heads of the KV head, times the query tokens) by 64 keys,
two warpgroups on ``wgmma`` and one CTA per SM (the 64 x 512 fp32 output fills the register
file, as its deep-dive note says).

Its grid is persistent and balanced rather than FA2's split heuristic (``get_mla_metadata``,
csrc/flash_api.cpp): ``num_sm_parts = SMs // heads_kv // m_blocks`` parts, each running
``m_blocks x heads_kv`` CTAs side by side (one wave, at most one CTA per SM), and every part
takes an equal share of all requests' key blocks, cutting requests where a share ends.
A request cut into pieces writes fp32 partial outputs that a combine kernel merges.

The scheduler weighs a request as its key blocks plus 5 (``FIXED_OVERHEAD_NUM_BLOCKS``) and
gives each part a payload of ``P = ceil(T / parts) + 5`` of the ``T = batch x (kv_blocks + 5)``
units, so ``used = min(parts, ceil(T / P))`` parts get work (a short cache is not cut at all).
The model: ``ctas = m_blocks x heads_kv x used``, ``tiles_per_cta = ceil(batch x kv_blocks /
used)``, and ``(used - 1) + min(used - 1, batch)`` partial pieces (each of the ``used - 1``
cuts adds a piece, and each request cut writes all of its pieces as partials). Per-tile time is the
split-KV tile law (:func:`~opmodel.models.attention.costs.tile_cycles`, MMA then softmax):
its 85 % tensor occupancy at 576/512 channels is what DeepSeek reports for the seesaw
schedule (up to 80 % of the throttled peak, docs/models/attention.md).
"""

from __future__ import annotations

import math

from opmodel.core.views_matmul import AttentionView
from opmodel.models.attention.kernels import FLASHMLA, DecodeGrid, FlashKernel, decode_blocks

__all__ = ["FLASHMLA", "flashmla_grid"]

_FIXED_OVERHEAD_BLOCKS = 5  # Config::FIXED_OVERHEAD_NUM_BLOCKS, get_mla_metadata's weight


def flashmla_grid(kernel: FlashKernel, view: AttentionView, sm_count: int) -> DecodeGrid:
    """FlashMLA's persistent grid for ``view`` on ``sm_count`` SMs (module docstring)."""
    m_blocks, kv_len, kv_blocks = decode_blocks(kernel, view)
    parts = max(1, sm_count // view.heads_kv // m_blocks)
    # get_mla_metadata's units: a request's key blocks plus a fixed overhead; each part takes
    # a payload of the mean share plus one overhead, so the last parts may stay empty
    total = view.batch * (kv_blocks + _FIXED_OVERHEAD_BLOCKS)
    payload = math.ceil(total / parts) + _FIXED_OVERHEAD_BLOCKS
    used = min(parts, math.ceil(total / payload))
    return DecodeGrid.make(
        m_blocks=m_blocks,
        kv_len=kv_len,
        kv_blocks=kv_blocks,
        splits=max(1, math.ceil(used / view.batch)),
        ctas=m_blocks * view.heads_kv * used,
        tiles_per_cta=math.ceil(view.batch * kv_blocks / used),
        partials=(used - 1) + min(used - 1, view.batch),
    )
