"""Vidur's NCCL all-reduce timings on an H100 and an A100 DGX (data/collectives/vidur,
SOURCE.md) under the collective models: the figures docs/validation.md ("Collectives") quotes
do not regress."""

from __future__ import annotations

import math
from functools import cache
from pathlib import Path

import pytest

from opmodel.core.enums import OpKind
from opmodel.validation.metrics import ErrorMetrics, error_metrics
from opmodel.validation.op_latency import load_op_rows, validate_op_latency
from opmodel.validation.op_rows import OpRow

REPO = Path(__file__).resolve().parents[2]
MIB = 1 << 20


@cache
def _rows() -> tuple[OpRow, ...]:
    rows, skipped = load_op_rows(REPO / "data" / "ops" / "vidur" / "collectives")
    # all-reduce, H100: 27 rows of 8 ranks, 13 of 4, 12 of 2; A100: 15, 6 and 12; sends: H100 18,
    # A100 19
    assert len(rows) == 122 and not skipped
    assert all(r.op.kind is OpKind.COLLECTIVE for r in rows)
    return tuple(rows)


def _metrics(
    model: str,
    hardware: str,
    sizes: tuple[int, int],
    ranks: int | None = None,
    operation: str = "all_reduce",
) -> ErrorMetrics:
    smallest, largest = sizes
    chosen = [
        r
        for r in _rows()
        if r.hardware == hardware
        and smallest <= r.op.tensors[0].nbytes < largest
        and (ranks is None or r.op.attrs["ranks"] == ranks)
        and r.op.attrs["operation"] == operation
    ]
    predicted = validate_op_latency(chosen, model).predicted_s
    return error_metrics(list(predicted), [r.time_s for r in chosen])


@pytest.mark.parametrize(
    ("hardware", "ranks", "mape", "low", "high"),
    [  # buffers of 1 MiB and more, held out (nothing fitted)
        # auto weighs NVLink SHARP beside the ring (2026-12-07): 8.1 % over 36 rows, 0.95x (the
        # ring alone: 9.3 %, 0.97x); 8 ranks 5.1 %, 0.87-1.20x (ring: 7.1 %, 1.05x), whose rows
        # of 50-64 MiB ran faster than NCCL's ring can (NCCL ran them with NVLS)
        ("h100_sxm", None, 0.083, 0.94, 0.96),
        ("h100_sxm", 8, 0.053, 1.00, 1.03),
        ("h100_sxm", 4, 0.053, 0.94, 0.96),  # 5.3 % (5.1 % read as published, 0.5 us short)
        ("h100_sxm", 2, 0.205, 0.79, 0.81),  # 20.3 %: two ranks run at 0.80x
        # the A100 at the 195 GB/s a published nccl-tests run measured on 8 A100s (the config's
        # nccl_bandwidth_bytes_per_s; 32.3 % and 0.67x at 370/450 of its line rate): 18.0 %
        # over 25 rows, 0.80x; its 2-rank buffers of 1-4 MiB at the host loop's pace
        ("a100_80gb_sxm", None, 0.185, 0.79, 0.81),
        ("a100_80gb_sxm", 8, 0.105, 0.89, 0.90),  # 10.1 %
        ("a100_80gb_sxm", 4, 0.095, 0.90, 0.92),  # 9.1 %
    ],
)
def test_effective_roofline_on_buffers_from_1_mib(
    hardware: str, ranks: int | None, mape: float, low: float, high: float
) -> None:
    metrics = _metrics("effective_roofline", hardware, (MIB, 1 << 40), ranks)
    assert metrics.mape <= mape and low <= metrics.geomean_ratio <= high


def test_small_buffers_sit_under_the_host_s_floor() -> None:
    """Under 1 MiB the measured kernels take 30-44 us (H100) and 32-65 us (A100) whatever the
    size (H100, 4 ranks: 38-44 us from 2 KiB to 490 KiB), the pace of the profiler's host
    loop, where NCCL's model gives 5-20 us: 0.39x over the H100's 16 rows, 0.42x over the
    A100's 8. The roofline is far faster everywhere (0.55x on the H100 from 1 MiB)."""
    small = _metrics("effective_roofline", "h100_sxm", (0, MIB))
    assert small.count == 16 and 0.3 < small.geomean_ratio < 0.5
    assert 0.3 < _metrics("effective_roofline", "a100_80gb_sxm", (0, MIB)).geomean_ratio < 0.5
    roofline = _metrics("roofline", "h100_sxm", (MIB, 1 << 40))
    assert math.isclose(roofline.geomean_ratio, 0.545, abs_tol=0.01)


def test_sends_move_at_nccl_s_bulk_rate() -> None:
    """A send between two H100s of one node (pipeline parallelism's): 41-64 MiB within 1 % at
    370 GB/s (NCCL's maintainer's Simple-protocol rate, nothing fitted): 0.995-1.006x; under
    1 MiB the measured 5-10 us against the LL protocol's 4.1-12.6 us (0.54-1.26x)."""
    large = _metrics("effective_roofline", "h100_sxm", (40 * MIB, 1 << 40), 2, "send_recv")
    assert large.count == 9 and large.mape <= 0.01
    small = _metrics("effective_roofline", "h100_sxm", (0, 2 * MIB), 2, "send_recv")
    assert small.count == 9 and small.mape <= 0.30


def test_a100_sends_run_faster_than_its_ring_rate() -> None:
    """A one-way send between two A100s moves 41-64 MiB at 228 GB/s, where the config's NCCL
    rate, 195 GB/s, was measured on a ring of sends (every GPU sending and receiving): 1.19-1.21x
    (20.6 %); its small sends sit at 13-25 us (0.69x over 10 rows of 18 KiB to 4 MiB)."""
    large = _metrics("effective_roofline", "a100_80gb_sxm", (40 * MIB, 1 << 40), 2, "send_recv")
    assert large.count == 9 and 1.19 <= large.geomean_ratio <= 1.22
    small = _metrics("effective_roofline", "a100_80gb_sxm", (0, 8 * MIB), 2, "send_recv")
    assert small.count == 10 and small.mape <= 0.36
