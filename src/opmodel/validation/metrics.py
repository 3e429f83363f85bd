"""Error metrics of predictions against measurements."""

from __future__ import annotations

import math
import statistics
from collections.abc import Sequence
from dataclasses import dataclass

__all__ = ["ErrorMetrics", "error_metrics"]


@dataclass(frozen=True, slots=True, kw_only=True)
class ErrorMetrics:
    """Relative-error summary; APE = |predicted / measured - 1|."""

    count: int
    mape: float
    median_ape: float
    p90_ape: float
    geomean_ratio: float  # geometric mean of predicted / measured
    mean_signed_error: float  # mean of predicted / measured - 1


def error_metrics(predicted: Sequence[float], measured: Sequence[float]) -> ErrorMetrics:
    """Metrics over paired values (all measured > 0, predicted >= 0); NaN when there are none."""
    if not measured:
        nan = math.nan
        return ErrorMetrics(
            count=0, mape=nan, median_ape=nan, p90_ape=nan, geomean_ratio=nan, mean_signed_error=nan
        )
    ratios = [p / m for p, m in zip(predicted, measured, strict=True)]
    apes = sorted(abs(r - 1) for r in ratios)
    p90 = apes[min(len(apes) - 1, math.ceil(0.9 * len(apes)) - 1)]
    return ErrorMetrics(
        count=len(ratios),
        mape=statistics.fmean(apes),
        median_ape=statistics.median(apes),
        p90_ape=p90,
        geomean_ratio=math.exp(statistics.fmean(math.log(max(r, 1e-300)) for r in ratios)),
        mean_signed_error=statistics.fmean(r - 1 for r in ratios),
    )
