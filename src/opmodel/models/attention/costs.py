"""Per-tile SM cycles, residency, rates and latencies a FlashAttention kernel's time is built from.

Per tile (``Br`` query rows x ``Bc`` keys), in SM cycles (docs/models/attention.md, "Time"):
``t_mma`` on the tensor cores (at ``mma_sync_tensor_fraction`` for ``mma.sync``), ``t_sfu`` for
one exp2 per score and ``t_fp32`` for the FP32 softmax bookkeeping; FA2 adds
``max(t_sfu, t_fp32)`` to ``t_mma``, FA3 ``t_fp32`` and the exponentials its other consumer
warpgroups' GEMMs cannot hide (:mod:`opmodel.models.attention.evaluate`).
"""

from __future__ import annotations

import math

from opmodel.core.dtypes import DType
from opmodel.core.errors import UnsupportedDTypeError
from opmodel.core.op import TensorSpec
from opmodel.core.views_matmul import AttentionView
from opmodel.hardware.spec import HardwareSpec, Instruction, SmSpec
from opmodel.models.attention.counted import loop_count
from opmodel.models.attention.kernels import FlashKernel
from opmodel.models.attention.tiles import TileCounts
from opmodel.models.shared.l2_survival import dirty_write_back_bytes
from opmodel.models.shared.start_drain import start_drain_s

__all__ = [
    "busiest_sm_s",
    "common",
    "dirty_bytes",
    "element_bytes",
    "epilogue_cycles",
    "issued_flops",
    "kv_block_bytes",
    "rates",
    "resident_ctas",
    "sm_rates",
    "smem_bytes_per_cycle",
    "tile_cycles",
]

_FP32_OPS_PER_SCORE = 4
_WGMMA_ROWS = 64  # rows of one warpgroup MMA (wgmma m64nNk16): the rows an FA3 warpgroup owns


def sm_rates(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec
) -> tuple[float, float]:
    """(tensor FLOP per cycle, FP32 lanes) of one SM for ``kernel``: the tensor peak at the
    ``mma.sync`` fraction when the kernel issues it, and the FP32 operations per cycle the
    softmax's bookkeeping runs at."""
    compute, sm = hardware.compute, hardware.compute.sm
    assert sm is not None
    peak = compute.tensor_peak(view.compute_dtype) or 0.0
    fraction = sm.mma_sync_tensor_fraction if kernel.instruction is Instruction.MMA_SYNC else 1.0
    fraction *= hardware.utilization.tensor_fraction
    tensor_rate = peak / (sm.sm_count * compute.clock_hz) * fraction
    fp32 = compute.vector_peak(DType.FP32)  # the softmax runs in fp32
    if not fp32:
        msg = (
            f"hardware '{hardware.name}' has no fp32 vector throughput, which attention's "
            "softmax runs at (set compute.vector_flops_per_cycle_per_unit.fp32)"
        )
        raise UnsupportedDTypeError(msg)
    return tensor_rate, fp32 / (sm.sm_count * compute.clock_hz) / 2


def tile_cycles(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec, rows: int
) -> tuple[float, float, float, float]:
    """(tile, MMA, softmax, whole softmax) cycles of one ``rows`` x ``block_kv`` tile on one
    SM; the whole softmax, ``t_sfu + t_fp32``, is what an FA3 block's first tile exposes."""
    sm = hardware.compute.sm
    assert sm is not None
    tensor_rate, lanes = sm_rates(kernel, view, hardware)
    scores = rows * kernel.block_kv
    t_mma = 2 * scores * (view.head_dim_qk + view.head_dim_v) / tensor_rate
    t_sfu = scores / sm.sfu_ops_per_cycle_per_sm
    t_fp32 = (_FP32_OPS_PER_SCORE * scores + rows * view.head_dim_v) / lanes
    if kernel.softmax_overlapped:
        warpgroups = max(1, rows // _WGMMA_ROWS)  # consumer warpgroups taking turns (docstring)
        hidden = t_mma * (warpgroups - 1) / warpgroups
        exposed = 0.0 if kernel.emulated_exponentials else max(0.0, t_sfu - hidden)
        softmax = t_fp32 + exposed
    else:
        counted = _counted_loop_cycles(kernel, view, hardware, rows)
        if counted is not None:
            issue, smem = counted
            softmax = max(t_sfu, issue)
            return max(t_mma, smem) + softmax, t_mma, softmax, t_sfu + t_fp32
        softmax = max(t_sfu, t_fp32)
    return t_mma + softmax, t_mma, softmax, t_sfu + t_fp32


def _counted_loop_cycles(
    kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec, rows: int
) -> tuple[float, float] | None:
    """FA2's main loop counted from its SASS (:mod:`~opmodel.models.attention.counted`), per
    tile of ``rows``: (cycles its warps spend issuing the instructions other than ``HMMA``,
    each SMSP issuing ``ceil(warps / SMSPs)`` warps' one per cycle; cycles its ``ldmatrix``
    fragment loads take at the SM's shared-memory bytes per cycle, which bound its products);
    the loop of the head dim FA2 compiles, counted or, where its shape has no count, estimated
    from the counted ones (:func:`~opmodel.models.attention.counted.loop_count`); ``None``
    where the kernel is not FA2's 16-bit forward or the architecture has no counts."""
    if kernel.name != "fa2" or view.backward or view.k.dtype.bits != 16:
        return None
    if view.head_dim_qk != view.head_dim_v:
        return None
    count = loop_count(
        hardware.architecture, view.head_dim_qk, kernel.block_q, kernel.block_kv, kernel.warps
    )
    sm = hardware.compute.sm
    if count is None or sm is None:
        return None
    warps, _, other, ldsm = count
    share = rows / kernel.block_q
    per_cycle = smem_bytes_per_cycle(hardware)
    smem = warps * ldsm * share / per_cycle if per_cycle > 0 else 0.0
    return other * math.ceil(warps / sm.smsps_per_sm) * share, smem


def resident_ctas(kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec) -> int:
    """CTAs of ``kernel`` one SM holds: its Q and K/V tiles in shared memory, its warps."""
    sm = hardware.compute.sm
    assert sm is not None
    element = max(1, view.k.dtype.bits // 8)
    kv_dims = view.head_dim_qk + (0 if view.shared_kv else view.head_dim_v)
    smem = (
        kernel.block_q * view.head_dim_qk + kernel.block_kv * kv_dims
    ) * element + sm.shared_memory_reserved_per_cta_bytes
    by_smem = sm.shared_memory_per_sm_bytes // max(1, smem)
    return max(1, min(sm.max_ctas_per_sm, by_smem, sm.max_warps_per_sm // kernel.warps))


def common(hardware: HardwareSpec) -> tuple[SmSpec, float, float, float, float]:
    """(SM, fixed s, DRAM latency s, L2 latency s, clock Hz)."""
    sm = hardware.compute.sm
    assert sm is not None
    l2 = hardware.levels_by_name.get("l2")
    fixed = start_drain_s(hardware)  # the kernel's launch and drain (models.shared.start_drain)
    l_l2 = l2.latency_s if l2 else 0.0
    return sm, fixed, hardware.hbm.latency_s, l_l2, hardware.compute.clock_hz


def rates(hardware: HardwareSpec) -> tuple[float, float]:
    """(DRAM, L2) bandwidth in bytes/s after the config's utilisation fractions."""
    l2 = hardware.levels_by_name.get("l2")
    hbm = hardware.hbm.bandwidth_bytes_per_s * hardware.memory_fraction("hbm")
    l2_rate = l2.bandwidth_bytes_per_s * hardware.memory_fraction("l2") if l2 else math.inf
    return hbm, l2_rate


def issued_flops(kernel: FlashKernel, view: AttentionView, tiles: int) -> int:
    """MMA work of ``tiles`` whole ``block_q x block_kv`` tiles, padding included: the
    forward's two GEMMs (``d_qk + d_v``), or the backward pass's five (``3 d_qk + 2 d_v``)."""
    qk, v = (3, 2) if view.backward else (1, 1)
    dims = qk * view.head_dim_qk + v * view.head_dim_v
    return tiles * 2 * kernel.block_q * kernel.block_kv * dims


def smem_bytes_per_cycle(hardware: HardwareSpec) -> float:
    """Shared-memory bytes one SM moves per cycle (0 without an ``smem`` level)."""
    sm, smem = hardware.compute.sm, hardware.levels_by_name.get("smem")
    if sm is None or smem is None:
        return 0.0
    return smem.bandwidth_bytes_per_s / (sm.sm_count * hardware.compute.clock_hz)


def epilogue_cycles(kernel: FlashKernel, view: AttentionView, hardware: HardwareSpec) -> float:
    """SM cycles of a query block's epilogue, in which its warpgroups leave the tensor cores
    idle: the output accumulator scaled by ``1 / l`` (``Br x d_v`` FP32 multiplies) and written
    to shared memory in the output dtype (``Br x d_v`` elements over the SM's shared-memory
    bytes per cycle), from where the asynchronous TMA store reads it while the next block
    starts."""
    _, lanes = sm_rates(kernel, view, hardware)
    values = kernel.block_q * view.head_dim_v
    per_cycle = smem_bytes_per_cycle(hardware)
    store = values * element_bytes(view.o) / per_cycle if per_cycle > 0 else 0.0
    return values / lanes + store


def element_bytes(tensor: TensorSpec) -> int:
    """Bytes of one element of ``tensor`` (at least 1)."""
    return max(1, tensor.dtype.bits // 8)


def kv_block_bytes(kernel: FlashKernel, view: AttentionView) -> int:
    """Bytes of one key block and its value block (``block_kv`` rows of each; the key block
    alone when the values are a prefix of its rows, ``shared_kv``), at the cache's stored bits
    per element (an NVFP4 cache's 4.5 with its scales)."""
    values = 0 if view.shared_kv else view.head_dim_v * view.v.dtype.storage_bits
    return math.ceil(kernel.block_kv * (view.head_dim_qk * view.k.dtype.storage_bits + values) / 8)


def dirty_bytes(view: AttentionView, hardware: HardwareSpec, allocated: int) -> int:
    """Bytes of another kernel's dirty lines (``view.l2_dirty_bytes``) that ``allocated`` bytes
    of DRAM traffic evict (:mod:`.evaluate`; the law of the GEMM and streaming kernels,
    :func:`~opmodel.models.shared.l2_survival.dirty_write_back_bytes`); 0 without an L2."""
    l2 = hardware.levels_by_name.get("l2")
    if not view.l2_dirty_bytes or l2 is None:
        return 0
    return round(dirty_write_back_bytes(view.l2_dirty_bytes, allocated, l2.shared_capacity_bytes))


def busiest_sm_s(
    view: AttentionView, counts: TileCounts, heads: int, times: tuple[float, float], sms: int
) -> float:
    """The busiest SM's time for its blocks, ``times = (t_tile, t_start)`` in seconds: each of
    ``heads x counts.q_blocks`` CTAs visits up to ``counts.kv_blocks`` tiles, ``counts.tiles``
    per head in all (:mod:`.evaluate`: breadth first, longest first if causal; the backward
    pass passes its key blocks as the CTAs, :mod:`.backward`). Requests of different lengths
    (``counts`` summed over them) take the balanced law, causal or not."""
    t_tile, t_start = times
    ctas = heads * counts.q_blocks
    # the busiest SM's CTAs each visiting every key block; not a bound for requests of
    # different lengths (attr kv_lengths: the counts are summed over them), whose CTAs differ
    uneven = view.kv_lengths is not None
    unmasked = math.inf if uneven else math.ceil(ctas / sms) * (counts.kv_blocks * t_tile + t_start)
    if not view.causal and not uneven:
        return unmasked
    longest = counts.longest_block_tiles * t_tile + t_start
    work = heads * counts.tiles * t_tile + ctas * t_start  # summed over the query blocks
    mean = counts.tiles / max(1, counts.q_blocks)
    balanced = max(work / sms, longest, math.ceil(ctas / sms) * (mean * t_tile + t_start))
    if not view.in_order or not view.causal:  # launch order reorders nothing unmasked
        return balanced
    # launch order: the longest blocks start last, when the rest is spread over the SMs
    return min(max(balanced, (work - longest) / sms + longest), max(balanced, unmasked))
