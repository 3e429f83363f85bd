"""MLA's absorbed decode (attr ``shared_kv``): bytes, checks, FlashMLA's grid, and the split-KV
kernel's query blocks that share their keys (docs/models/attention.md, "Multi-head Latent
Attention")."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import DType, LocalOp, OpKind, Phase, TensorRole, TensorSpec
from opmodel.core.errors import OpValidationError
from opmodel.formulas.work import op_work
from opmodel.models import get_model
from opmodel.models.attention.flashmla import flashmla_grid, schedule
from opmodel.models.attention.kernels import FLASHMLA
from tests.models.attention.ops import A100, H100, MODEL, evaluation


def mla(
    batch: int = 128,
    heads_q: int = 128,
    seq_q: int = 1,
    seq_kv: int = 4096,
    *,
    shared: bool = True,
    dims: tuple[int, int] = (576, 512),
    v_dtype: DType = DType.BF16,
) -> LocalOp:
    """DeepSeek-V3's absorbed decode: one latent KV head of 576 channels, values its first 512."""
    dqk, dv = dims
    return LocalOp(
        name="mla",
        kind=OpKind.ATTENTION_DECODE,
        phase=Phase.DECODE,
        tensors=(
            TensorSpec(TensorRole.INPUT, (batch, heads_q, seq_q, dqk), DType.BF16, "q"),
            TensorSpec(TensorRole.INPUT, (batch, 1, seq_kv, dqk), DType.BF16, "k"),
            TensorSpec(TensorRole.INPUT, (batch, 1, seq_kv, dv), v_dtype, "v"),
            TensorSpec(TensorRole.OUTPUT, (batch, heads_q, seq_q, dv), DType.BF16, "o"),
        ),
        attrs={"shared_kv": shared},
    )


def test_shared_cache_is_read_and_stored_once() -> None:
    """Batch 2, 16 heads, 1,000 keys: K is 2 x 1000 x 576 x 2 = 2,304,000 bytes and V (as a
    tensor) 2,048,000; with shared_kv only K counts, in the footprint and the compulsory reads."""
    shared, apart = mla(2, 16, 1, 1000), mla(2, 16, 1, 1000, shared=False)
    q, o = 2 * 16 * 576 * 2, 2 * 16 * 512 * 2
    assert apart.footprint.input_bytes == q + 2_304_000 + 2_048_000
    assert shared.footprint.input_bytes == q + 2_304_000
    assert shared.footprint.output_bytes == o
    assert op_work(shared).read_bytes == q + 2_304_000
    assert op_work(apart).read_bytes == q + 2_304_000 + 2_048_000
    assert op_work(shared).flops == op_work(apart).flops  # the same two GEMMs


@pytest.mark.parametrize(
    ("op", "message"),
    [
        (lambda: mla(dims=(512, 576)), "V head_dim 576 must not exceed K head_dim 512"),
        (lambda: mla(v_dtype=DType.FP16), "V dtype fp16 must equal K dtype bf16"),
    ],
)
def test_shared_kv_checks_name_the_problem(op: object, message: str) -> None:
    with pytest.raises(OpValidationError, match=message):
        op()  # type: ignore[operator]


def test_shared_kv_is_a_forward_attr() -> None:
    t = (2, 4, 64, 64)
    with pytest.raises(OpValidationError, match=r"attrs\.shared_kv: a forward pass only"):
        LocalOp(
            name="bwd",
            kind=OpKind.ATTENTION_PREFILL,
            phase=Phase.TRAIN_BWD,
            tensors=(
                *(TensorSpec(TensorRole.INPUT, t, DType.BF16, tag) for tag in "qkvo"),
                TensorSpec(TensorRole.GRAD, t, DType.BF16, "o"),
                *(TensorSpec(TensorRole.OUTPUT, t, DType.BF16, tag) for tag in "qkv"),
            ),
            attrs={"shared_kv": True},
        )


def test_flashmla_runs_on_hopper_only_for_a_shared_cache() -> None:
    assert evaluation(mla(), H100).kernel.name == "flashmla"
    assert evaluation(mla(shared=False), H100).kernel.name == "splitkv"
    assert evaluation(mla(), A100).kernel.name == "splitkv"  # no FlashMLA before sm_90


def test_flashmla_grid_by_hand() -> None:
    """Batch 128, 128 heads, one token, 4,096 keys on 132 SMs: 128 packed rows make 2 blocks of
    64, so 132 // 1 // 2 = 66 parts; 128 x (64 + 5) = 8,832 units, a payload of ceil(8832 / 66)
    + 5 = 139: each part takes two whole requests (138 units; the 1 left holds no block beside
    the 5), so 64 parts get work, 2 x 64 = 128 CTAs of 128 key blocks in 2 pieces, none cut."""
    g = flashmla_grid(FLASHMLA, mla().view, 132)  # type: ignore[arg-type]
    assert (g.m_blocks, g.kv_blocks, g.ctas, g.tiles_per_cta) == (2, 64, 128, 128)
    assert (g.partials, g.splits, g.longest_tiles, g.longest_pieces) == (0, 1, 128, 2)
    # 8 requests, 16 heads: one block of rows, 132 parts; 8 x 69 = 552 units, payload 5 + 5 =
    # 10: a part cuts 5 blocks off a request (12 times), the 13th takes its last 4 (9 units)
    # and the 1 left holds none of the next; 8 x 13 = 104 parts, every piece a partial
    small = flashmla_grid(FLASHMLA, mla(8, 16).view, 132)  # type: ignore[arg-type]
    assert (small.m_blocks, small.ctas, small.tiles_per_cta) == (1, 104, 5)
    assert (small.partials, small.splits, small.longest_tiles) == (104, 13, 5)
    # one key: one unit of work and no cut
    tiny = flashmla_grid(FLASHMLA, mla(1, 16, 1, 1).view, 132)  # type: ignore[arg-type]
    assert (tiny.ctas, tiny.tiles_per_cta, tiny.partials) == (1, 1, 0)


def test_flashmla_schedule_by_hand() -> None:
    """get_mla_metadata's walk over blocks (3, 70, 1) for 2 parts: 74 blocks + 3 x 5 = 89 units,
    payload ceil(89 / 2) + 5 = 50. Part 0 takes request 0 (8 units, 42 left) and cuts 37
    blocks off request 1 (42 - 5); part 1 takes its last 33 (38 units) and request 2 (6): the
    busiest part holds 40 blocks in 2 pieces, and request 1's 2 pieces are partials."""
    assert schedule((3, 70, 1), 2) == (2, 40, 2, 2)
    # one part takes everything, uncut
    assert schedule((3, 70, 1), 1) == (1, 74, 3, 0)


def test_flashmla_reads_the_latent_cache_once() -> None:
    """DRAM reads: Q and the cache (K only, contiguous: no block table); no request is cut, so
    no partial outputs; the L2 serves each key block to both query blocks of its part."""
    e = evaluation(mla(), H100)
    q, k = 128 * 128 * 576 * 2, 128 * 4096 * 576 * 2
    assert e.dram_read_bytes == q + k
    assert e.l2_read_bytes == q + 2 * k
    assert e.dram_write_bytes == 128 * 128 * 512 * 2


def test_query_blocks_of_one_head_stream_its_keys_once() -> None:
    """The split-KV kernel with 128 query heads on one KV head (2 query blocks, A100): DRAM
    reads each key and value once, not once per query block; the decode is no slower than
    twice the KV bytes at peak bandwidth (it read them 4 times before 2026-12-05)."""
    e = evaluation(mla(shared=False), A100)
    assert e.kernel.name == "splitkv"
    kv = 128 * 4096 * (576 + 512) * 2
    assert e.dram_read_bytes < 1.1 * kv
    assert e.latency_s < 2 * kv / A100.hbm.bandwidth_bytes_per_s


@given(
    st.integers(1, 64),
    st.sampled_from([1, 16, 64, 128]),
    st.integers(1, 2),
    st.integers(1, 16384),
)
def test_a_shared_cache_is_never_slower(batch: int, heads: int, seq_q: int, seq_kv: int) -> None:
    """Within one kernel (the split-KV kernel on the A100; the roofline anywhere). On Hopper the
    shared cache runs FlashMLA, whose scheduler cuts even a short cache across parts and pays
    a combine kernel that FA2's split heuristic would not: another kernel, not fewer bytes."""
    cases = [("roofline", A100), ("roofline", H100), ("effective_roofline", A100)]
    for name, hardware in cases:
        model = get_model(name)
        shared = model.predict(mla(batch, heads, seq_q, seq_kv), hardware)
        apart = model.predict(mla(batch, heads, seq_q, seq_kv, shared=False), hardware)
        assert shared.traffic["hbm"].read_bytes < apart.traffic["hbm"].read_bytes
        # a compute-bound decode that moves fewer bytes keeps its tensor cores busier, and the
        # power-limited clock law gives it a lower clock (as tests/conformance exempts)
        clocks = {getattr(p.diagnostics, "sm_clock_hz", None) for p in (shared, apart)}
        if len(clocks) == 1:
            assert shared.latency_s <= apart.latency_s * (1 + 1e-12)


def test_the_model_is_the_effective_roofline() -> None:
    assert MODEL.name == "effective_roofline"
