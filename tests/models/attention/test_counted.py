"""FlashAttention-2's main loop counted from SASS: the shipped file against the block shapes'
arithmetic, malformed files, and the architectures it covers."""

from __future__ import annotations

from pathlib import Path

import pytest

from opmodel.models.attention.counted import (
    FLASH_COUNTS_FILE,
    estimated_loop_count,
    flash_loop_count,
    load_flash_counts,
)
from tests.config_errors import assert_one_line_error


def test_every_shipped_loop_issues_its_shapes_hmma_and_ldmatrix_bytes() -> None:
    """A warp owns ``block_q / warps`` query rows; per key block it computes S (rows x block_kv,
    depth head_dim) and O += P V (rows x head_dim, depth block_kv) with m16n8k16 HMMAs:
    ``rows / 16 x (block_kv / 8 x head_dim / 16 + head_dim / 8 x block_kv / 16)``, reading the
    key and value blocks and its query rows from shared memory. The counted loops hold exactly
    that many HMMAs and ldmatrix bytes, and more of the other instructions per HMMA where the
    softmax has more scores per FLOP (small head dimensions)."""
    counts = load_flash_counts(FLASH_COUNTS_FILE)
    assert {arch for arch, *_ in counts} == {"sm80", "sm86", "sm90"}
    for (_, head, block_q, block_kv), (warps, mma, other, ldsm) in counts.items():
        rows = block_q // warps
        assert mma == rows // 16 * (block_kv // 8 * head // 16 + head // 8 * block_kv // 16)
        assert other > 0
        # its ldmatrix loads read the whole K and V blocks and its own Q rows, 2 bytes each
        assert ldsm == 2 * (2 * block_kv * head + rows * head)
    h100 = {key[1:]: value for key, value in counts.items() if key[0] == "sm90"}
    d64, d128 = h100[(64, 128, 128)], h100[(128, 128, 64)]
    assert d64[2] / d64[1] > d128[2] / d128[1]


def test_lookup_by_architecture() -> None:
    assert flash_loop_count("sm90", 128, 128, 64) == (4, 256, 964, 40960)
    assert flash_loop_count("sm89", 128, 128, 64) == flash_loop_count("sm86", 128, 128, 64)
    assert flash_loop_count("sm100", 128, 128, 64) is None
    assert flash_loop_count(None, 128, 128, 64) is None
    assert flash_loop_count("sm90", 128, 64, 128) is None  # no such kernel


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("loops: {}\n", "needs the fields source (a string), loops (a mapping)"),
        ("source: x\nloops: {sm90: 1}\n", "loops.sm90: must be a list of block shapes"),
        (
            "source: x\nloops: {sm90: [{head_dim: 64}]}\n",
            "loops.sm90[0]: needs positive integers head_dim, block_q, block_kv, warps, mma,",
        ),
        (
            "source: x\nloops: {sm90: [{head_dim: 64, block_q: 128, block_kv: 64, warps: 4,"
            " mma: 256, other: -1, ldsm_bytes: 1}]}\n",
            "loops.sm90[0]: needs positive integers",
        ),
    ],
)
def test_malformed_files_fail_in_one_line(tmp_path: Path, text: str, message: str) -> None:
    assert_one_line_error(load_flash_counts, tmp_path, text, message)


def test_estimated_loops_reproduce_the_counted_ones() -> None:
    """The plane through an architecture's counted loops (counted.py's docstring) gives each
    counted shape its HMMA and ldmatrix bytes exactly and its other instructions within 3.4 %
    (sm_80, sm_86) and 5.6 % (sm_90); shapes without a count get an estimate, architectures
    without counts none."""
    counts = load_flash_counts(FLASH_COUNTS_FILE)
    for (arch, head, block_q, block_kv), (warps, mma, other, ldsm) in counts.items():
        estimate = estimated_loop_count(arch, head, block_q, block_kv, warps)
        assert estimate is not None
        assert estimate[:2] == (warps, mma) and estimate[3] == ldsm
        assert abs(estimate[2] / other - 1) <= (0.056 if arch == "sm90" else 0.034)
    causal = estimated_loop_count("sm86", 128, 64, 64, 4)  # FA2's causal blocks on sm_8x
    assert causal is not None and causal[1] == 128 and causal[3] == 2 * (2 * 64 * 128 + 16 * 128)
    assert 350 < causal[2] < 931  # fewer rows per warp than the counted 128 x 64 loop
    assert estimated_loop_count("sm89", 128, 64, 64, 4) == causal
    assert estimated_loop_count("cdna3", 128, 64, 64, 4) is None
