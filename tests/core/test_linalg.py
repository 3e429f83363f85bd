"""opmodel.core.linalg: hand-derived solves and fits."""

from __future__ import annotations

import pytest

from opmodel.core.linalg import least_squares, solve


def test_solve_pivots_and_back_substitutes() -> None:
    # 0 x + 2 y = 4, 3 x + y = 5 needs a row swap: y = 2, x = 1
    assert solve([[0.0, 2.0], [3.0, 1.0]], [4.0, 5.0]) == pytest.approx([1.0, 2.0])


def test_least_squares_fits_a_line() -> None:
    # y = 2 x + 1 through (0, 1), (1, 3), (2, 5) and a point 1 above it at x = 3 (y = 8):
    # the least-squares line: slope (4 x 37 - 6 x 17) / (4 x 14 - 6^2) = 2.3, intercept 0.8
    rows = [[0.0, 1.0], [1.0, 1.0], [2.0, 1.0], [3.0, 1.0]]
    assert least_squares(rows, [1.0, 3.0, 5.0, 8.0]) == pytest.approx([2.3, 0.8])


def test_singular_systems_are_errors() -> None:
    with pytest.raises(ValueError, match="singular"):
        solve([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0])
    with pytest.raises(ValueError, match="singular"):
        least_squares([[1.0, 2.0], [2.0, 4.0]], [1.0, 2.0])
