"""Conformance: every registered model x every op kind x every shipped config.

Properties (DESIGN.md convention 12): finite and non-negative figures, energy parts that sum to
the total, latency at or above the ideal roofline bound, HBM traffic at or above the compulsory
bytes (less, for an op after its producer, the warm inputs it may read from L2; its time bound
then streams only its cold inputs, as its writes may stay in L2), monotone in problem size,
deterministic, JSON round trip. GEMM monotonicity is checked
with a fixed kernel: with automatic selection a bigger GEMM may run a better kernel, as with
cuBLAS (docs/models/effective_roofline.md, limitations).
"""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, OpProfile
from opmodel.core.errors import UnsupportedOpError
from opmodel.hardware import load_hardware, shipped_hardware_names
from opmodel.models import get_model, model_names
from tests.hypothesis_budget import examples

from .builders import BUILDERS, VARIANTS, Builder
from .builders_collective import refusal
from .invariants import assert_profile_invariants

HARDWARE = [load_hardware(name) for name in shipped_hardware_names()]
DTYPES = (DType.BF16, DType.FP32)
SETTINGS = settings(
    max_examples=examples(50), deadline=None, suppress_health_check=[HealthCheck.too_slow]
)


def test_every_kind_has_a_builder() -> None:
    assert set(BUILDERS) == set(OpKind)


@pytest.mark.parametrize("model_name", model_names())
@pytest.mark.parametrize("kind", list(OpKind))
@SETTINGS
@given(data=st.data())
def test_model_conformance(model_name: str, kind: OpKind, data: st.DataObject) -> None:
    _check_conformance(model_name, BUILDERS[kind], data)


@pytest.mark.parametrize("model_name", model_names())
@pytest.mark.parametrize("variant", sorted(VARIANTS))
@SETTINGS
@given(data=st.data())
def test_variant_conformance(model_name: str, variant: str, data: st.DataObject) -> None:
    _check_conformance(model_name, VARIANTS[variant], data)


def _check_conformance(model_name: str, builder: Builder, data: st.DataObject) -> None:
    """The properties of the module docstring for one op drawn from ``builder``."""
    model = get_model(model_name)
    hardware = data.draw(st.sampled_from(HARDWARE), label="hardware")
    dtype = data.draw(st.sampled_from(DTYPES), label="dtype")
    sizes = data.draw(builder.sizes, label="sizes")
    op = builder.build(sizes, dtype)
    assert model.supports(op)
    refused = refusal(op, hardware, model_name)
    if refused is not None:  # a collective the config cannot run
        with pytest.raises(UnsupportedOpError, match=re.escape(refused)):
            model.predict(op, hardware)
        return
    profile = model.predict(op, hardware)

    assert_profile_invariants(op, profile, hardware)

    again = model.predict(builder.build(sizes, dtype), hardware)
    assert again.to_dict() == profile.to_dict()
    assert json.loads(json.dumps(profile.to_dict())) == profile.to_dict()

    key = data.draw(st.sampled_from(builder.growable), label="grow")
    bigger = builder.build({**sizes, key: sizes[key] * 2 + 1}, dtype)
    small = op
    if op.kind in GEMM_KINDS:  # monotone for a fixed kernel; selection may pick a better one
        small, bigger = _with_fixed_kernel(op), _with_fixed_kernel(bigger)
    smaller = model.predict(small, hardware)
    larger = model.predict(bigger, hardware)
    switches = (
        _split_kernel_switch,
        _index_select_switch,
        _embedding_backward_switch,
        _flashmla_parts_switch,
        _query_blocks_tail_switch,
        _first_wave_reuse_switch,
        _fused_row_limit_switch,
        _aten_softmax_switch,
        _nvls_chunk_switch,
        _aten_reduce_switch,
    )
    if any(switch(smaller, larger) for switch in switches):
        return
    if _faster_clock(smaller, larger):
        return
    assert larger.latency_s >= smaller.latency_s * (1 - 1e-12)  # float rounding


def _split_kernel_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when a short attention's grown twin runs another split count, or, where the short
    one has a split, another kernel. The split pays a combine pass (one more kernel);
    the model's single-pass prefill kernel does not (FA2 would split a small prefill grid too;
    the model leaves that out, docs/models/attention.md), so a slightly longer attention can
    come out faster by up to that pass. A longer KV cut into more splits runs more CTAs, whose
    loads are in flight at once: a 3-CTA grid streams 34 KB sooner than a 2-CTA grid streams
    33 KB (Little's law; the concurrency-limited DRAM rate). Within one kernel and split
    count, and across the switch without a split (tests/models/attention), the property
    holds."""
    splits = getattr(smaller.diagnostics, "splits", 1)
    grown = getattr(larger.diagnostics, "splits", 1)
    # a grown KV that goes from one split to two gets the same extra CTAs in flight
    # (hypothesis: FlashMLA, 5 requests of 65 -> 131 keys on h200_sxm, 0.3 % faster)
    return splits != grown or (splits > 1 and smaller.implementation != larger.implementation)


def _flashmla_parts_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when FlashMLA's grown decode has more query blocks per KV head: its scheduler
    gives each (KV head, query block) ``SMs // heads_kv // m_blocks`` parts
    (``get_mla_metadata``, docs/models/attention.md), so with more query blocks each request
    is cut into fewer pieces, and the fp32 partial outputs it no longer writes and reads back
    can outweigh the added Q and O bytes (77 requests of 262 keys, 2 latent heads, 11 -> 23
    query heads per latent head on h100_pcie: 2.8 MB of partials gone, 2.2 MB of Q and O
    added, 0.002 % faster). With the same query blocks the property holds."""
    blocks = [
        getattr(getattr(p.diagnostics, "tiles", None), "q_blocks", 0) for p in (smaller, larger)
    ]
    flashmla = all("/flashmla/" in p.implementation for p in (smaller, larger))
    return flashmla and blocks[0] != blocks[1]


def _first_wave_window(profile: OpProfile) -> float | None:
    """The operand bytes a GEMM's first wave fetches cold (``phases.first_wave``), if any."""
    phases = getattr(profile.diagnostics, "phases", None)
    first = getattr(phases, "first_wave", None)
    return getattr(first, "memory_window_bytes", None)


def _query_blocks_tail_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when a DRAM-bound split-KV decode's grown twin has more query blocks: each more
    CTA re-reads a KV head its sibling already streams (through the L2, so the DRAM bytes grow
    little), and the grid's waves change; a tail wave of a few CTAs, each streaming a whole
    KV head at the low concurrency-limited DRAM rate of a nearly idle GPU, can become a fuller
    one (hypothesis, 2026-12-06: an MLA decode of 178 requests, 2 latent heads, 2,766 keys,
    65 -> 131 query heads per latent head on the L40S: 2 -> 3 query blocks, 712 -> 1,068 CTAs,
    5 waves + 2 CTAs -> 7 waves + 74 on its 142 SMs, DRAM bytes +2.3 %, 0.001 % faster). With
    the same query blocks the property holds."""
    blocks = [
        getattr(getattr(p.diagnostics, "tiles", None), "q_blocks", 0) for p in (smaller, larger)
    ]
    split_kv = all("/splitkv/" in p.implementation for p in (smaller, larger))
    dram = all(getattr(p.diagnostics, "limiter", "") == "dram" for p in (smaller, larger))
    return split_kv and dram and blocks[0] != blocks[1]


def _first_wave_reuse_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when the grown GEMM's first wave fetches fewer operand bytes cold: with more CTA
    rows per column of the grid, the raster's first wave covers fewer B tiles, so its cold
    start is shorter while its math takes as many waves (hypothesis, 2026-12-06: a grouped
    GEMM of 745 -> 769 rows, n 3,073, k 1,169, bf16 on the A10: 6 -> 7 M tiles, 30 -> 28
    operand tiles of 299 KB in its 144-CTA first wave, 0.6 % faster). With the same window
    the property holds."""
    windows = [_first_wave_window(p) for p in (smaller, larger)]
    math = [
        getattr(getattr(p.diagnostics, "resource_cycles", None), "math_cycles", None)
        for p in (smaller, larger)
    ]
    smaller_window = windows[0] is not None and windows[1] is not None and windows[1] < windows[0]
    return smaller_window and math[0] is not None and math[0] == math[1]


def _faster_clock(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when the grown GEMM runs at a higher power-limited SM clock: a config's clock law
    (``a100_80gb_sxm``, ``h100_sxm``, ...: docs/hardware.md) lowers the clock with the tensor
    cores' activity, and a grown op whose activity is a little lower (more padded tiles, a
    memory-bound share) gets a little more clock, as a power-capped GPU does. At one clock the
    property holds (the other examples)."""
    clock = getattr(smaller.diagnostics, "sm_clock_hz", None)
    grown = getattr(larger.diagnostics, "sm_clock_hz", None)
    return clock is not None and grown is not None and grown > clock


def _fused_row_limit_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when a ``fused`` elementwise op's grown row passes the 65,536 elements one Liger
    program holds (``FUSED_MAX_ROW``): the row-per-program kernel, whose few long rows leave
    most SMs idle, gives way to a grid of element blocks over every SM (docs/models/
    streaming.md). Within each structure the property holds."""
    names = [getattr(getattr(p.diagnostics, "kernel", None), "name", "") for p in (smaller, larger)]
    return names[0].startswith("fused row") and names[1].startswith("fused elementwise")


def _aten_softmax_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when a cross-entropy's grown log-softmax row runs another of ATen's softmax
    kernels (warp, register or block softmax: SoftMax.cu picks one by row length alone), as a
    pytorch softmax's would; for a few rows the next kernel may be faster (one warp per row
    gives way to a CTA per row, and the register kernel's serial phases to the block kernel's
    vector loads). Within each kernel the property holds."""
    parts = [getattr(p.diagnostics, "softmax", None) for p in (smaller, larger)]
    names = [getattr(getattr(e, "kernel", None), "name", "") for e in parts]
    return bool(names[0]) and names[1] != names[0]


def _nvls_chunk_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when an NVLink SHARP all-reduce grows across one of NCCL's chunk cuts or into more
    ranks. NCCL doubles the chunk once a buffer holds 2, 8 or 64 loops of the larger one, so a
    buffer at a cut runs half the loops, and half their synchronisations, of one a byte under
    it (64 MiB on 8 H100s: 329 against 341 us); a group of more ranks reduces a chunk for
    every rank in each loop, so the same buffer takes fewer loops (docs/models/collective.md,
    "NVLink SHARP"). Within one chunk and group the property holds
    (tests/models/test_collective.py)."""
    chunks = [getattr(p.diagnostics, "chunk_bytes", None) for p in (smaller, larger)]
    ranks = [getattr(p.diagnostics, "ranks", 0) for p in (smaller, larger)]
    return chunks[0] is not None and (chunks[1] != chunks[0] or ranks[1] != ranks[0])


def _aten_reduce_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when a reduction's grown twin takes another of ATen's reduce launches: its block
    (setReduceConfig sizes it by the row and the outputs), or its split of the reduced values
    over the block's warps or over CTAs (each a reduction more), so that a row of 64 values
    spread over a warp row's 32 lanes and 16 warps can finish before one of 63 kept in one
    warp row. Within each launch the property holds (tests/models/streaming/
    test_aten_reduce.py has the launches by hand)."""
    kernels = [getattr(p.diagnostics, "kernel", None) for p in (smaller, larger)]
    names = [getattr(k, "name", "") for k in kernels]
    if not all(name.startswith("reduce_kernel") for name in names):
        return False
    threads = [getattr(k, "threads_per_cta", 0) for k in kernels]
    return names[0] != names[1] or threads[0] != threads[1]


def _index_select_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when an embedding of at most 16 tokens grows past them: ATen's index_select
    switches from indexSelectSmallIndex, which walks the indices one after another in every
    thread, to the grid-stride indexSelectLargeIndex, so 17 tokens run faster than 16 (Vidur's
    A100 rows: 14 us at 16 tokens, 4 us at 32; docs/models/streaming.md). Within each kernel
    the property holds (tests/models/streaming/test_gather.py)."""
    names = [getattr(getattr(p.diagnostics, "kernel", None), "name", "") for p in (smaller, larger)]
    return names == ["indexSelectSmallIndex", "indexSelectLargeIndex"]


def _embedding_backward_switch(smaller: OpProfile, larger: OpProfile) -> bool:
    """True when an embedding's backward pass grows past 3,072 tokens: PyTorch switches from
    embedding_backward_feature_kernel (the whole gradient's columns walked by ceil(hidden / 32)
    CTAs, a chain of DRAM round trips per 32 tokens) to sorting the indices, which on wide rows
    can finish sooner (the threshold is PyTorch's, tuned on narrower rows); or when, on the
    sorting path, a wider row's grid passes the atomic path's bound of 4 CTAs an SM and
    PyTorch leaves the atomic partial sums for the two passes (which on a vocabulary of a few
    rows, every partial sum contending for them, finish sooner: 3,073 tokens over 68 rows on an
    A10, 440 us atomic at 688 wide, 421 us two-pass at 1,377). Within each path the property
    holds (tests/models/streaming/test_embedding_backward.py)."""
    paths = [getattr(p.diagnostics, "feature", None) is not None for p in (smaller, larger)]
    sorted_paths = [getattr(p.diagnostics, "path", None) for p in (smaller, larger)]
    return paths == [True, False] or sorted_paths == ["atomic", "two_pass"]


GEMM_KINDS = (OpKind.GEMM, OpKind.BATCHED_GEMM, OpKind.GROUPED_GEMM)


def _with_fixed_kernel(op: LocalOp) -> LocalOp:
    """``op`` with the default 128x128 CTA tile fixed (kernel models skip selection)."""
    attrs = {**op.attrs, "cta_tile_m": 128, "cta_tile_n": 128}
    return LocalOp(name=op.name, kind=op.kind, phase=op.phase, tensors=op.tensors, attrs=attrs)
