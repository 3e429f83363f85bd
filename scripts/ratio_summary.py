"""The summary the published-throughput comparisons print: count, MAPE and geometric mean of
predicted / published ratios (``python scripts/<name>.py`` puts this folder on ``sys.path``)."""

from __future__ import annotations

import math
from collections.abc import Sequence


def ratio_summary(ratios: Sequence[float]) -> tuple[int, float, float]:
    """(count, MAPE, geometric-mean ratio) of predicted / measured ``ratios``."""
    mape = sum(abs(r - 1) for r in ratios) / len(ratios)
    return len(ratios), mape, math.exp(sum(math.log(r) for r in ratios) / len(ratios))
