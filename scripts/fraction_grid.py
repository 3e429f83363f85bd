"""The grid search the sustained-share fits use (``fit_published_sustained.py``'s HBM fraction,
``fit_published_tpu_sustained.py``'s MXU share; ``python scripts/<name>.py`` puts this folder
on ``sys.path``)."""

from __future__ import annotations

from collections.abc import Callable


def best_fraction(sse: Callable[[float], float]) -> float:
    """The share on a 0.001 grid in (0, 1] that minimises ``sse``: a 0.01 grid over 0.50-1.00,
    then 0.001 steps around its best."""
    coarse = min((i / 100 for i in range(50, 101)), key=sse)
    fine = (round(coarse + i / 1000, 3) for i in range(-10, 11))
    return min((f for f in fine if 0 < f <= 1), key=sse)
