"""ATen's index_select (the embedding's kernel): grid and loads by hand, the chain's L2 trips,
the implementations that run it, and Vidur's A100 rows it was calibrated on."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpModelError
from opmodel.hardware import load_hardware
from opmodel.models import get_model
from opmodel.models.shared.start_drain import start_drain_calibration
from opmodel.models.streaming import StreamingEvaluation, evaluate_streaming
from opmodel.models.streaming.gather import index_select_kernel
from opmodel.models.streaming.issue import instructions_per_element
from opmodel.validation.op_latency import load_op_rows
from tests.conftest import REPO
from tests.models.streaming.ops import no_bytes

A100 = load_hardware("a100_80gb_sxm")
MODEL = get_model("effective_roofline")


def _embedding(tokens: int, hidden: int, **attrs: object) -> LocalOp:
    return LocalOp(
        name="emb",
        kind=OpKind.EMBEDDING,
        phase=Phase.PREFILL,
        tensors=(
            TensorSpec(TensorRole.INPUT, (tokens,), DType.INT64),
            TensorSpec(TensorRole.WEIGHT, (32000, hidden), DType.FP16),
            TensorSpec(TensorRole.OUTPUT, (tokens, hidden), DType.FP16),
        ),
        attrs=attrs,
    )


def test_large_index_grid_strides_over_the_output_by_hand() -> None:
    """4096 x 4096 on 108 SMs: min(16,777,216 / 128, 8 x 108) = 864 CTAs of 128 threads, so
    each thread runs ceil(16,777,216 / 110,592) = 152 iterations, each an index load (L2) then
    a table load (DRAM)."""
    k = index_select_kernel(4096, 4096, 108)
    assert (k.name, k.ctas, k.threads_per_cta) == ("indexSelectLargeIndex", 864, 128)
    assert (k.serial_loads, k.l2_serial_loads) == (152, 152)
    assert k.elements_per_cta == 128 * 152  # every thread's iterations, the last one partial
    assert k.serial_arithmetic and k.stalls_in_issue_cost


def test_small_index_walks_the_indices_in_every_thread() -> None:
    """16 indices or fewer: the grid covers one row (4096 / 128 = 32 CTAs) and each thread
    takes every index in turn: 16 index loads and 16 table loads; 17 indices switch kernels."""
    k = index_select_kernel(16, 4096, 108)
    assert (k.name, k.ctas, k.serial_loads, k.l2_serial_loads) == (
        "indexSelectSmallIndex",
        32,
        16,
        16,
    )
    assert index_select_kernel(17, 4096, 108).name == "indexSelectLargeIndex"
    # a narrow output: fewer threads than 128 per CTA, one CTA
    narrow = index_select_kernel(17, 4, 108)
    assert (narrow.ctas, narrow.threads_per_cta, narrow.serial_loads) == (1, 68, 1)


def test_bad_sizes_are_a_clear_error() -> None:
    with pytest.raises(ValueError, match="sizes must be >= 1"):
        index_select_kernel(0, 4096, 108)


def test_l2_loads_add_one_l2_round_trip_each_to_the_chain() -> None:
    """The same kernel with and without its index loads, no bytes moved (no queueing): the
    chain differs by 152 A100 L2 round trips (a100_80gb_sxm.yaml: 142 ns)."""
    kernel = index_select_kernel(4096, 4096, 108)
    work = no_bytes()
    with_index = evaluate_streaming(kernel, A100, work)
    without = evaluate_streaming(dataclasses.replace(kernel, l2_serial_loads=0), A100, work)
    assert with_index.chain_s - without.chain_s == pytest.approx(152 * 1.42e-7, rel=1e-9)


def test_only_a_fused_embedding_keeps_the_vector_gather() -> None:
    for attrs in ({}, {"implementation": "pytorch"}, {"implementation": "vllm"}):
        e = MODEL.predict(_embedding(4096, 4096, **attrs), A100).diagnostics
        assert isinstance(e, StreamingEvaluation)
        assert e.kernel.name == "indexSelectLargeIndex"
    fused = MODEL.predict(_embedding(4096, 4096, implementation="fused"), A100).diagnostics
    assert isinstance(fused, StreamingEvaluation)
    assert fused.kernel.name == "index gather (elementwise structure)"
    with pytest.raises(OpModelError, match="implementation"):
        _embedding(4096, 4096, implementation="triton")


def test_the_calibrated_cost_sets_the_large_embedding_by_hand() -> None:
    """4096 x 4096 on the A100: 8 CTAs per SM, each 128 threads x 152 iterations at the
    calibrated issue cost, issued by 4 x 32 lanes at 1.41 GHz, plus the start and drain (the
    calibrated cycles, opmodel.models.shared.start_drain). Vidur's
    A100 measures 235 us for Llama-2-7B's 4096 tokens, a training row."""
    cost = instructions_per_element("pytorch", "embedding")
    assert 150 < cost < 400
    e = MODEL.predict(_embedding(4096, 4096), A100).diagnostics
    assert isinstance(e, StreamingEvaluation)
    assert e.limiter == "compute"
    per_cta = 128 * 152
    start = start_drain_calibration().start_drain_cycles
    expected = start / 1.41e9 + 8 * per_cta * cost / 128 / 1.41e9
    assert e.latency_s == pytest.approx(expected, rel=1e-9)
    assert 0.85 < e.latency_s / 235e-6 < 1.15


@given(
    tokens=st.integers(1, 16384),
    more=st.integers(1, 4096),
    hidden=st.integers(1, 8192),
)
def test_more_tokens_never_faster_within_one_kernel(tokens: int, more: int, hidden: int) -> None:
    """Within each of index_select's kernels more tokens never take less time; the switch from
    the small-index kernel (<= 16 tokens) to the grid-stride one is ATen's dispatch and is
    faster (tests/conformance exempts it)."""
    bigger = tokens + more
    if tokens <= 16 < bigger:  # stay within the small-index kernel
        bigger = 16
    if bigger == tokens:
        return
    small = MODEL.predict(_embedding(tokens, hidden), A100)
    large = MODEL.predict(_embedding(bigger, hidden), A100)
    assert large.latency_s >= small.latency_s * (1 - 1e-12)


def test_vidur_embeddings_against_the_vectorised_gather(tmp_path: Path) -> None:
    """Vidur's held-out embedding rows (H100 and A40, TP = 1), as effective_roofline predicts
    them with ATen's index_select (the calibrated cost fitted on the A100's rows) and with the
    vectorised gather it runs for ``implementation: fused`` (the embedding's structure before
    2026-12-05): MAPE 11.8 % and 14.8 % against 71.4 % and 36.3 % (docs/validation.md; 12.4 %,
    15.2 %, 72.7 % and 36.9 % before Vidur's truncated microseconds were put back, 2026-12-07)."""
    folder = tmp_path / "ops"
    folder.mkdir()
    for gpu in ("h100", "a40"):
        lines = (REPO / "data/ops/vidur" / f"vidur_{gpu}.csv").read_text().splitlines()
        kept = [lines[0]] + [line for line in lines[1:] if line.startswith("emb,")]
        (folder / f"{gpu}.csv").write_text("\n".join(kept) + "\n")
    rows, skipped = load_op_rows(tmp_path)
    assert len(rows) == 2 * 1566 and not skipped
    errors: dict[tuple[str, str], list[float]] = {}
    for row in rows:
        spec = load_hardware(row.hardware)
        for implementation in ("pytorch", "fused"):
            op = LocalOp(
                name=row.op.name,
                kind=row.op.kind,
                phase=row.op.phase,
                tensors=row.op.tensors,
                attrs={**row.op.attrs, "implementation": implementation},
            )
            ratio = MODEL.predict(op, spec).latency_s / row.time_s
            errors.setdefault((row.hardware, implementation), []).append(abs(ratio - 1))
    mape = {key: sum(v) / len(v) for key, v in errors.items()}
    assert mape[("h100_sxm", "pytorch")] == pytest.approx(0.118, abs=0.005)
    assert mape[("a40", "pytorch")] == pytest.approx(0.148, abs=0.005)
    assert mape[("h100_sxm", "fused")] == pytest.approx(0.714, abs=0.005)
    assert mape[("a40", "fused")] == pytest.approx(0.363, abs=0.005)
