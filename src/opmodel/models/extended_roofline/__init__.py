"""The ``extended_roofline`` model (K-stage pipeline timeline per CTA wave)."""

from opmodel.models.extended_roofline.diagnostics import (
    Bottleneck,
    ExtendedRooflineDiagnostics,
    Overlaps,
    Utilization,
)
from opmodel.models.extended_roofline.model import ExtendedRooflineModel
from opmodel.models.extended_roofline.timeline import StageLimiter, WaveTimeline

__all__ = [
    "Bottleneck",
    "ExtendedRooflineDiagnostics",
    "ExtendedRooflineModel",
    "Overlaps",
    "StageLimiter",
    "Utilization",
    "WaveTimeline",
]
