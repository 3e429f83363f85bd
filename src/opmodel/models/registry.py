"""Model registry: ``register_model`` (a class decorator), ``get_model`` and ``model_names``."""

from __future__ import annotations

import importlib
from collections.abc import Callable
from typing import TypeVar

from opmodel.core.errors import UnknownNameError, unknown_name_message
from opmodel.core.model import OpModel

__all__ = ["get_model", "model_names", "register_model"]

_T = TypeVar("_T")
_FACTORIES: dict[str, Callable[[], OpModel]] = {}
# Built-in models by name, imported on first use so that a prediction loads only its model.
_BUILTIN_MODULES = {
    "roofline": "opmodel.models.roofline",
    "extended_roofline": "opmodel.models.extended_roofline",
    "effective_roofline": "opmodel.models.effective_roofline",
}


def register_model(cls: type[_T]) -> type[_T]:
    """Register a model class under its ``name`` attribute; a duplicate name is an error."""
    if not isinstance(cls, type):
        raise TypeError(f"register_model: expected a model class (got {cls!r})")
    name = getattr(cls, "name", None)
    if not isinstance(name, str) or not name:
        msg = f"register_model: {cls.__name__} needs a non-empty string attribute 'name'"
        raise TypeError(msg)
    if name in _FACTORIES:
        msg = f"register_model: a model named '{name}' is already registered"
        raise ValueError(msg)
    _FACTORIES[name] = cls  # type: ignore[assignment]  # a class is a factory of its instances
    return cls


def _load_builtins() -> None:
    for module in _BUILTIN_MODULES.values():
        importlib.import_module(module)


def model_names() -> list[str]:
    """Names of every registered model, sorted."""
    _load_builtins()
    return sorted(_FACTORIES)


def get_model(name: str) -> OpModel:
    """A new instance of the model registered as ``name``.

    Raises :class:`~opmodel.core.errors.UnknownNameError` listing the valid names and the
    nearest one.
    """
    if isinstance(name, str) and name not in _FACTORIES and name in _BUILTIN_MODULES:
        importlib.import_module(_BUILTIN_MODULES[name])
    factory = _FACTORIES.get(name) if isinstance(name, str) else None
    if factory is None:
        _load_builtins()  # so that the error lists every model
        raise UnknownNameError(unknown_name_message("model", str(name), _FACTORIES))
    return factory()
