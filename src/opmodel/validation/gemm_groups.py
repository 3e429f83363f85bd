"""How ``validate-gemm-latency`` groups its held-out rows, and its comparison with the roofline.

Rows are grouped by hardware, by size class (:func:`~opmodel.validation.gemm_split.size_class`)
and by ``source:hardware``; the rows that carry a measured energy are grouped the same way for
the energy errors, and those that carry their fastest timed repeat (``time_min``) by whether
their median settled near it (:func:`~opmodel.validation.repeat_spread.spread_groups`, shared
with ``validate-ops``). With ``--compare-rooflines`` every GEMM
model's MAPE in each group is also given as its difference from the roofline's on the same
rows, in percentage points (:func:`mape_deltas`): negative where the model is closer to the
measurements.
"""

from __future__ import annotations

import math
from collections import defaultdict
from collections.abc import Iterable, Mapping, Sequence

from opmodel.validation.gemm_data import GemmRow
from opmodel.validation.gemm_split import size_class
from opmodel.validation.metrics import ErrorMetrics

__all__ = ["REFERENCE_MODEL", "held_groups", "mape_deltas"]

REFERENCE_MODEL = "roofline"
"""The model ``--compare-rooflines`` measures the GEMM models against."""


def held_groups(
    rows: Sequence[GemmRow], held: Iterable[int]
) -> tuple[dict[str, list[int]], dict[str, list[int]], dict[str, list[int]]]:
    """The rows ``held`` by hardware, by size class and by ``source:hardware``, keys sorted."""
    by_hw: dict[str, list[int]] = defaultdict(list)
    by_cls: dict[str, list[int]] = defaultdict(list)
    by_src: dict[str, list[int]] = defaultdict(list)
    for i in held:
        by_hw[rows[i].hardware].append(i)
        by_cls[size_class(rows[i]).value].append(i)
        by_src[f"{rows[i].source}:{rows[i].hardware}"].append(i)
    return dict(sorted(by_hw.items())), dict(sorted(by_cls.items())), dict(sorted(by_src.items()))


def mape_deltas(
    groups: Mapping[str, Mapping[str, ErrorMetrics]],
) -> dict[str, dict[str, float]]:
    """Per model other than the roofline, per group label: its MAPE minus the roofline's, in
    percentage points. ``groups`` maps each model to its metrics by group label; a group the
    roofline lacks, or an empty one (NaN MAPE), gets no delta. Empty without the roofline."""
    reference = groups.get(REFERENCE_MODEL)
    if reference is None:
        return {}
    out: dict[str, dict[str, float]] = {}
    for model, metrics in groups.items():
        if model == REFERENCE_MODEL:
            continue
        deltas = {}
        for label, m in metrics.items():
            ref = reference.get(label)
            if ref is not None and not (math.isnan(m.mape) or math.isnan(ref.mape)):
                deltas[label] = 100 * (m.mape - ref.mape)
        out[model] = deltas
    return out
