"""The one contract every performance model implements."""

from __future__ import annotations

from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

if TYPE_CHECKING:
    from opmodel.core.enums import OpKind
    from opmodel.core.op import LocalOp
    from opmodel.core.profile import OpProfile

__all__ = ["OpModel"]


@runtime_checkable
class OpModel(Protocol):
    """A performance model: ``predict(op, hardware) -> OpProfile``.

    ``supports(op)`` tells whether ``predict`` models the op; ``predict`` on an unsupported op
    raises :class:`~opmodel.core.errors.UnsupportedOpError` naming the model, the kind and the
    kinds it supports. A model never returns a silent zero.
    """

    name: str
    supported_kinds: frozenset[OpKind]

    def supports(self, op: LocalOp) -> bool:
        """True when ``predict`` models ``op``."""
        ...

    def predict(self, op: LocalOp, hardware: Any) -> OpProfile:
        """Predict latency, traffic, energy and diagnostics of ``op`` on ``hardware``."""
        ...
