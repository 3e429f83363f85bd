"""Attributes of the attention kinds (attention_prefill, attention_decode): the typed specs
:mod:`opmodel.core.attrs` assembles per kind; their cross-checks live with the attention view
(:mod:`opmodel.core.views_attention`)."""

from __future__ import annotations

from opmodel.core.attr_spec import AttrSpec

__all__ = ["ATTENTION", "ATTENTION_KERNELS", "KV_LENGTHS", "PREFILL_LENGTHS"]

# the attention kernels a user may name (attr attention_kernel)
ATTENTION_KERNELS = ("fa2", "fa3", "flashmla")

ATTENTION = (
    AttrSpec(name="causal", kind=bool, doc="causal mask, bottom-right aligned"),
    AttrSpec(
        name="window",
        kind=int,
        minimum=1,
        doc="sliding window (with causal): each query sees its last `window` keys",
    ),
    AttrSpec(
        name="page_size",
        kind=int,
        minimum=1,
        doc="paged KV cache: tokens per page (the kernel reads a block table; default contiguous)",
    ),
    AttrSpec(
        name="cta_order",
        kind=str,
        choices=("longest_first", "in_order"),
        doc="order in which a causal prefill's query blocks start: longest_first (the default: "
        "FlashAttention-2/3's scheduling) or in_order (launch order, the longest blocks last, as "
        "cuDNN's fused kernels that PyTorch's SDPA runs on sm_90 behave)",
    ),
    AttrSpec(
        name="attention_kernel",
        kind=str,
        choices=ATTENTION_KERNELS,
        doc="the kernel family that runs the op, for effective_roofline on GPUs: fa2 "
        "(FlashAttention-2, warp-level mma.sync, on any GPU: PyTorch's built-in flash backend "
        "and vLLM's FA2 backend run it on Hopper too), fa3 (FlashAttention-3's warpgroup "
        "kernels, sm_90 and sm_100 only) or flashmla (FlashMLA's decode, sm_90 with "
        "shared_kv only). Default: fa3 on sm_90 and sm_100 (FlashMLA for shared_kv decode on "
        "sm_90), fa2 elsewhere",
    ),
    AttrSpec(
        name="shared_kv",
        kind=bool,
        doc="the values are the first head_dim_v channels of each key row, stored once "
        "(Multi-head Latent Attention's absorbed form, DeepSeek-V2/V3: one latent cache of "
        "512 + 64 channels per token, V its first 512): V's bytes are neither read nor "
        "stored apart from K's; a forward pass (default false)",
    ),
)
KV_LENGTHS = AttrSpec(
    name="kv_lengths",
    kind=tuple,
    minimum=1,
    doc="keys each request of the batch holds in its cache, one entry per batch row (a batch "
    "of requests at different context lengths, as a serving engine's decode step runs them): "
    "each at most K's seq dim (the cache's capacity per request) and, with causal, at least "
    "the query tokens; a request's queries see its last keys (bottom-right). Default: every "
    "request holds K's seq dim of keys",
)
Q_LENGTHS = AttrSpec(
    name="q_lengths",
    kind=tuple,
    minimum=1,
    doc="query tokens each request of the batch holds, one entry per batch row (a packed "
    "prefill of sequences at different lengths: FlashAttention's varlen API, its cu_seqlens): "
    "each at most Q's seq dim (the padded length); needs kv_lengths, and with causal each "
    "request's keys at least its queries. Default: every request holds Q's seq dim of queries",
)
PREFILL_LENGTHS = (KV_LENGTHS, Q_LENGTHS)
