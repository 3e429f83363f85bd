"""Measured rows whose timed repeats did not settle, for every validator that reads them.

``opmodel measure`` writes each case's median time (``time``) and its fastest timed repeat
(``time_min``). A row whose median exceeds its fastest repeat by more than
:data:`UNSETTLED_SPREAD` did not settle (clock ramps, a host stall, a neighbour on the GPU);
``validate-gemm-latency`` and ``validate-ops`` report such rows apart, as ``repeats
unsettled``, and keep them in every other figure.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from typing import Protocol

__all__ = ["UNSETTLED_SPREAD", "SpreadRow", "spread_groups"]

UNSETTLED_SPREAD = 1.3
"""A row whose median time exceeds its fastest repeat by more than this did not settle: in this
project's H200 GEMM file (30 repeats a row) no row falls between 1.26 and 1.37, and the 13
above it run at 1.4-3.8 (docs/validation.md, "GEMM latency")."""


class SpreadRow(Protocol):
    """A measured row that may carry its repeat spread (median over fastest; None without)."""

    @property
    def repeat_spread(self) -> float | None: ...


def spread_groups(rows: Sequence[SpreadRow], held: Iterable[int]) -> dict[str, list[int]]:
    """The ``held`` rows that carry a repeat spread, as ``repeats settled`` and ``repeats
    unsettled`` (above :data:`UNSETTLED_SPREAD`); empty when none is unsettled."""
    spread = {i: rows[i].repeat_spread for i in held}
    unsettled = [i for i, s in spread.items() if s is not None and s > UNSETTLED_SPREAD]
    if not unsettled:
        return {}
    settled = [i for i, s in spread.items() if s is not None and s <= UNSETTLED_SPREAD]
    return {"repeats settled": settled, "repeats unsettled": unsettled}
