"""Decode batches of requests at different context lengths (attr ``kv_lengths``): checks, work,
the split-KV grid and FlashMLA's schedule (docs/models/attention.md, "Requests of different
lengths")."""

from __future__ import annotations

import dataclasses

import pytest
from hypothesis import given
from hypothesis import strategies as st

from opmodel import LocalOp
from opmodel.core.errors import OpValidationError
from opmodel.formulas.work import op_work
from opmodel.models import get_model, model_names
from opmodel.models.attention.split_grid import decode_grid
from tests.models.attention.ops import A100, H100, attention, evaluation
from tests.models.attention.test_mla import mla

MIXED = (8192,) * 8 + (1000,) * 8


def with_lengths(op: LocalOp, lengths: object, **attrs: object) -> LocalOp:
    """``op`` with attr ``kv_lengths`` (and any others)."""
    return dataclasses.replace(op, attrs={**op.attrs, "kv_lengths": lengths, **attrs})


def gqa_decode(lengths: object = MIXED) -> LocalOp:
    """16 requests in a cache of 8,192 keys, 32 query heads on 8 KV heads, one token."""
    return with_lengths(attention(16, 32, 8192, 128, kv_heads=8, seq_q=1), lengths)


@pytest.mark.parametrize(
    ("lengths", "attrs", "message"),
    [
        ((8192,) * 15, {}, "needs one entry per request (batch 16); got 15"),
        ((8193,) + (1,) * 15, {}, "8193 exceeds K's seq dim 8192"),
        ((1,) * 16, {"causal": True}, None),
        ((0,) + (1,) * 15, {}, ">= 1"),
        ("long", {}, "list"),
    ],
)
def test_lengths_are_checked(
    lengths: object, attrs: dict[str, object], message: str | None
) -> None:
    if message is None:  # one query token: a key per request is enough, causal or not
        assert gqa_decode(lengths).view.kv_lengths == lengths
        with_lengths(attention(16, 32, 8192, 128, kv_heads=8, seq_q=1), lengths, **attrs)
        return
    with pytest.raises(OpValidationError, match="kv_lengths") as caught:
        gqa_decode(lengths).view  # noqa: B018 - parsing is the check
    assert message in str(caught.value)


def test_causal_lengths_hold_the_query_tokens() -> None:
    with pytest.raises(OpValidationError, match="3 is shorter than the 4 query tokens"):
        with_lengths(attention(2, 8, 64, 64, seq_q=4), (64, 3), causal=True)


def test_decode_takes_no_query_lengths() -> None:
    with pytest.raises(OpValidationError, match="unknown attribute for attention_decode"):
        with_lengths(gqa_decode(), MIXED, q_lengths=(1,) * 16)


def test_work_counts_each_request_at_its_length() -> None:
    """FLOPs: 2 x 32 heads x (8 x 8,192 + 8 x 1,000 keys) x (128 + 128); reads: Q, and K and V
    at 73,536 of the 16 x 8,192 rows the cache holds (the footprint keeps the whole cache)."""
    work, op = op_work(gqa_decode()), gqa_decode()
    keys = 8 * 8192 + 8 * 1000
    assert work.matmul_flops == 2 * 32 * keys * 256
    cache = 2 * 16 * 8 * 8192 * 128 * 2
    q = 16 * 32 * 128 * 2
    assert work.read_bytes == q + cache * keys // (16 * 8192)
    assert op.view.kv_tokens == keys
    full = op_work(attention(16, 32, 8192, 128, kv_heads=8, seq_q=1))
    assert full.read_bytes == q + cache


def test_causal_pairs_per_request() -> None:
    """Two query tokens, causal: a request of L keys has 2 L - 1 valid pairs per head."""
    op = with_lengths(attention(2, 4, 64, 64, seq_q=2), (64, 10), causal=True)
    assert op.view.batch_score_pairs == (2 * 64 - 1) + (2 * 10 - 1)


def test_split_kv_grid_by_hand() -> None:
    """A100, the 16 requests above: FA2 splits by the cache's capacity, 3 ways of ceil(64 / 3) =
    22 blocks (tests/models/attention/test_decode.py). The eight 8,192-key requests keep 3
    CTAs each (22, 22, 20 blocks), the eight of 1,000 keys one (8 blocks; their other two exit
    at once): 32 per KV head, 256 CTAs, (8 x 64 + 8 x 8) / 32 = 18 blocks each on average, the
    busiest 22; every request writes its 3 partial pieces."""
    e = evaluation(gqa_decode(), A100)
    g = decode_grid(e.kernel, gqa_decode().view, 108)
    assert (g.splits, g.ctas, g.tiles_per_cta, g.longest_tiles) == (3, 256, 18, 22)
    assert (g.keys_read, g.partials) == (8 * 8192 + 8 * 1000, 48)


def test_paged_table_reads_the_pages_in_use() -> None:
    """A paged cache of 16-token pages: the block table's entries are each request's pages,
    8 x 512 + 8 x ceil(1000 / 16) = 4,600 of them, 4 bytes each."""
    op = with_lengths(gqa_decode(), MIXED, page_size=16)
    g = decode_grid(evaluation(op, A100).kernel, op.view, 108)
    assert g.table_entries == 8 * 512 + 8 * 63


@pytest.mark.parametrize("name", model_names())
def test_full_lengths_are_the_uniform_decode(name: str) -> None:
    """Every request at the cache's capacity is the decode without the attr, on every model."""
    model = get_model(name)
    for op, hardware in ((gqa_decode((8192,) * 16), A100), (mla(), H100)):
        plain = dataclasses.replace(
            op, attrs={k: v for k, v in op.attrs.items() if k != "kv_lengths"}
        )
        given_lengths = with_lengths(plain, (plain.view.seq_kv,) * plain.view.batch)
        assert model.predict(given_lengths, hardware).latency_s == pytest.approx(
            model.predict(plain, hardware).latency_s, rel=1e-12
        )


@given(st.lists(st.integers(1, 8192), min_size=16, max_size=16))
def test_shorter_requests_never_take_longer_than_a_full_cache(lengths: list[int]) -> None:
    """The split-KV decode of any lengths within the capacity takes no longer than every request
    at the capacity, and its DRAM reads scale with the keys held."""
    e = evaluation(gqa_decode(tuple(lengths)), A100)
    full = evaluation(gqa_decode((8192,) * 16), A100)
    assert e.latency_s <= full.latency_s * (1 + 1e-9)
    assert e.dram_read_bytes < full.dram_read_bytes or sum(lengths) == 16 * 8192


def test_flashmla_busiest_part_sets_the_time() -> None:
    """FlashMLA, 128 requests, 16 heads, about the same total of keys: at 4,096 each, every part
    takes one request of 64 blocks; with one request of 16,384 and the rest at 4,000 (63
    blocks), the payload is ceil((256 + 127 x 63 + 640) / 132) + 5 = 73 and the long request
    is cut into parts of 68 blocks: the busiest part holds more, and the decode takes longer."""
    even = with_lengths(mla(128, 16, seq_kv=16384), (4096,) * 128)
    skewed = with_lengths(mla(128, 16, seq_kv=16384), (16384,) + (4000,) * 127)
    assert evaluation(skewed, H100).latency_s > evaluation(even, H100).latency_s


@given(
    st.integers(1, 4),
    st.lists(st.integers(0, 500), min_size=1, max_size=8),
    st.booleans(),
    st.one_of(st.none(), st.integers(1, 300)),
)
def test_batch_pairs_are_the_requests_pairs(
    seq_q: int, extra: list[int], causal: bool, window: int | None
) -> None:
    """The batch's valid pairs (closed form where causal without a window) are the sum of each
    request's own count."""
    lengths = tuple(seq_q + e for e in extra)
    attrs: dict[str, object] = {"causal": causal}
    if causal and window is not None:
        attrs["window"] = window
    op = with_lengths(attention(len(lengths), 2, max(lengths), 16, seq_q=seq_q), lengths, **attrs)
    view = op.view
    assert view.batch_score_pairs == sum(view.pairs_for(length) for length in lengths)
