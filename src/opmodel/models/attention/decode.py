"""Time of the split-KV (flash-decoding) attention kernel, and of FlashMLA on its own grid.

Decode (split-KV): the query rows of a KV head's group are packed into 64-row blocks; the key
range is split by FA2's ``num_splits_heuristic`` (csrc/flash_attn/flash_api.cpp): no split when
the grid already has 80 % of twice the SM count in CTAs (FA2 doubles the count for its
128-thread CTAs), else the fewest splits whose wave efficiency is within 85 % of the best.
Each wave of ``c`` CTAs takes ``max(per-CTA compute, s) + L_dram + min(t_tile, s / n)``,
``s = c x bytes per CTA / rate`` the streamed time of its ``n`` key/value blocks per CTA
(its share of the keys and values, which the query blocks of one KV head read side by side and
DRAM streams once, plus its queries and outputs),
``rate = loaded_rate(bandwidth, c x min(2 x block bytes + Q and O tiles / n, bytes per CTA),
L_dram)`` (two key/value blocks in flight per CTA besides its query tile, loaded at its start,
and output tile, stored at its end, each in flight for about one of its ``n`` blocks' time;
never more than it moves; Little's law at DRAM's loaded latency,
:mod:`opmodel.models.shared.queueing`): a two-stage pipeline fills with a DRAM round trip and
drains with its last block's compute, or with that block's transfer when compute bounds the
wave. A combine pass (one more fixed overhead plus the partial
outputs) follows a split. With a paged KV cache (attr ``page_size``) each block first reads its
page's address from the block table (an L2 hit), so a block in flight takes ``L_dram + L_l2``,
and the table (4 bytes per page) is read too. No loop over tiles, blocks or waves; the split
search tries at most 128 candidates. FlashMLA (MLA's latent cache on sm_90) runs the same
waves on its persistent grid (:mod:`.flashmla`).

The kernel takes at least one wave of CTAs each as long as its busiest, plus a DRAM round
trip for each further request piece that CTA starts: requests of different lengths (attr
``kv_lengths``) leave the split-KV CTAs of short requests with fewer blocks, and FlashMLA's
parts differ (docs/models/attention.md, "Requests of different lengths").

Another kernel's dirty lines (attr ``l2_dirty_bytes``; :mod:`.evaluate`) take DRAM bandwidth
beside the blocks but not their latency: each wave's bytes term is also at least
``c x (bytes per CTA + dirty bytes per CTA) / bandwidth``, the lines spread over the CTAs as
their traffic allocates them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from opmodel.core.views_matmul import AttentionView
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.attention import costs
from opmodel.models.attention.evaluation import AttentionEvaluation
from opmodel.models.attention.flashmla import FLASHMLA, flashmla_grid
from opmodel.models.attention.kernels import FlashKernel
from opmodel.models.attention.split_grid import DecodeGrid, decode_grid
from opmodel.models.attention.tiles import TileCounts
from opmodel.models.shared.queueing import loaded_rate

__all__ = ["evaluate_decode"]

_KV_BLOCKS_IN_FLIGHT = 2
_PARTIAL_BYTES = 4  # split-KV partial outputs and log-sum-exps are fp32


@dataclass(frozen=True, slots=True)
class _DecodeWave:
    """One wave of the split-KV kernel (module docstring): per-CTA compute, bytes and evicted
    dirty lines, and the device constants the wave's time needs."""

    sm_count: int
    cta_compute_s: float
    tile_s: float  # one key/value block's compute
    blocks_per_cta: int
    cta_bytes: float
    dirty_cta_bytes: float  # another kernel's dirty lines each CTA's traffic evicts
    block_bytes: float  # distinct DRAM bytes of one block in flight per CTA
    io_tile_bytes: int  # the CTA's query block, loaded at its start, and output block, stored
    block_latency_s: float  # a block in flight: DRAM, plus the block table's L2 hit if paged
    l_dram_s: float
    hbm_rate: float

    def seconds(self, c: int) -> tuple[float, bool]:
        """A wave of ``c`` CTAs: its time, and whether compute (not the stream) bounds it."""
        # Little's law for the blocks in flight, at DRAM's loaded latency (shared.queueing);
        # the dirty lines take bandwidth beside the blocks but not their latency
        # (a CTA has no more in flight than it reads)
        # the query and output tiles are in flight at the CTA's start and end only
        io = self.io_tile_bytes / self.blocks_per_cta
        per_cta = _KV_BLOCKS_IN_FLIGHT * self.block_bytes + io
        in_flight = c * min(per_cta, self.cta_bytes)
        rate = loaded_rate(self.hbm_rate, in_flight, self.block_latency_s)
        streamed = max(
            c * self.cta_bytes / rate, c * (self.cta_bytes + self.dirty_cta_bytes) / self.hbm_rate
        )
        compute = math.ceil(c / self.sm_count) * self.cta_compute_s
        # the pipeline fills with a round trip and drains with its last block's compute, or
        # with that block's transfer when compute bounds the wave
        drain = min(self.tile_s, streamed / self.blocks_per_cta)
        return max(compute, streamed) + self.l_dram_s + drain, compute >= streamed

    def busiest(self, blocks: int) -> _DecodeWave:
        """This wave with every CTA holding ``blocks`` key blocks, its compute and bytes scaled
        from the mean CTA's (built directly: ``dataclasses.replace`` costs 4 µs a call)."""
        scale = blocks / self.blocks_per_cta
        return _DecodeWave(
            self.sm_count,
            self.cta_compute_s * scale,
            self.tile_s,
            blocks,
            self.cta_bytes * scale,
            self.dirty_cta_bytes * scale,
            self.block_bytes,
            self.io_tile_bytes,
            self.block_latency_s,
            self.l_dram_s,
            self.hbm_rate,
        )


def _decode_wave(
    kernel: FlashKernel,
    view: AttentionView,
    hardware: HardwareSpec,
    g: DecodeGrid,
    bytes_: tuple[int, int, int],
) -> _DecodeWave:
    """The split-KV kernel's wave on ``hardware`` for the grid ``g``; ``bytes_``: the keys and
    values it reads, its other DRAM bytes (queries, block table and O; the combine term charges
    the partials, written here and read there) and the dirty bytes it evicts."""
    kv_bytes, io_bytes, dirty = bytes_
    sm, _fixed, l_dram, l_l2, clock = costs.common(hardware)
    tile = costs.tile_cycles(kernel, view, hardware, kernel.block_q)[0]  # padded rows
    return _DecodeWave(
        sm_count=sm.sm_count,
        cta_compute_s=g.tiles_per_cta * tile / clock,
        tile_s=tile / clock,
        blocks_per_cta=g.tiles_per_cta,
        # the m_blocks CTAs of a KV head's split run side by side (the query block is the
        # grid's fastest index) and read the same key/value blocks: DRAM streams each block
        # once, for all of them, and the L2 serves the rest; queries and outputs are the
        # CTAs' own
        cta_bytes=(kv_bytes + io_bytes) / g.ctas,
        dirty_cta_bytes=dirty / g.ctas,  # evicted as the CTAs' traffic allocates lines
        block_bytes=costs.kv_block_bytes(kernel, view) / g.m_blocks,
        io_tile_bytes=kernel.block_q
        * (
            view.head_dim_qk * costs.element_bytes(view.q)
            + view.head_dim_v * costs.element_bytes(view.o)
        ),
        # paged KV: each block's address comes from the block table first (an L2 hit)
        block_latency_s=l_dram + (l_l2 if view.page_size else 0.0),
        l_dram_s=l_dram,
        hbm_rate=costs.rates(hardware)[0],
    )


def evaluate_decode(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> AttentionEvaluation:
    """Time the split-KV ``kernel`` on the decode ``view`` on ``hardware`` (module docstring)."""
    sm, fixed, l_dram, _l_l2, clock = costs.common(hardware)
    g = (flashmla_grid if kernel.name == FLASHMLA.name else decode_grid)(kernel, view, sm.sm_count)
    resident = costs.resident_ctas(kernel, view, hardware)
    tile, mma, softmax, _ = costs.tile_cycles(kernel, view, hardware, kernel.block_q)  # padded rows
    kv_bytes, other_read, split_bytes = _dram_bytes(view, g)
    dram_read = kv_bytes + other_read + split_bytes
    o_bytes = view.q_share(view.o.nbytes)  # the requests' output rows
    dirty = costs.dirty_bytes(view, hardware, dram_read + o_bytes + split_bytes)
    wave = _decode_wave(kernel, view, hardware, g, (kv_bytes, other_read + o_bytes, dirty))
    main, compute_bound = _main_kernel(wave, g, sm.sm_count * resident)
    # FlashMLA launches its combine kernel after every call; FA2 only after a split
    merged = g.partials or kernel.name == FLASHMLA.name
    memory_s = main + (fixed + 2 * split_bytes / wave.hbm_rate + l_dram if merged else 0.0)
    return AttentionEvaluation(
        kernel=kernel,
        tiles=_tile_counts(g),
        splits=g.splits,
        ctas=g.ctas,
        resident_ctas_per_sm=resident,
        tile_cycles=tile,
        mma_cycles_per_tile=mma,
        softmax_cycles_per_tile=softmax,
        start_cycles_per_block=0.0,
        compute_s=math.ceil(g.ctas / sm.sm_count) * wave.cta_compute_s,
        dram_s=memory_s,
        l2_s=0.0,
        limiter="compute" if compute_bound else "dram",
        latency_s=fixed + memory_s,
        dram_read_bytes=dram_read,
        dram_write_bytes=o_bytes + split_bytes,
        # each of a split's m_blocks CTAs reads its key/value blocks from L2
        l2_read_bytes=dram_read + (g.m_blocks - 1) * kv_bytes,
        issued_mma_flops=costs.issued_flops(kernel, view, g.ctas * g.tiles_per_cta),
        sm_clock_hz=clock,
        dirty_write_back_bytes=dirty,
    )


def _main_kernel(wave: _DecodeWave, g: DecodeGrid, slots: int) -> tuple[float, bool]:
    """The main kernel's waves of ``slots`` CTAs and its tail, at least one wave of CTAs as long
    as the busiest (module docstring); and whether compute bounds its first wave."""
    full, tail = divmod(g.ctas, slots)
    t_full, full_compute_bound = wave.seconds(slots) if full else (0.0, False)
    t_tail, tail_compute_bound = wave.seconds(tail) if tail else (0.0, False)
    main = max(full * t_full + t_tail, _busiest_wave(wave, g, min(g.ctas, slots)))
    return main, full_compute_bound if full else tail_compute_bound


def _busiest_wave(wave: _DecodeWave, g: DecodeGrid, c: int) -> float:
    """A wave of ``c`` CTAs each holding the busiest CTA's key blocks (and its share of the other
    bytes), plus a DRAM round trip for each further request piece it starts (its pipeline
    fills again); 0 when every CTA holds the mean."""
    if g.longest_tiles <= g.tiles_per_cta and g.longest_pieces <= 1:
        return 0.0
    return wave.busiest(g.longest_tiles).seconds(c)[0] + (g.longest_pieces - 1) * wave.l_dram_s


def _dram_bytes(view: AttentionView, g: DecodeGrid) -> tuple[int, int, int]:
    """DRAM reads, in three parts: the KV rows the grid covers; the queries and a paged cache's
    block table; the split partials the combine pass reads (0 without a cut request)."""
    kv_bytes = view.kv_nbytes * g.keys_read // (view.batch * view.seq_kv)
    # a paged cache's block table: int32 per page
    return (
        kv_bytes,
        view.q_share(view.q.nbytes) + 4 * g.table_entries,
        g.partials * _partial_bytes(view),
    )


def _tile_counts(g: DecodeGrid) -> TileCounts:
    """The grid's query blocks, KV blocks, tiles and the longest CTA's tiles."""
    return TileCounts(
        q_blocks=g.m_blocks,
        kv_blocks=g.kv_blocks,
        tiles=g.m_blocks * g.kv_blocks,
        longest_block_tiles=g.tiles_per_cta,
    )


def _partial_bytes(view: AttentionView) -> int:
    """One request's fp32 partial outputs and log-sum-exps, for each of its query rows."""
    return view.heads_q * view.seq_q * (view.head_dim_v + 1) * _PARTIAL_BYTES
