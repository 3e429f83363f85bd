"""FlashMLA's scheduler walk against a literal transcription of ``get_mla_metadata``
(csrc/flash_api.cpp: parts in order, each filling a payload of ``ceil(total / parts) + 5``
units with whole requests and cutting the next one where the payload ends). The model steps
part by part and takes a part's whole requests of equal length together; this says it still
agrees with the loop it stands for, request by request."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from opmodel.models.attention.flashmla import flashmla_grid, schedule, schedule_runs
from opmodel.models.attention.kernels import FLASHMLA
from tests.hypothesis_budget import examples
from tests.models.attention.test_mla import mla

FIXED = 5  # Config::FIXED_OVERHEAD_NUM_BLOCKS


def literal(blocks: list[int], parts: int) -> tuple[int, int, int, int]:
    """(parts with work, busiest part's blocks, its pieces, pieces of cut requests), by
    running the C++ loop as written."""
    payload = -(-sum(b + FIXED for b in blocks) // parts) + FIXED
    index = done = 0  # the request being scheduled, its blocks already given out
    loads, pieces_of = [], [0] * len(blocks)
    for _ in range(parts):
        remain, got, pieces = payload, 0, 0
        while index < len(blocks):
            rest = blocks[index] - done
            if remain >= rest + FIXED:  # the rest of the request fits
                remain -= rest + FIXED
                got, pieces, pieces_of[index] = got + rest, pieces + 1, pieces_of[index] + 1
                index, done = index + 1, 0
                continue
            if remain - FIXED > 0:  # cut it where the payload ends
                done += remain - FIXED
                got, pieces, pieces_of[index] = (
                    got + remain - FIXED,
                    pieces + 1,
                    pieces_of[index] + 1,
                )
            break
        loads.append((got, pieces))
    busiest = max(loads)
    partials = sum(p for p in pieces_of if p > 1)
    return sum(1 for _, p in loads if p), busiest[0], busiest[1], partials


runs_strategy = st.lists(
    st.tuples(st.integers(1, 300), st.integers(1, 300)), min_size=1, max_size=4
)


@settings(max_examples=examples(300), deadline=None)
@given(runs=runs_strategy, parts=st.integers(1, 140))
def test_walk_matches_the_literal_loop(runs: list[tuple[int, int]], parts: int) -> None:
    blocks = [b for b, count in runs for _ in range(count)]
    expected = literal(blocks, parts)
    assert schedule_runs(tuple(runs), parts) == expected
    assert schedule(tuple(blocks), parts) == expected


def test_no_requests_give_no_work() -> None:
    assert schedule((), 66) == literal([], 66) == (0, 0, 0, 0)


def test_a_large_equal_batch_matches_the_loop() -> None:
    """20,000 requests of 64 blocks on 66 parts (DeepSeek-V3's 128 heads on an H100): the
    bulk walk's result is the loop's, and a grid of that batch is built from one run."""
    assert schedule_runs(((64, 20_000),), 66) == literal([64] * 20_000, 66)
    grid = flashmla_grid(FLASHMLA, mla(batch=20_000).view, 132)  # type: ignore[arg-type]
    assert grid.tiles_per_cta == -(-20_000 * 64 // (grid.ctas // 2))
