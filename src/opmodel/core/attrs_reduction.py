"""The attributes of a reduction (``OpKind.REDUCTION``) beside the warm-input ones."""

from __future__ import annotations

from opmodel.core.attr_spec import AttrSpec

__all__ = ["INDEX_FUNCTIONS", "REDUCTION", "REDUCTION_FUNCTIONS"]

INDEX_FUNCTIONS = ("argmax", "argmin")
"""Reductions that write each output's position (``torch.argmax``): int64, as torch returns."""

REDUCTION_FUNCTIONS = ("sum", "mean", "max", "min", *INDEX_FUNCTIONS)
"""What attr ``function`` accepts (default ``sum``)."""

REDUCTION = (
    AttrSpec(
        name="function",
        kind=str,
        choices=REDUCTION_FUNCTIONS,
        doc="reduction (argmax and argmin write int64 indices)",
    ),
    AttrSpec(name="dim", kind=tuple, doc="axes to reduce (torch's dim); default: trailing"),
)
