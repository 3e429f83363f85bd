"""The ``roofline`` model: the roofline estimate for every op kind.

Equations: :mod:`opmodel.models.shared.roofline_estimate` and docs/models/roofline.md.
"""

from __future__ import annotations

from opmodel.core.enums import Engine, OpKind
from opmodel.core.op import LocalOp
from opmodel.core.profile import OpProfile
from opmodel.hardware.spec import HardwareSpec
from opmodel.models.registry import register_model
from opmodel.models.shared.arguments import check_predict_arguments
from opmodel.models.shared.roofline_estimate import RooflineDiagnostics, roofline_estimate

__all__ = ["RooflineDiagnostics", "RooflineModel"]

_IMPLEMENTATIONS = {
    Engine.TENSOR: "roofline/tensor",
    Engine.VECTOR: "roofline/vector",
    Engine.MEMORY: "roofline/memory",
    Engine.INTERCONNECT: "roofline/interconnect",
}
_ALL_KINDS: frozenset[OpKind] = frozenset(OpKind)


@register_model
class RooflineModel:
    """Roofline for all op kinds (registered as ``roofline``)."""

    name = "roofline"
    supported_kinds: frozenset[OpKind] = _ALL_KINDS

    def supports(self, op: LocalOp) -> bool:
        """Every op kind is supported."""
        return op.kind in self.supported_kinds

    def predict(self, op: LocalOp, hardware: HardwareSpec) -> OpProfile:
        """Predict ``op`` on ``hardware`` (docs/models/roofline.md has the equations)."""
        if type(op) is not LocalOp or type(hardware) is not HardwareSpec:
            check_predict_arguments(self.name, self.supported_kinds, op, hardware)
        return roofline_estimate(op, hardware, _IMPLEMENTATIONS)
