"""Non-negative least squares for a handful of coefficients (Lawson and Hanson, 1974).

``minimise |A x - b|^2 subject to x >= 0`` by the active-set method of Lawson and Hanson,
*Solving Least Squares Problems* (1974), ch. 23. Columns are scaled to unit norm first, since
energy features differ by many orders of magnitude (seconds, FLOPs, bytes). The inner
unconstrained solves use the normal equations by Gaussian elimination with partial pivoting
(:func:`opmodel.core.linalg.least_squares`), adequate for the few well-scaled columns of an
energy calibration.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from opmodel.core.linalg import least_squares

__all__ = ["nnls", "relative_offset"]


def _least_squares(
    a: Sequence[Sequence[float]], b: Sequence[float], cols: list[int]
) -> list[float]:
    return least_squares([[row[j] for j in cols] for row in a], b)


def _gradient(a: Sequence[Sequence[float]], b: Sequence[float], x: list[float]) -> list[float]:
    residual = [
        bi - sum(r * xi for r, xi in zip(row, x, strict=True)) for row, bi in zip(a, b, strict=True)
    ]
    return [sum(row[j] * res for row, res in zip(a, residual, strict=True)) for j in range(len(x))]


def nnls(
    a: Sequence[Sequence[float]], b: Sequence[float], max_iterations: int = 100
) -> list[float]:
    """The non-negative ``x`` minimising ``|a x - b|`` (rows of ``a`` are observations)."""
    if not a or len(a) != len(b):
        msg = "nnls: need as many right-hand values as rows (and at least one row)"
        raise ValueError(msg)
    n = len(a[0])
    norms = [math.sqrt(sum(row[j] ** 2 for row in a)) or 1.0 for j in range(n)]
    scaled = [[row[j] / norms[j] for j in range(n)] for row in a]
    x = [0.0] * n
    passive: list[int] = []
    tolerance = 1e-12 * max(1.0, math.sqrt(sum(v * v for v in b)))
    for _ in range(max_iterations):
        w = _gradient(scaled, b, x)
        candidates = [j for j in range(n) if j not in passive and w[j] > tolerance]
        if not candidates:
            break
        passive.append(max(candidates, key=lambda j: w[j]))
        while True:
            z = [0.0] * n
            for j, value in zip(passive, _least_squares(scaled, b, passive), strict=True):
                z[j] = value
            if all(z[j] > 0 for j in passive):
                x = z
                break
            alpha = min(x[j] / (x[j] - z[j]) for j in passive if z[j] <= 0)
            x = [xi + alpha * (zi - xi) for xi, zi in zip(x, z, strict=True)]
            passive = [j for j in passive if x[j] > 1e-15]
    return [x[j] / norms[j] for j in range(n)]


def relative_offset(
    predicted: Sequence[float], measured: Sequence[float], units_per_second: Sequence[float]
) -> float:
    """The non-negative offset ``x`` (in units of which ``units_per_second[i]`` make a second of
    row ``i``) minimising the squared relative errors ``sum(((p + x / f - m) / m)^2)``: closed
    form ``x = sum((m - p) / (f m^2)) / sum(1 / (f m)^2)``, clamped at 0 (0 without rows).

    The GEMM validation fits its fixed overhead in cycles with ``f`` the clock of each row;
    ``validate-ops`` fits its event-scope offset in seconds with ``f = 1``."""
    rows = zip(predicted, measured, units_per_second, strict=True)
    num = sum((m - p) / (f * m * m) for p, m, f in rows)
    den = sum(1 / (f * m) ** 2 for m, f in zip(measured, units_per_second, strict=True))
    return max(0.0, num / den) if den else 0.0
