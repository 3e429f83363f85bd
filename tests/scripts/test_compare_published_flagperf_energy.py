"""scripts/compare_published_flagperf_energy.py: FlagPerf's published board power against the
model's energy per call on the A100 40GB SXM (as shipped: datasheet-estimate energy terms)."""

from __future__ import annotations

import pytest

from tests.scripts.loader import load_script


def test_measured_energy_is_power_times_cputime() -> None:
    script = load_script("compare_published_flagperf_energy")
    rows = {m.label: m.joules for m in script.streaming_ops()}
    # the fp32 sum: 265.3 W over 2952.23 us a call
    assert rows["sum:flagperf:fp32:1024x1024x1024"] == pytest.approx(265.3 * 2952.23e-6)
    ops = [m.op for m in script.streaming_ops()]
    assert all("l2_dirty_bytes" not in op.attrs for op in ops)  # back to back: no flush
    assert len(ops) == 36 and len(script.gemm_ops()) == 5


def test_derived_energy_per_byte_is_the_shipped_one() -> None:
    script = load_script("compare_published_flagperf_energy")
    value, rows = script.derive_j_per_byte("a100_40gb_sxm")
    assert len(rows) == 6 and all(label.split(":")[0] in ("mul", "div") for label, _ in rows)
    # a fixed point: the config carries it, so deriving again gives it back
    assert value == pytest.approx(1.329e-10, rel=1e-3)


def test_held_out_rows_within_a_quarter() -> None:
    rows = load_script("compare_published_flagperf_energy").ratios("a100_40gb_sxm")
    # docs/validation.md: reductions 10.7 % (0.90x; 7.2 %, 0.94x, without argmax), elementwise
    # 8.9 % (0.92x), GEMMs 6.9 %; the lowest the 16-bit GELU (0.76x), the highest the FP32
    # SGEMM (1.20x); argmax's integer-pipe work is not charged: 0.65-0.81x
    others = [ratio for _, label, _, ratio in rows if not label.startswith("argmax")]
    argmax = [ratio for _, label, _, ratio in rows if label.startswith("argmax")]
    assert len(argmax) == 3 and all(0.6 < ratio < 0.85 for ratio in argmax)
    assert all(0.7 < ratio < 1.25 for ratio in others)
