"""The ``effective_roofline`` model (phase-aware per-wave GEMM model, kernel selection)."""

from opmodel.models.effective_roofline.diagnostics import (
    EffectiveRooflineDiagnostics,
    Resource,
    ResourceCycles,
)
from opmodel.models.effective_roofline.model import EffectiveRooflineModel
from opmodel.models.effective_roofline.systolic import SystolicDiagnostics

__all__ = [
    "EffectiveRooflineDiagnostics",
    "EffectiveRooflineModel",
    "Resource",
    "ResourceCycles",
    "SystolicDiagnostics",
]
