"""``value_type``: frozen, keyword-only dataclasses with a fast constructor, for hot results.

Result objects are built millions of times per sweep. A frozen dataclass's generated
``__init__`` assigns each field through ``object.__setattr__`` to get past the frozen guard.
Storing into the instance ``__dict__`` directly does the same job in about half the
instructions (callgrind: 7.4k vs 13.6k instructions for a six-field instance, call included,
against 9.1k through slot descriptors); that is also why these types are
not slotted (DESIGN.md asks for slots; the measured constructor cost decided otherwise for the
types built on every ``predict``). Everything else (``fields()``, ``replace()``, ``repr``,
``==``, hashing, the frozen guard, ``__post_init__``) is the dataclass's own.

Calling a class with keyword arguments also builds and unpacks a kwargs dict on CPython 3.11;
each value type therefore gets a static ``make(**fields)`` with the constructor's exact
signature and checks, which hot paths use instead (4.7k vs 7.5k instructions for six fields).
"""

from __future__ import annotations

import dataclasses
from typing import Any, Self, TypeVar, dataclass_transform

__all__ = ["FastValue", "state_without_cache", "value_type"]

_T = TypeVar("_T")


class FastValue:
    """Base of :func:`value_type` classes; declares the generated ``make`` for type checkers."""

    __slots__ = ()

    @classmethod
    def make(cls, **fields: Any) -> Self:
        """Build an instance like the constructor (replaced per class by ``value_type``)."""
        raise NotImplementedError  # pragma: no cover - value_type installs the real one


@dataclass_transform(
    frozen_default=True, kw_only_default=True, field_specifiers=(dataclasses.field,)
)
def value_type(cls: type[_T]) -> type[_T]:
    """Decorate ``cls`` as a frozen, keyword-only dataclass with a fast ``__init__``.

    ``cls`` should derive from :class:`FastValue` so that type checkers know ``make``. Fields
    may have plain defaults but not a ``default_factory``.
    """
    made: Any = dataclasses.dataclass(frozen=True, kw_only=True, init=False)(cls)
    fields = [f for f in dataclasses.fields(made) if f.init]
    if any(f.default_factory is not dataclasses.MISSING for f in fields):
        msg = f"value_type: {cls.__name__} uses default_factory, which make() does not support"
        raise TypeError(msg)
    namespace = _constructor_namespace(made, fields)
    source = _constructor_source(fields, namespace)
    exec(source, namespace)  # generated from field names only, as dataclasses itself does
    init = namespace["__init__"]
    init.__qualname__ = f"{made.__qualname__}.__init__"
    made.__init__ = init
    make = namespace["make"]
    make.__qualname__ = f"{made.__qualname__}.make"
    make.__doc__ = "Build an instance like the constructor, without the cost of calling a class."
    made.make = staticmethod(make)
    return made  # type: ignore[no-any-return]


def _constructor_namespace(made: Any, fields: list[dataclasses.Field[Any]]) -> dict[str, Any]:
    namespace: dict[str, Any] = {
        "_post": getattr(made, "__post_init__", None),
        "_new": object.__new__,
        "_cls": made,
    }
    for index, f in enumerate(fields):
        if f.default is not dataclasses.MISSING:
            namespace[f"_default{index}"] = f.default
    return namespace


def _constructor_source(fields: list[dataclasses.Field[Any]], namespace: dict[str, Any]) -> str:
    """Source of ``__init__(self, *, ...)`` and ``make(*, ...)``: dict stores, then post-init."""
    params = [
        f.name if f.default is dataclasses.MISSING else f"{f.name}=_default{index}"
        for index, f in enumerate(fields)
    ]
    stores = [f"    d_[{f.name!r}] = {f.name}" for f in fields]
    post = ["    _post(self)"] if namespace["_post"] is not None else []
    signature = f"(*, {', '.join(params)})" if params else "()"
    return "\n".join(
        [
            f"def __init__(self, {signature[1:]}:",
            "    d_ = self.__dict__",
            *stores,
            *post,
            f"def make{signature}:",
            "    self = _new(_cls)",
            "    d_ = self.__dict__",
            *stores,
            *post,
            "    return self",
        ]
    )


def state_without_cache(value: Any) -> list[Any]:
    """The fields of the slotted, frozen dataclass ``value`` in order, for ``__getstate__``,
    with its ``derived_cache`` memo emptied: a pickled op or spec carries its definition, not
    what a model derived from it, which the unpickling process rebuilds on first use."""
    return [
        {} if f.name == "derived_cache" else getattr(value, f.name)
        for f in dataclasses.fields(value)
    ]
