"""Dense linear algebra for a handful of unknowns, in plain Python (no NumPy in the core).

:func:`solve` is Gaussian elimination with partial pivoting; :func:`least_squares` solves the
normal equations with it, adequate for the few well-scaled columns the package fits: the energy
calibration's non-negative least squares (:mod:`opmodel.validation.nnls`) and the plane through
FlashAttention-2's counted loops (:mod:`opmodel.models.attention.counted`). Callers scale their
columns first.
"""

from __future__ import annotations

from collections.abc import Sequence

__all__ = ["least_squares", "solve"]


def solve(matrix: Sequence[Sequence[float]], rhs: Sequence[float]) -> list[float]:
    """``x`` with ``matrix x = rhs`` (square), by Gaussian elimination with partial pivoting;
    raises ValueError when the matrix is singular."""
    n = len(rhs)
    a = [[*row, rhs[i]] for i, row in enumerate(matrix)]
    for col in range(n):
        pivot = max(range(col, n), key=lambda r: abs(a[r][col]))
        if abs(a[pivot][col]) < 1e-14:
            msg = "singular system"
            raise ValueError(msg)
        a[col], a[pivot] = a[pivot], a[col]
        for r in range(col + 1, n):
            f = a[r][col] / a[col][col]
            for c in range(col, n + 1):
                a[r][c] -= f * a[col][c]
    x = [0.0] * n
    for r in range(n - 1, -1, -1):
        x[r] = (a[r][n] - sum(a[r][c] * x[c] for c in range(r + 1, n))) / a[r][r]
    return x


def least_squares(a: Sequence[Sequence[float]], b: Sequence[float]) -> list[float]:
    """The ``x`` minimising ``|a x - b|`` (rows of ``a`` are observations), from the normal
    equations; raises ValueError when the columns do not determine it."""
    n = len(a[0])
    gram = [[sum(row[i] * row[j] for row in a) for j in range(n)] for i in range(n)]
    rhs = [sum(row[i] * bi for row, bi in zip(a, b, strict=True)) for i in range(n)]
    return solve(gram, rhs)
