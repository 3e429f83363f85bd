"""value_type: the generated constructor and make() behave like a frozen dataclass's __init__."""

from __future__ import annotations

import dataclasses

import pytest

from opmodel.core.values import FastValue, value_type


@value_type
class _Point(FastValue):
    x: float
    y: float = 2.0

    def __post_init__(self) -> None:
        if self.x < 0:
            raise ValueError("x must be >= 0")


def test_make_equals_the_constructor() -> None:
    assert _Point.make(x=1.0) == _Point(x=1.0) == _Point(x=1.0, y=2.0)
    assert _Point.make(x=1.0, y=3.0).y == 3.0
    assert repr(_Point(x=1.0)) == "_Point(x=1.0, y=2.0)"


def test_frozen_and_keyword_only() -> None:
    point = _Point(x=1.0)
    with pytest.raises(dataclasses.FrozenInstanceError):
        point.x = 2.0  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Point(1.0)  # type: ignore[misc]
    with pytest.raises(TypeError):
        _Point.make(y=1.0)
    with pytest.raises(TypeError):
        _Point.make(x=1.0, z=1.0)


def test_post_init_runs_in_both_paths() -> None:
    with pytest.raises(ValueError, match="x must be"):
        _Point(x=-1.0)
    with pytest.raises(ValueError, match="x must be"):
        _Point.make(x=-1.0)


def test_default_factory_is_refused() -> None:
    with pytest.raises(TypeError, match="default_factory"):

        @value_type
        class _Bad(FastValue):
            items: list[int] = dataclasses.field(default_factory=list)
