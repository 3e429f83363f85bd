"""Declared training splits of GEMM validation rows that a shipped power-limited clock is
fitted on.

A config's sustained calibration may carry ``power_limited_clock_hz``, the SM clock its board
holds under dense tensor work (opmodel.hardware.sustained_calibration). Where a published
benchmark of the board gives it (``scripts/fit_published_sustained.py``) no validation row
takes part. Where the only measurements of a GPU are a validation table, the clock is fitted
on a split of that table declared here: the rows of one source on one GPU whose work
``batch x m x n x k`` is at least a given size, long enough for the board to reach its power
limit. ``scripts/fit_gemm_table_clock.py`` fits it and ``validate-gemm-latency`` holds those
rows out of every figure (reported as the shipped clock's training rows), so the fit and the
report agree on it.

- ``mi355x``: OpenXLA's gfx950 (MI350-class) rows, ``batch x m x n x k >= 2^37`` (the five
  largest shapes of its table, 275-550 GFLOP, 195-440 us, bf16 and fp16: 10 rows). Their
  throughput, 1.2-1.4 PFLOP/s, is about half of what the datasheet's 2.4 GHz allows
  (docs/validation.md, "The MI355X (gfx950)").
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from opmodel.core.frozen_dict import FrozenDict
from opmodel.validation.gemm_data import GemmRow

__all__ = ["CLOCK_SPLITS", "ClockSplit", "clock_training_rows"]


@dataclass(frozen=True, slots=True)
class ClockSplit:
    """The rows of ``source`` on ``hardware`` with ``batch x m x n x k >= min_work``."""

    hardware: str
    source: str
    min_work: int
    description: str

    def contains(self, row: GemmRow) -> bool:
        """Whether ``row`` trains the shipped clock of :attr:`hardware`."""
        work = row.batch * row.m * row.n * row.k
        return row.hardware == self.hardware and row.source == self.source and work >= self.min_work


CLOCK_SPLITS: Mapping[str, ClockSplit] = FrozenDict(
    {
        "mi355x": ClockSplit(
            "mi355x",
            "xla",
            2**37,
            "the OpenXLA gfx950 rows of batch x m x n x k >= 2^37 (data/gemm/xla/xla_mi355x.csv)",
        )
    }
)


def clock_training_rows(rows: Sequence[GemmRow]) -> dict[str, list[int]]:
    """Per hardware, the indices of ``rows`` that its shipped power-limited clock was fitted
    on (empty where no split is declared)."""
    found: dict[str, list[int]] = {}
    for i, row in enumerate(rows):
        split = CLOCK_SPLITS.get(row.hardware)
        if split is not None and split.contains(row):
            found.setdefault(row.hardware, []).append(i)
    return found
