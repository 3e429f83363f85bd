"""scripts/flush_drain_experiment.py: the dirty lines left after a gap, and the capped rows."""

from __future__ import annotations

from opmodel.batch import op_from_row
from opmodel.validation.op_rows import OpRow
from tests.scripts.loader import load_script

SCRIPT = load_script("flush_drain_experiment")
NORM = "input:1024x4096:bf16;weight:4096:bf16;output:1024x4096:bf16"


def _row(hardware: str, attrs: str) -> OpRow:
    cells = {"name": "x", "kind": "rmsnorm", "phase": "prefill", "tensors": NORM, "attrs": attrs}
    op = op_from_row(cells, "test")
    return OpRow(
        op=op,
        time_s=1e-5,
        hardware=hardware,
        clock_hz=None,
        source="test",
        implementation="fused",
        label="x",
        timing_scope="event",
    )


def test_dirty_bytes_left_after_the_gap() -> None:
    """H100: half of its 50 MiB L2 (26,214,400 B) less 3.35 TB/s x 4 µs (13,400,000 B)."""
    assert SCRIPT.drained_capacity_bytes("h100_sxm", 0.0) == 26214400
    assert SCRIPT.drained_capacity_bytes("h100_sxm", 4e-6) == 26214400 - 13400000
    assert SCRIPT.drained_capacity_bytes("h100_sxm", 1e-3) == 0  # drained, never negative


def test_only_flushed_rows_of_a_timed_gpu_are_capped() -> None:
    flushed = _row("h100_sxm", '{"l2_dirty_bytes": 268435456}')
    plain = _row("h100_sxm", "{}")
    other = _row("a40", '{"l2_dirty_bytes": 268435456}')
    capped, same, untouched = SCRIPT.drained_rows([flushed, plain, other], {"h100_sxm": 4e-6})
    assert capped.op.attrs["l2_dirty_bytes"] == 26214400 - 13400000
    assert same == plain and untouched == other
    assert capped.time_s == flushed.time_s and capped.label == flushed.label
