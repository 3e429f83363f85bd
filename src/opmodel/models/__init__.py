"""Performance models (plugins). Reach them by name with :func:`get_model`."""

from opmodel.models.registry import get_model, model_names, register_model

__all__ = ["get_model", "model_names", "register_model"]
