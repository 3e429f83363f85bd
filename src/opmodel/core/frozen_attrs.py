"""An op's attribute values: the value types attributes take and the immutable, hashable
mapping :class:`~opmodel.core.op.LocalOp` keeps them in (the schema they are checked against
is :mod:`opmodel.core.attrs`)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

__all__ = ["AttrValue", "FrozenAttrs", "plain_attrs"]

AttrValue = bool | int | float | str | tuple[int, ...]
"""An attribute's value; a list of integers (``group_sizes``) is kept as a tuple."""


_SCALARS = (bool, int, float, str)


def _plain(value: object) -> object:
    """``value`` with numpy's (or torch's) scalars as Python scalars and arrays as lists: what
    their ``tolist()`` gives. Python values, and anything else, are returned as they are (the
    schema then says what is wrong with them)."""
    kind = type(value)
    if kind in _SCALARS:
        return value
    if kind is list or kind is tuple:
        items: list[object] | tuple[object, ...] = value  # type: ignore[assignment]
        if all(type(item) is int for item in items):
            return value
        return [_plain(item) for item in items]
    listed = getattr(value, "tolist", None)
    if callable(listed) and not isinstance(value, Mapping):
        converted = listed()
        if type(converted) in (*_SCALARS, list):
            return _plain(converted)
    return value


def plain_attrs(attrs: Mapping[str, object]) -> Mapping[str, object]:
    """``attrs`` with numpy integers, booleans and arrays (``group_sizes`` from
    ``np.bincount``, say) as Python ints, booleans and lists, so that attributes computed with
    numpy need no conversion; a mapping of Python values is returned unchanged."""
    if all(type(value) in _SCALARS for value in attrs.values()):
        return attrs
    return {name: _plain(value) for name, value in attrs.items()}


class FrozenAttrs(Mapping[str, AttrValue]):
    """An immutable, hashable mapping of attribute names to values."""

    __slots__ = ("_data", "_hash")

    def __init__(self, data: Mapping[str, AttrValue] | None = None) -> None:
        self._data: dict[str, AttrValue] = dict(data or {})
        if list in map(type, self._data.values()):  # a list of integers is frozen to a tuple
            self._data = {
                name: tuple(value) if isinstance(value, list) else value
                for name, value in self._data.items()
            }
        self._hash: int | None = None

    def __getitem__(self, key: str) -> AttrValue:
        return self._data[key]

    def get(self, key: str, default: Any = None) -> Any:
        """The value of ``key``, or ``default`` (the dict's own lookup: Mapping's generic
        ``get`` raises and catches a KeyError for every absent key)."""
        return self._data.get(key, default)

    def __contains__(self, key: object) -> bool:
        return key in self._data

    def __iter__(self) -> Iterator[str]:
        return iter(self._data)

    def __len__(self) -> int:
        return len(self._data)

    def __hash__(self) -> int:
        if self._hash is None:
            self._hash = hash(frozenset(self._data.items()))
        return self._hash

    def __eq__(self, other: object) -> bool:
        if other is self:
            return True
        if isinstance(other, FrozenAttrs):
            return self._data == other._data
        if isinstance(other, Mapping):
            return self._data == dict(other)
        return NotImplemented

    def __repr__(self) -> str:
        return f"FrozenAttrs({self._data!r})"
