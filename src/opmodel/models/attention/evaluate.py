"""Time of a FlashAttention kernel: per-tile SM cycles, waves, and memory bounds.

Per tile (``Br`` query rows x ``Bc`` keys), in SM cycles:

    t_mma  = 2 Br Bc (d_qk + d_v) / (tensor FLOP/cycle/SM x mma.sync fraction when it applies)
    t_sfu  = Br Bc / SFU results per cycle per SM                       (one exp2 per score)
    t_fp32 = (4 Br Bc + Br d_v) / FP32 lanes per SM   (scale-and-subtract FFMA, max, sum and
                                                       the 16-bit conversion per score; the
                                                       output rescale per row)
    FA2:  t_tile = t_mma + max(t_sfu, t_fp32)
    FA3:  t_tile = t_mma + t_fp32 + max(0, t_sfu - (w - 1) / w x t_mma)

FA3's consumer warpgroups (``w = Br / 64``, a ``wgmma`` being 64 rows tall) take turns on the
tensor cores, so one warpgroup's exponentials hide under the others' GEMMs, ``(w - 1) / w`` of
the tile's MMA time, and the rest shows (docs/models/attention.md, "Exposed exponentials").

Prefill: CTAs (one per query block) are spread breadth first over the ``S`` SMs, and the CTAs
resident on an SM share its tensor cores, so the busiest SM does ``ceil(CTAs / S)`` CTAs'
tiles. An FA3 query block also pays a start ``t_start = t_sfu + t_fp32 + t_epi + L_dram``
(cycles): its first tile's softmax, which no other warpgroup's GEMM hides yet (the ping-pong
starts with the second tile); its epilogue ``t_epi = Br d_v / FP32 lanes + Br d_v x output
bytes / shared-memory bytes per cycle``, the output scaled by ``1 / l`` and written to shared
memory for its TMA store while the tensor cores wait (:func:`.costs.epilogue_cycles`); and a
DRAM round trip for its Q block and first K/V block, which the producer can issue only once
the previous block has released the buffers. FA2 runs several CTAs per SM, which hide each
other's start and epilogue (``t_start = 0``). Without a mask every CTA visits
all key blocks: ``compute = ceil(CTAs / S) (nk t_tile + t_start)``. With a causal mask FA3's
longest-first scheduler balances the SMs, within whole CTAs: ``compute = max(tiles
t_tile / S + CTAs / S t_start, nk t_tile + t_start, ceil(CTAs / S) (mean tiles per CTA x
t_tile + t_start))``. A kernel that starts its query blocks in launch order (FA2, whose
``m_block`` is ``blockIdx.x``; attr ``cta_order: in_order`` for others, such as cuDNN's fused
kernels as PyTorch's SDPA runs them on sm_90) leaves the longest blocks for last: greedy list
scheduling's ``(work - longest) / S + longest`` with ``work`` the summed block times, never
below the balanced time nor above the unmasked one. Memory: DRAM
reads Q, K, V and writes O once (the query blocks of a head run together, so K and V re-reads
hit L2); L2 serves every tile's K and V blocks. ``latency = fixed + max(compute + 2 L_dram +
L_l2, DRAM bytes / bandwidth + L_dram, L2 bytes / L2 bandwidth)``, one ``L_dram`` (the fill)
fewer for FA3, whose first block's start holds it.

Decode runs the split-KV kernel, :mod:`.decode`; a backward pass (``view.backward``) its three
kernels, :mod:`.backward`.

Another kernel's dirty lines (attr ``l2_dirty_bytes``: a benchmark's L2 flush that wrote a
buffer) are written back as the kernel's own DRAM traffic evicts them,
``D (1 - exp(-(DRAM reads + writes) / C))`` with ``D = min(l2_dirty_bytes, C)`` and ``C`` the
L2's shared capacity (:func:`~opmodel.models.shared.l2_survival.dirty_write_back_bytes`, the
law of the GEMM and streaming kernels; :func:`~opmodel.models.attention.costs.dirty_bytes`).
They take DRAM bandwidth beside the kernel's own bytes but not its loads' latency: prefill's
DRAM bound carries them (a compute-bound prefill hides them), decode's waves too
(:mod:`.decode`).
"""

from __future__ import annotations

from dataclasses import replace

from opmodel.core.views_matmul import AttentionView
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.attention.backward import evaluate_backward
from opmodel.models.attention.costs import (
    busiest_sm_s,
    common,
    dirty_bytes,
    epilogue_cycles,
    issued_flops,
    kv_block_bytes,
    rates,
    resident_ctas,
    tile_cycles,
)
from opmodel.models.attention.decode import evaluate_decode
from opmodel.models.attention.evaluation import AttentionEvaluation
from opmodel.models.attention.kernels import FlashKernel, num_splits
from opmodel.models.attention.tiles import TileCounts, batch_tile_counts, request_tile_counts

__all__ = ["AttentionEvaluation", "evaluate_attention", "num_splits"]


def evaluate_attention(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> AttentionEvaluation:
    """Time ``kernel`` on the attention ``view`` on ``hardware`` (a GPU)."""
    if view.backward:
        return evaluate_backward(kernel, view, hardware)
    if kernel.name in ("splitkv", "flashmla"):
        return evaluate_decode(kernel, view, hardware)
    return _prefill(kernel, view, hardware)


def _prefill_counts(kernel: FlashKernel, view: AttentionView) -> tuple[TileCounts, int]:
    """Query blocks, key blocks and visited tiles (mask and window applied) of one (batch,
    head), and the heads they repeat over (``batch x heads_q``); with per-request lengths,
    of one head over the batch (:func:`batch_tile_counts`), and ``heads_q``."""
    shape = (kernel.block_q, kernel.block_kv, view.causal, view.window)
    lengths = view.request_lengths()
    if lengths is None:
        return request_tile_counts(shape, view.seq_q, view.seq_kv), view.batch * view.heads_q
    return batch_tile_counts(request_tile_counts, shape, lengths), view.heads_q


def _prefill_bytes(kernel: FlashKernel, view: AttentionView, tiles: int) -> tuple[int, int, int]:
    """(DRAM read, DRAM write, L2 read) bytes of a prefill visiting ``tiles`` tiles in all:
    Q, K and V read and O written once (the requests' rows, without padding)."""
    q = view.q_share(view.q.nbytes)
    dram_read = q + view.kv_share(view.kv_nbytes)
    return dram_read, view.q_share(view.o.nbytes), q + tiles * kv_block_bytes(kernel, view)


def _block_start(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec, first_tile: float
) -> float:
    """Cycles a query block adds to its tiles (module docstring): FA3's first tile's softmax
    and load round trip (``first_tile``) and its epilogue; none for FA2, whose CTAs share
    their SM and hide each other's."""
    if not kernel.softmax_overlapped:
        return 0.0
    return first_tile + epilogue_cycles(kernel, view, hardware)


def _scheduled(kernel: FlashKernel, view: AttentionView) -> AttentionView:
    """``view`` as its query blocks are scheduled: FA2 launches them in order (``m_block =
    blockIdx.x`` of a (blocks, batch, heads) grid, flash_fwd_kernel.h), shortest first under a
    causal mask, whatever attr ``cta_order`` says."""
    return view if view.in_order or kernel.name != "fa2" else replace(view, in_order=True)


def _prefill(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> AttentionEvaluation:
    """The prefill ``kernel`` on ``view``: fixed + max(compute, DRAM, L2) (module docstring)."""
    sm, fixed, l_dram, l_l2, clock = common(hardware)
    counts, heads = _prefill_counts(kernel, view)
    tile, mma, softmax, whole_softmax = tile_cycles(kernel, view, hardware, kernel.block_q)
    start = _block_start(kernel, view, hardware, whole_softmax + l_dram * clock)
    times_s = (tile / clock, start / clock)
    compute = busiest_sm_s(_scheduled(kernel, view), counts, heads, times_s, sm.sm_count)
    dram_read, dram_write, l2_read = _prefill_bytes(kernel, view, heads * counts.tiles)
    dirty = dirty_bytes(view, hardware, dram_read + dram_write)
    hbm_rate, l2_rate = rates(hardware)
    fill_drain = (1 if kernel.softmax_overlapped else 2) * l_dram + l_l2  # FA3's start has one
    times = {
        "compute": compute + fill_drain,
        "dram": (dram_read + dram_write + dirty) / hbm_rate + l_dram,
        "l2": (l2_read + dram_write) / l2_rate,
    }
    return AttentionEvaluation(
        kernel=kernel,
        tiles=counts,
        splits=1,
        ctas=heads * counts.q_blocks,
        resident_ctas_per_sm=resident_ctas(kernel, view, hardware),
        tile_cycles=tile,
        mma_cycles_per_tile=mma,
        softmax_cycles_per_tile=softmax,
        start_cycles_per_block=start,
        compute_s=compute,
        dram_s=times["dram"],
        l2_s=times["l2"],
        limiter=(limiter := max(times, key=lambda name: times[name])),
        latency_s=fixed + times[limiter],
        dram_read_bytes=dram_read,
        dram_write_bytes=dram_write,
        l2_read_bytes=l2_read,
        issued_mma_flops=issued_flops(kernel, view, heads * counts.tiles),
        sm_clock_hz=hardware.compute.clock_hz,
        dirty_write_back_bytes=dirty,
    )
