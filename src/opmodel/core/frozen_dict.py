"""``FrozenDict``: the read-only mapping of the package's frozen values (hardware specs,
profiles, energy breakdowns), which pickles and copies.

These values used ``types.MappingProxyType``, which cannot be pickled, so no spec, op or
profile could cross a process boundary (``multiprocessing``, Ray, Dask, a cache on disk):
``TypeError: cannot pickle 'mappingproxy' object``. A ``dict`` subclass whose mutating
methods raise keeps lookups at the speed of a dict (the C implementation serves them), pickles
as its items, and compares equal to a dict with the same items.
"""

from __future__ import annotations

from typing import Any, NoReturn, TypeVar

__all__ = ["FrozenDict"]

_K = TypeVar("_K")
_V = TypeVar("_V")


class FrozenDict(dict[_K, _V]):
    """A dict that cannot be changed after construction (mutating methods raise TypeError)."""

    __slots__ = ()

    def __reduce__(self) -> tuple[Any, ...]:
        # the default for a dict subclass rebuilds it item by item through __setitem__
        return (type(self), (dict(self),))

    def __copy__(self) -> FrozenDict[_K, _V]:
        return self

    def __deepcopy__(self, memo: dict[int, Any]) -> FrozenDict[_K, _V]:
        return type(self)({key: _deepcopy(value, memo) for key, value in self.items()})


def _deepcopy(value: Any, memo: dict[int, Any]) -> Any:
    import copy  # noqa: PLC0415 - deep copies are rare; keep the import off the start-up path

    return copy.deepcopy(value, memo)


def _immutable(self: FrozenDict[Any, Any], *_args: Any, **_kwargs: Any) -> NoReturn:
    msg = f"{type(self).__name__} is read-only"
    raise TypeError(msg)


for _name in (
    "__setitem__",
    "__delitem__",
    "__ior__",
    "clear",
    "pop",
    "popitem",
    "setdefault",
    "update",
):
    setattr(FrozenDict, _name, _immutable)  # set after the class: their signatures differ
del _name
