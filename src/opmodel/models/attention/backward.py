"""FlashAttention's backward pass on GPUs: a preprocess, the tiled main kernel, a postprocess.

FlashAttention-2 (Dao 2023, Algorithm 2; csrc/flash_attn/src/flash_bwd_kernel.h) and -3 (Shah
et al. 2024; hopper/flash_bwd_kernel.h) run a backward pass as three kernels:

1. **preprocess**: ``D = rowsum(dO * O)`` per query row (reads O and dO, writes D in fp32) and
   clears the fp32 accumulator of dQ;
2. **main**: one CTA per key block (``Bc`` keys of one query head) loops over the query blocks
   (``Br`` rows) that see its keys, all of them without a mask and from the diagonal on with a
   causal one. Per tile it recomputes ``S = Q K^T`` and ``P = exp(S - LSE)``, accumulates
   ``dV += P^T dO``, computes ``dP = dO V^T`` and ``dS = P (dP - D)``, accumulates
   ``dK += dS^T Q`` and adds ``dS K`` into dQ's fp32 accumulator in L2 (atomic adds); it writes
   its dK and dV blocks at the end. With GQA FA2 writes them per query head, and FA3 reduce-adds
   them in fp32 into accumulators of the KV heads' size (zeroed beforehand) in L2;
3. **postprocess**: converts dQ's accumulator to dQ's dtype; with GQA FA2 sums the per-query-head
   dK and dV over each group and FA3 converts its dK and dV accumulators
   (:func:`side_kernels` counts these kernels and the fills).

Per tile, in SM cycles (rates of :func:`~opmodel.models.attention.costs.sm_rates`):

    t_mma  = 2 Br Bc (3 d_qk + 2 d_v) / tensor FLOP per cycle      (the five GEMMs)
    t_sfu  = Br Bc / SFU results per cycle                          (one exp2 per score)
    t_fp32 = 5 Br Bc / FP32 lanes     (scale-and-subtract before the exp, dP - D, the multiply by
                                       P, the 16-bit conversions of P and dS)
    t_tile = t_mma + max(t_sfu, t_fp32)

The elementwise work sits between the GEMMs that produce and consume it (``dS`` needs ``dP``,
``dK`` and ``dQ`` need ``dS``), so it is not overlapped, for FA3's warpgroup MMAs either: FA3's
forward hides its exponentials under the other warpgroup's GEMMs by a ping-pong schedule, its
backward has none (a modelling assumption; docs/models/attention.md compares the model with
the paper's backward throughput).
Blocks: the libraries' launch templates (:mod:`.launch_blocks`): FA3's own on sm_90 where
attr ``attention_kernel`` names FA3 (80 x 128 at head_dim 128 without a mask), FA2's by the
shared memory a block may take, an approximation elsewhere. A CTA holds its K and V blocks,
two stages of Q and dO blocks and the P and dS tiles in shared memory. Outside its tiles
(``t_cta``) it stages its dK and dV blocks through shared memory for its final store and,
where shared memory allows one CTA per SM, waits for its first Q and dO blocks (a DRAM round
trip).

The busiest SM's time is the prefill's law with the key blocks as CTAs
(:func:`~opmodel.models.attention.costs.busiest_sm_s`): longest first with a causal mask, the
first key block being visited by every query block. Tiles are counted on the ``Br x Bc`` grid
(:mod:`.backward_grid`, exact for blocks that do not divide each other). Memory: the main
kernel reads Q, K, V, dO, LSE and D from DRAM once (a head's key-block CTAs run together, so
Q and dO re-reads hit L2) and writes dK, dV and dQ's accumulator; L2 serves every tile's Q
and dO blocks and the accumulator's read-modify-write.
``t_main = fixed + max(compute + 2 L_dram + L_l2, DRAM bytes / bandwidth + L_dram, L2 bytes /
L2 bandwidth)``; the other kernels are bandwidth-bound streams, ``fixed + L_dram`` each
and their bytes at the DRAM bandwidth together. ``latency = t_main + t_side``.
"""

from __future__ import annotations

from opmodel.core.views_matmul import AttentionView
from opmodel.hardware.spec import HardwareSpec, Instruction
from opmodel.models.attention.backward_grid import backward_heads, backward_tiles
from opmodel.models.attention.costs import (
    busiest_sm_s,
    common,
    dirty_bytes,
    element_bytes,
    issued_flops,
    rates,
    sm_rates,
    smem_bytes_per_cycle,
)
from opmodel.models.attention.evaluation import AttentionEvaluation
from opmodel.models.attention.kernels import FlashKernel, kernel_mma
from opmodel.models.attention.launch_blocks import (
    default_backward_blocks,
    fa2_backward_blocks,
    fa3_backward_blocks,
)
from opmodel.models.attention.tiles import TileCounts

__all__ = [
    "backward_heads",
    "backward_kernel",
    "backward_tiles",
    "evaluate_backward",
    "side_kernels",
    "staged_bytes",
]

_FP32_OPS_PER_SCORE = 5  # module docstring, t_fp32
_ACCUMULATOR_BYTES = 4  # dQ accumulates in fp32; LSE and D are fp32 per query row
_FA2_WARPS = 8  # Flash_bwd_kernel_traits' kNWarps in every FA2 backward dispatch
_FA3_WARPS = 12  # FA3's backward: two MMA warpgroups and the producer warpgroup


def backward_kernel(hardware: HardwareSpec, view: AttentionView) -> FlashKernel:
    """The backward kernel FlashAttention runs for ``view`` (module docstring): FA3's on an
    architecture with warpgroup MMAs, FA2's elsewhere, with the library's blocks
    (:mod:`.launch_blocks`): FA3's own on sm_90 where attr ``attention_kernel`` names FA3,
    FA2's on the warp MMA."""
    sm = hardware.compute.sm
    assert sm is not None
    head_dim = max(view.head_dim_qk, view.head_dim_v)
    asynchronous = kernel_mma(hardware, view)
    if asynchronous is None:
        blocks = fa2_backward_blocks(head_dim, sm.max_shared_memory_per_cta_bytes)
    elif asynchronous is Instruction.WGMMA and view.kernel_choice == "fa3":
        blocks = fa3_backward_blocks(head_dim, view.causal or view.window is not None)
    else:
        blocks = default_backward_blocks(head_dim)
    return FlashKernel(
        name="fa3_bwd" if asynchronous is not None else "fa2_bwd",
        block_q=blocks[0],
        block_kv=blocks[1],
        instruction=asynchronous or sm.warp_mma_instruction,
        softmax_overlapped=False,
        warps=_FA3_WARPS if asynchronous is not None else _FA2_WARPS,
    )


def staged_bytes(kernel: FlashKernel, view: AttentionView) -> int:
    """Bytes one tile stores to shared memory between its GEMMs (module docstring): dS for
    ``dQ = dS K``, and FA3's fp32 dQ tile for its bulk reduce-add into the accumulator, or
    FA2's P for ``dV = P^T dO`` (FA2 adds dQ to the accumulator from registers)."""
    scores = kernel.block_q * kernel.block_kv * element_bytes(view.q)
    if kernel.name == "fa3_bwd":
        return scores + kernel.block_q * view.head_dim_qk * _ACCUMULATOR_BYTES
    return 2 * scores


def _tile_cycles(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> tuple[float, float, float]:
    """(tile, MMA, rest) cycles of one ``Br x Bc`` tile on one SM: the rest is the
    elementwise work and the shared-memory staging, both between GEMMs."""
    sm = hardware.compute.sm
    assert sm is not None
    tensor_rate, lanes = sm_rates(kernel, view, hardware)
    scores = kernel.block_q * kernel.block_kv
    t_mma = 2 * scores * (3 * view.head_dim_qk + 2 * view.head_dim_v) / tensor_rate
    elementwise = max(scores / sm.sfu_ops_per_cycle_per_sm, _FP32_OPS_PER_SCORE * scores / lanes)
    per_cycle = smem_bytes_per_cycle(hardware)
    stage = staged_bytes(kernel, view) / per_cycle if per_cycle > 0 else 0.0
    return t_mma + elementwise + stage, t_mma, elementwise + stage


def _cta_overhead_cycles(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec, resident: int
) -> float:
    """A CTA's cycles outside its tiles: its dK and dV blocks staged through shared memory for
    their store at the end (written and read once), and, where it is alone on its SM, the DRAM
    round trip of its first Q and dO blocks, which no other CTA's tiles hide."""
    clock = hardware.compute.clock_hz
    per_cycle = smem_bytes_per_cycle(hardware)
    out = kernel.block_kv * (view.head_dim_qk + view.head_dim_v) * element_bytes(view.q)
    epilogue = 2 * out / per_cycle if per_cycle > 0 else 0.0
    return epilogue + (hardware.hbm.latency_s * clock if resident == 1 else 0.0)


def _resident_ctas(kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec) -> int:
    """Backward CTAs one SM holds: K and V blocks, two stages of Q and dO blocks, P and dS."""
    sm = hardware.compute.sm
    assert sm is not None
    dims = view.head_dim_qk + view.head_dim_v
    elements = (
        kernel.block_kv * dims + 2 * kernel.block_q * dims + 2 * kernel.block_q * kernel.block_kv
    )
    smem = elements * element_bytes(view.q) + sm.shared_memory_reserved_per_cta_bytes
    by_smem = sm.shared_memory_per_sm_bytes // max(1, smem)
    return max(1, min(sm.max_ctas_per_sm, by_smem, sm.max_warps_per_sm // kernel.warps))


def _bytes(kernel: FlashKernel, view: AttentionView, counts: TileCounts) -> dict[str, int]:
    """DRAM bytes read and written by each of the three kernels, and the main kernel's L2
    bytes (module docstring)."""
    heads = backward_heads(view)
    rows = view.heads_q * view.q_tokens  # query rows: one LSE and one D each
    group = view.heads_q // view.heads_kv
    accumulator = rows * view.head_dim_qk * _ACCUMULATOR_BYTES
    # dK and dV; the tensors the requests fill, without padding (q_share, kv_share)
    dkv = view.kv_share(view.k.nbytes + view.v.nbytes)
    grad_o = view.q_share(view.grad_o.nbytes) if view.grad_o is not None else 0
    q, o = view.q_share(view.q.nbytes), view.q_share(view.o.nbytes)
    tiles = heads * counts.tiles
    e = element_bytes(view.q)
    dims = view.head_dim_qk + view.head_dim_v
    # with GQA: FA2 writes dK and dV per query head and sums them afterwards; FA3 reduce-adds
    # each query head's fp32 blocks into zeroed accumulators of the KV heads' size, then converts
    gqa = group * dkv if group > 1 and kernel.name == "fa2_bwd" else 0
    dkv_acc = dkv * _ACCUMULATOR_BYTES // e if group > 1 and kernel.name == "fa3_bwd" else 0
    # each query head's CTA reads and writes its fp32 dK and dV blocks in FA3's accumulators
    reduce_add = (
        2 * heads * counts.kv_blocks * kernel.block_kv * dims * _ACCUMULATOR_BYTES if dkv_acc else 0
    )
    return {
        "pre_read": o + grad_o,
        # D; the cleared dQ accumulator (and FA3's zeroed dK and dV accumulators)
        "pre_write": rows * _ACCUMULATOR_BYTES + accumulator + dkv_acc,
        "main_read": q + dkv + grad_o + 2 * rows * _ACCUMULATOR_BYTES,
        "main_write": (gqa or dkv_acc or dkv) + accumulator,
        "post_read": accumulator + (gqa or dkv_acc),
        "post_write": q + (dkv if group > 1 else 0),
        # every tile's Q and dO blocks with their LSE and D, each CTA's K and V blocks, and
        # the accumulators' read-modify-writes
        "l2": tiles * kernel.block_q * (dims * e + 2 * _ACCUMULATOR_BYTES)
        + heads * counts.kv_blocks * kernel.block_kv * dims * e
        + 2 * tiles * kernel.block_q * view.head_dim_qk * _ACCUMULATOR_BYTES
        + reduce_add,
    }


def side_kernels(kernel: FlashKernel, view: AttentionView) -> int:
    """Kernels of the pass besides the main one: the preprocess and dQ's conversion; with GQA
    FA2's two sums of dK and dV over each group (csrc/flash_attn/flash_api.cpp's ``mha_bwd``),
    FA3's two fills of its fp32 dK and dV accumulators and their two conversions
    (hopper/flash_api.cpp, hopper/flash_bwd_launch_template.h)."""
    if view.heads_q == view.heads_kv:
        return 2
    return 4 if kernel.name == "fa2_bwd" else 6


def _busiest_sm(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec, counts: TileCounts
) -> tuple[float, tuple[float, float, float], int, float]:
    """(the busiest SM's seconds, (tile, MMA, rest) cycles, resident CTAs, CTA cycles outside
    its tiles): the prefill's law with the key blocks as the CTAs."""
    sm, _, _, _, clock = common(hardware)
    cycles = _tile_cycles(kernel, view, hardware)
    resident = _resident_ctas(kernel, view, hardware)
    start = _cta_overhead_cycles(kernel, view, hardware, resident)
    by_key_block = TileCounts(  # busiest_sm_s's roles swapped
        q_blocks=counts.kv_blocks,
        kv_blocks=counts.q_blocks,
        tiles=counts.tiles,
        longest_block_tiles=counts.longest_block_tiles,
    )
    heads = backward_heads(view)
    times = (cycles[0] / clock, start / clock)
    return busiest_sm_s(view, by_key_block, heads, times, sm.sm_count), cycles, resident, start


def _times(
    moved: dict[str, int], dirty: int, compute_s: float, hardware: HardwareSpec, kernels: int
) -> tuple[dict[str, float], float]:
    """The main kernel's compute, DRAM and L2 bounds, and the other ``kernels``' seconds
    together (:func:`side_kernels`; module docstring)."""
    _, fixed, l_dram, l_l2, _ = common(hardware)
    hbm_rate, l2_rate = rates(hardware)
    main = {
        "compute": compute_s + 2 * l_dram + l_l2,
        "dram": (moved["main_read"] + moved["main_write"] + dirty) / hbm_rate + l_dram,
        "l2": (moved["l2"] + moved["main_write"]) / l2_rate,
    }
    side = sum(moved[k] for k in ("pre_read", "pre_write", "post_read", "post_write"))
    return main, kernels * (fixed + l_dram) + side / hbm_rate


def evaluate_backward(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> AttentionEvaluation:
    """Time the backward pass of ``view`` with ``kernel`` on ``hardware`` (a GPU)."""
    if not view.backward:
        raise ValueError("evaluate_backward: the view is an attention's forward (no grad dO)")
    counts, heads = backward_tiles(kernel, view), backward_heads(view)
    compute, (tile, mma, rest), resident, start = _busiest_sm(kernel, view, hardware, counts)
    moved = _bytes(kernel, view, counts)
    read = moved["pre_read"] + moved["main_read"] + moved["post_read"]
    written = moved["pre_write"] + moved["main_write"] + moved["post_write"]
    dirty = dirty_bytes(view, hardware, read + written)
    main, side = _times(moved, dirty, compute, hardware, side_kernels(kernel, view))
    limiter = max(main, key=lambda name: main[name])
    fixed = common(hardware)[1]
    return AttentionEvaluation(
        kernel=kernel,
        tiles=counts,
        splits=1,
        ctas=heads * counts.kv_blocks,
        resident_ctas_per_sm=resident,
        tile_cycles=tile,
        mma_cycles_per_tile=mma,
        softmax_cycles_per_tile=rest,
        start_cycles_per_block=start,
        compute_s=compute,
        dram_s=main["dram"],
        l2_s=main["l2"],
        limiter=limiter,
        latency_s=fixed + main[limiter] + side,
        dram_read_bytes=read,
        dram_write_bytes=written,
        l2_read_bytes=moved["l2"],
        issued_mma_flops=issued_flops(kernel, view, heads * counts.tiles),
        sm_clock_hz=hardware.compute.clock_hz,
        dirty_write_back_bytes=dirty,
        side_kernels_s=side,
    )
